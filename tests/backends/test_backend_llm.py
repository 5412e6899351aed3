"""llama.cpp generation with the real shipped 0.5B GGUF (assembled into a temp folder)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from desktop_kb.errors import Cancelled, GenerationError, ModelError, ModelNotInstalled
from desktop_kb.progress import CancelToken
from desktop_kb.protocols import Generator

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python missing")
MODEL_ID = "qwen2.5-coder-0.5b-instruct-q4_k_m"


@pytest.fixture(scope="module")
def generator(tmp_path_factory: pytest.TempPathFactory):
    from desktop_kb.backends.llm_llamacpp import LlamaCppGenerator
    from desktop_kb.models.assemble import assemble_gguf
    from desktop_kb.models.registry import SHIPPED_LLMS

    shipped = SHIPPED_LLMS[MODEL_ID]
    if importlib.util.find_spec(f"{shipped.package_prefix}_part1") is None:
        pytest.skip("the 0.5B model packages (desktop-kb[small-llm]) are not installed")
    path = assemble_gguf(
        shipped.package_prefix,
        shipped.n_parts,
        tmp_path_factory.mktemp("llm") / shipped.filename,
        expected_size=shipped.size,
        expected_sha256=shipped.sha256,
    )
    gen = LlamaCppGenerator(path, MODEL_ID, n_ctx=2048, n_threads=2)
    yield gen
    gen.close()


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_streams_tokens_and_returns_their_concatenation(generator) -> None:
    assert isinstance(generator, Generator)
    pieces: list[str] = []
    out = generator.chat(
        [{"role": "user", "content": "Name three colours, separated by commas."}],
        max_tokens=24,
        on_token=pieces.append,
    )
    assert len(pieces) > 1
    assert "".join(pieces) == out
    assert out.strip()
    assert "<|im_end|>" not in out and "<|im_start|>" not in out  # the chat template's stop token works


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_cancel_stops_within_a_few_tokens(generator) -> None:
    cancel = CancelToken()
    seen: list[str] = []

    def on_token(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 2:
            cancel.cancel()

    with pytest.raises(Cancelled):
        generator.chat(
            [{"role": "user", "content": "Count from 1 to 100, one number per line."}],
            max_tokens=300,
            on_token=on_token,
            cancel=cancel,
        )
    assert 2 <= len(seen) <= 5
    # The generator is usable again after a cancel.
    assert generator.chat([{"role": "user", "content": "Say OK."}], max_tokens=4)


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_cancelled_before_start_generates_nothing(generator) -> None:
    cancel = CancelToken()
    cancel.cancel()
    seen: list[str] = []
    with pytest.raises(Cancelled):
        generator.chat([{"role": "user", "content": "Hi"}], on_token=seen.append, cancel=cancel)
    assert seen == []


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_json_schema_output_validates(generator) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = {
        "type": "object",
        "properties": {
            # maxLength bounds each string in the grammar: small models otherwise can loop inside a
            # string until max_tokens and return cut-off JSON.
            "queries": {
                "type": "array",
                "items": {"type": "string", "maxLength": 40},
                "minItems": 1,
                "maxItems": 2,
            },
            "language": {"type": "string", "enum": ["en", "zh"]},
        },
        "required": ["queries", "language"],
        "additionalProperties": False,
    }
    out = generator.chat(
        [
            {"role": "system", "content": "Rewrite the user's question as search queries. Reply in JSON."},
            {"role": "user", "content": "如何安装 llama.cpp？"},
        ],
        max_tokens=120,
        json_schema=schema,
    )
    data = json.loads(out)
    jsonschema.validate(data, schema)


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_json_cut_off_by_max_tokens_is_a_generation_error(generator) -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    with pytest.raises(GenerationError, match="cut off"):
        generator.chat(
            [{"role": "user", "content": "Write a long story about a dragon, as JSON."}],
            max_tokens=6,
            json_schema=schema,
        )


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_a_prompt_longer_than_the_context_is_refused_before_any_work(generator, monkeypatch) -> None:
    long = "The committee met again and discussed the budget. " * 250  # ~2,500 tokens > n_ctx 2048
    for template in ("model's", None):  # ours, and llama-cpp-python rendering the chat itself
        if template is None:
            monkeypatch.setattr(generator, "_template", None)
        with pytest.raises(GenerationError, match="too long for the LLM's context") as info:
            generator.chat([{"role": "user", "content": long}], max_tokens=8)
        assert "llm_context" in info.value.hint
    monkeypatch.undo()
    assert generator.chat([{"role": "user", "content": "Say OK."}], max_tokens=4)  # still usable


SYSTEM_A = "You answer questions about colours. Reply in a few words. " * 4
SYSTEM_B = "You answer questions about animals. Reply in a few words. " * 4


def _ask(system: str, question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": question}]


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_prompt_tokens_are_counted_as_llama_cpp_counts_them(generator) -> None:
    messages = _ask(SYSTEM_A, "什么颜色是天空的颜色？ And grass?")
    n = generator.count_tokens(messages)
    # llama-cpp-python's own chat path (which the backend no longer uses) on the same model
    reply = generator._llm.create_chat_completion(messages=messages, max_tokens=1)
    assert n == reply["usage"]["prompt_tokens"]
    assert n > generator.count_tokens(_ask(SYSTEM_A, "Sky?"))


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_system_prompt_state_is_reused_and_answers_do_not_change(generator) -> None:
    generator.close()  # a fresh load: nothing cached
    first = generator.chat(_ask(SYSTEM_A, "What colour is the sky?"), max_tokens=12)
    assert len(generator.prefix_cache) == 1 and generator.prefix_cache.hits == 0
    generator.chat(_ask(SYSTEM_B, "What does a cat say?"), max_tokens=12)  # another prompt in between
    again = generator.chat(_ask(SYSTEM_A, "What colour is the sky?"), max_tokens=12)
    assert generator.prefix_cache.hits == 1  # A's state was loaded, not prefilled again
    assert again == first  # greedy decoding from the restored state gives the same answer
    generator.close()
    assert len(generator.prefix_cache) == 0
    assert generator.chat(_ask(SYSTEM_A, "What colour is the sky?"), max_tokens=12) == first


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_warm_prefills_system_prompts_so_the_first_question_reuses_them(generator) -> None:
    from desktop_kb.protocols import Warmable
    from desktop_kb.query.warm import warm_up

    assert isinstance(generator, Warmable)
    generator.close()
    cold = generator.chat(_ask(SYSTEM_A, "What colour is the sky?"), max_tokens=12)
    generator.close()  # as the app opens: nothing loaded
    hits = generator.prefix_cache.hits  # counted over the generator's life
    assert generator.warm([SYSTEM_A, SYSTEM_B]) > 0 and generator.loaded
    assert len(generator.prefix_cache) == 2 and generator.prefix_cache.hits == hits
    assert generator.warm([SYSTEM_A, SYSTEM_B]) == 0  # both states kept: nothing prefilled again
    hits = generator.prefix_cache.hits
    first = generator.chat(_ask(SYSTEM_A, "What colour is the sky?"), max_tokens=12)
    assert generator.prefix_cache.hits == hits + 1  # the first question loaded A's state
    assert first == cold  # and answers as a cold start does
    generator.close()
    assert warm_up(generator, judge=True) > 0 and len(generator.prefix_cache) == 2  # answer + judge


@pytest.mark.llm
@pytest.mark.slow
@needs_llama
def test_yes_no_weighs_the_first_reply_token_without_disturbing_answers(generator) -> None:
    from desktop_kb.protocols import YesNoScorer

    assert isinstance(generator, YesNoScorer)
    generator.close()
    before = generator.chat(_ask(SYSTEM_A, "What colour is the sky?"), max_tokens=12)
    yes = _ask(SYSTEM_A, "Text: The sky is blue.\nDoes the text say the sky is blue? Reply Yes or No.")
    no = _ask(SYSTEM_A, "Text: The sky is blue.\nDoes the text say the sky is green? Reply Yes or No.")
    s_yes, s_no = generator.yes_no(yes), generator.yes_no(no)
    assert s_yes > s_no
    assert s_yes > 0
    # the same prompt weighs about the same after other prompts ran (from the prefix state, or
    # the context still holding it: llama.cpp's sums differ in the last digits with the batch split)
    generator.chat(_ask(SYSTEM_B, "What does a cat say?"), max_tokens=8)
    assert generator.yes_no(no) == pytest.approx(s_no, abs=0.1)
    assert generator.yes_no(no) == pytest.approx(s_no, abs=0.1)
    # and an answer after a yes/no prefill is the one it was before
    assert generator.chat(_ask(SYSTEM_A, "What colour is the sky?"), max_tokens=12) == before
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(Cancelled):
        generator.yes_no(yes, cancel=cancel)


def test_missing_file_is_model_not_installed(tmp_path: Path) -> None:
    from desktop_kb.backends.llm_llamacpp import LlamaCppGenerator

    gen = LlamaCppGenerator(tmp_path / "absent.gguf", "x")
    with pytest.raises(ModelNotInstalled, match=r"absent\.gguf") as info:
        gen.chat([{"role": "user", "content": "hi"}])
    assert "models install" in info.value.hint


def test_non_gguf_file_is_a_model_error(tmp_path: Path) -> None:
    from desktop_kb.backends.llm_llamacpp import LlamaCppGenerator

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"<html>not a model</html>")
    with pytest.raises(ModelError, match="not a GGUF"):
        LlamaCppGenerator(bad, "x").load()
