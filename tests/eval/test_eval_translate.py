"""The query-translation cache (done once per query, usable later without the LLM) and the fusion verdict."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_kb.errors import ModelNotInstalled
from desktop_kb.eval.retrieval import fusion_verdict
from desktop_kb.eval.translate import TranslationCache, clean_translation, query_language, translate_queries


class Translator:
    id = "test/translator"

    def __init__(self) -> None:
        self.calls = 0

    def chat(self, messages, *, max_tokens=512, temperature=0.0, json_schema=None, on_token=None, cancel=None):
        self.calls += 1
        assert max_tokens == 64 and temperature == 0
        return f'Translation: "EN {messages[-1]["content"].split(chr(10), 1)[1]}"\nextra line'


def test_translations_are_cached_by_id_and_text(tmp_path: Path) -> None:
    path = tmp_path / "translations-en.json"
    queries = {"q1": "锣鼓经是什么？", "q2": "战国史模式主打哪两个模式？"}
    gen = Translator()
    done, missing, why = translate_queries(queries, TranslationCache(path, "en"), lambda: gen)
    assert done == {"q1": "EN 锣鼓经是什么？", "q2": "EN 战国史模式主打哪两个模式？"} and not missing and not why
    assert gen.calls == 2
    # a second run needs no LLM at all
    done2, missing2, _ = translate_queries(queries, TranslationCache(path, "en"), None)
    assert done2 == done and not missing2
    # an edited query text is translated again
    gen2 = Translator()
    translate_queries({"q1": "锣鼓经是什么东西？"}, TranslationCache(path, "en"), lambda: gen2)
    assert gen2.calls == 1
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["target"] == "en" and len(stored["items"]) == 3
    # translations made with an older prompt are made again
    for item in stored["items"].values():
        item["prompt"] = 1
    path.write_text(json.dumps(stored), encoding="utf-8")
    assert TranslationCache(path, "en").get("q2", queries["q2"]) is None


def test_missing_llm_keeps_cached_translations(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    cache = TranslationCache(path, "en")
    cache.put("q1", "一", "one", "m")
    cache.save()

    def no_llm():
        raise ModelNotInstalled("LLM model file not found: x.gguf")

    done, missing, why = translate_queries({"q1": "一", "q2": "二"}, TranslationCache(path, "en"), no_llm)
    assert done == {"q1": "one"} and missing == ["q2"] and "not found" in why


def test_clean_translation_and_language() -> None:
    assert clean_translation('  "What is Luogu Jing?"  ') == "What is Luogu Jing?"
    assert clean_translation("English: Who developed it?\n(Note: ...)") == "Who developed it?"
    assert query_language(["锣鼓经是什么？", "What?", "谁？"]) == "zh"
    assert query_language(["What is it?", "Who?"]) == "en"


def test_fusion_verdict() -> None:
    ok = fusion_verdict({"dense": {"ndcg@10": 0.70}, "sparse": {"ndcg@10": 0.66}, "hybrid": {"ndcg@10": 0.72},
                         "hybrid-equal": {"ndcg@10": 0.69}})
    assert ok.startswith("fusion check: OK") and "equal-weight RRF 0.6900" in ok
    bad = fusion_verdict({"dense": {"ndcg@10": 0.70}, "sparse": {"ndcg@10": 0.30}, "hybrid": {"ndcg@10": 0.60}})
    assert bad.startswith("fusion check: FAILS") and "dense" in bad
    assert fusion_verdict({"hybrid": {"ndcg@10": 0.5}}) == ""
