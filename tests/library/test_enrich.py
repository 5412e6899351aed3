"""Enrichment (desktop_kb/library/enrich.py): summaries, keywords, FAQ points; resumable, re-done only
for changed documents. The LLM is scripted (plumbing); the store, BM25 and ingest are real."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.progress import CancelToken

DOCS = {
    "invoices.md": "# Invoices\n\nInvoices must be paid within 30 days of receipt.\n",
    "travel.md": "# Travel\n\nHotels are reimbursed up to 180 euros per night.\n",
    "leave.md": "# Leave\n\nFull-time employees receive 25 days of paid leave per year.\n",
}


class EnrichLLM:
    """Answers enrichment prompts with a FAQ taken from the passage (one good, one unsupported)."""

    id = "test/enrich-llm"

    def __init__(self, fail_on: str = "") -> None:
        self.calls: list[str] = []
        self.fail_on = fail_on

    def chat(self, messages, *, max_tokens=512, temperature=0.0, json_schema=None, on_token=None, cancel=None):
        prompt = messages[-1]["content"]
        self.calls.append(prompt)
        if self.fail_on and self.fail_on in prompt:
            raise KeyboardInterrupt  # as a kill between two documents
        if "Invoices" in prompt:
            faq = [{"question": "What is the payment deadline?", "answer": "within 30 days of receipt", "passage": 1},
                   {"question": "How late may invoices be paid?", "answer": "within 90 days", "passage": 1}]
        else:
            faq = []
        return json.dumps({"summary": "A short policy note.", "keywords": ["policy", "rules"], "faq": faq})


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    for name, text in DOCS.items():
        (d / name).write_text(text, encoding="utf-8")
    return d


def test_faq_point_finds_its_source_chunk_for_a_question_worded_differently(settings, docs):
    llm = EnrichLLM()
    with Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=llm) as lib:
        lib.ingest("kb", [docs])
        before = lib.search("payment deadline", kbs=["kb"])
        report = lib.enrich("kb")
        hits = lib.search("payment deadline", kbs=["kb"])
        info = lib.enrichments("kb")
        chunks = lib.document_chunks("kb", lib.doc_id_of("kb", docs / "invoices.md"))
    assert len(report.enriched) == 3 and report.faq_points == 1 and not report.failed
    assert not before or "invoices.md" not in before[0].chunk.path  # the chunk alone says "paid", not "payment"
    assert hits[0].chunk.path.endswith("invoices.md") and hits[0].chunk.text.startswith("Invoices must be paid")
    assert len({h.chunk.chunk_id for h in hits}) == len(hits)  # the FAQ point and its chunk are one hit
    invoice = next(v for v in info.values() if v["faq"])
    # the unsupported FAQ answer (90 days) failed the citation checks and was dropped
    assert [f["answer"] for f in invoice["faq"]] == ["within 30 days of receipt"]
    assert invoice["summary"] == "A short policy note." and invoice["keywords"] == ["policy", "rules"]
    assert len(chunks) == 1  # FAQ points are not chunks of the document


def test_only_new_or_changed_documents_are_enriched_again(settings, docs):
    llm = EnrichLLM()
    with Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=llm) as lib:
        lib.ingest("kb", [docs])
        lib.enrich("kb")
        assert len(llm.calls) == 3
        again = lib.enrich("kb")
        assert len(llm.calls) == 3 and len(again.skipped) == 3 and not again.enriched  # unchanged: never
        (docs / "travel.md").write_text("# Travel\n\nHotels are reimbursed up to 200 euros per night.\n",
                                        encoding="utf-8")
        lib.ingest("kb", [docs])
        changed = lib.enrich("kb")
        ids = set(lib.enrichments("kb"))
        current = {r.doc_id for r in lib.documents("kb")}
    assert len(llm.calls) == 4 and "200 euros" in llm.calls[-1] and len(changed.enriched) == 1
    assert ids == current  # the old version's row is gone


def test_cancel_stops_between_documents(settings, docs):
    cancel = CancelToken()
    llm = EnrichLLM()
    seen: list[tuple[int, int]] = []

    def progress(done, total, eta):
        seen.append((done, total))
        if done == 1:
            cancel.cancel()

    with Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=llm) as lib:
        lib.ingest("kb", [docs])
        report = lib.enrich("kb", progress=progress, cancel=cancel)
    assert report.cancelled and len(report.enriched) == 1 and len(llm.calls) == 1 and seen[0] == (0, 3)


CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    sys.path[:0] = {paths!r}
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import Settings

    class Slow:
        id = "test/slow"
        n = 0
        def chat(self, messages, **kw):
            Slow.n += 1
            if Slow.n == 2:
                print("second", flush=True)
                time.sleep(60)  # killed here
            return json.dumps({{"summary": "s", "keywords": ["k"], "faq": []}})

    with Library.open(Settings(data_dir=Path({data!r})), embedder=HashEmbedder(), reranker=None, generator=Slow()) as lib:
        lib.enrich("kb")
""")


def test_enrichment_resumes_after_sigkill_without_redoing_finished_documents(settings, docs):
    with Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=EnrichLLM()) as lib:
        lib.ingest("kb", [docs])
    root = Path(__file__).resolve().parents[2]
    script = CHILD.format(paths=[str(root)], data=str(settings.data_dir))
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "second"
        time.sleep(0.2)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    llm = EnrichLLM()
    with Library.open(settings, embedder=HashEmbedder(), reranker=None, generator=llm) as lib:
        report = lib.enrich("kb")
        assert len(lib.enrichments("kb")) == 3
    assert len(report.skipped) == 1 and len(report.enriched) == 2 and len(llm.calls) == 2
