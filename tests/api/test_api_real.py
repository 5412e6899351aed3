"""The local API with the real shipped models on a small knowledge base: the real OpenAI client,
streaming and not, a cited answer whose offsets point at the words, a document holding
instructions that changes nothing, and a refusal."""

from __future__ import annotations

import shutil

import pytest

openai = pytest.importorskip("openai")
pytestmark = [pytest.mark.slow, pytest.mark.llm]


@pytest.fixture
def real_server(tmp_path, real_settings):
    from api_helpers import INJECTED

    from desktop_kb.api.server import ServerThread
    from desktop_kb.api.tokens import TokenStore
    from desktop_kb.cli.demo import sample_docs
    from desktop_kb.library.kb import Library

    docs = tmp_path / "docs"
    shutil.copytree(sample_docs(), docs)
    (docs / "vendor-note.md").write_text(INJECTED, encoding="utf-8")
    lib = Library.open(real_settings)
    lib.ingest("demo", [docs])
    server = ServerThread(lib, real_settings.data_dir, "127.0.0.1", 0)
    server.start()
    _, token = TokenStore(real_settings.data_dir).create("real")
    yield openai.OpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key=token, max_retries=0, timeout=600), lib, token
    server.stop()
    lib.close()


def test_real_models_answer_with_citations_through_the_openai_client(real_server):
    client, lib, token = real_server
    reply = client.chat.completions.create(
        model="kb:demo", messages=[{"role": "user", "content": "How long do I have to upload travel receipts?"}])
    text = reply.choices[0].message.content
    extra = reply.model_extra["desktop_kb"]
    assert extra["status"] == "answered", extra
    assert "30" in text and "HACKED" not in text and token not in text
    cite = next(c for c in extra["citations"] if c["file"].endswith("travel-policy.md"))
    markdown = lib.document_markdown(cite["kb"], cite["doc_id"])
    assert any("30 days" in markdown[s["start"]:s["end"]] == s["text"] for s in cite["sentences"]), cite

    stream = client.chat.completions.create(
        model="kb:demo", stream=True,
        messages=[{"role": "user", "content": "Who won the football world cup in 1954?"}])
    chunks = list(stream)
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.model_extra["desktop_kb"]["status"] in ("refused", "clarify"), last.model_extra["desktop_kb"]
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == last.model_extra["desktop_kb"]["refusal"]["reason"]
