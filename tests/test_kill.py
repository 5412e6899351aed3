"""SIGKILL at random moments of ingest, re-embed, import and enrichment (a bounded number of
points each, seeded): after every kill the knowledge base holds together (every document of the
manifest has its passages, no passage lacks a document: ``kb check`` finds nothing but an
interrupted write, which the next run finishes), search works, and the rerun ends equal to an
uninterrupted run. The child process uses the real store and converters with a slowed-down
deterministic embedder (and a scripted LLM for enrichment), so the kills land mid-work."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.library.kb import Library
from desktop_kb.settings import Settings

pytestmark = pytest.mark.slow
# more moments, other moments: DESKTOP_KB_KILLS=20 DESKTOP_KB_KILL_SEED=7 pytest tests/test_kill.py
KILLS_PER_OPERATION = int(os.environ.get("DESKTOP_KB_KILLS", "3"))
SEED = os.environ.get("DESKTOP_KB_KILL_SEED", "20261203")

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import Settings

    class Slow(HashEmbedder):
        def embed_passages(self, texts):
            time.sleep(0.03)
            return super().embed_passages(texts)

    class Writer:  # a scripted LLM: one FAQ question a document, taken from its first passage
        id = "test/writer"
        def chat(self, messages, *, max_tokens=512, temperature=0.0, json_schema=None, on_token=None, cancel=None):
            time.sleep(0.05)
            return json.dumps({"summary": "A file.", "keywords": ["file"],
                               "faq": [{"question": "What does the first paragraph say?", "answer": "Paragraph 0",
                                        "passage": 1}]})

    op, data, arg = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    s = Settings(data_dir=data)
    s = s.replace(models=s.models.__class__(embed_batch=1))
    with Library.open(s, embedder=Slow(), reranker=None, generator=Writer()) as lib:
        print("start", flush=True)
        if op == "ingest":
            lib.ingest("kb", [Path(arg)])
        elif op == "reembed":
            lib.reembed("kb")
        elif op == "import":
            lib.import_kb(Path(arg), as_name="copy", replace=True)
        elif op == "enrich":
            lib.enrich("kb")
    print("done", flush=True)
""")


def _docs(root: Path) -> Path:
    d = root / "docs"
    d.mkdir()
    for i in range(6):
        paras = "\n\n".join(f"Paragraph {j} of file {i}: the budget line {j} is {i * 100 + j} euros." for j in range(12))
        (d / f"f{i}.md").write_text(f"# File {i}\n\n{paras}\n", encoding="utf-8")
    return d


def _settings(data: Path) -> Settings:
    s = Settings(data_dir=data)
    return s.replace(models=s.models.__class__(embed_batch=1))


def _run(op: str, data: Path, arg: str, kill_after: float | None = None) -> tuple[bool, float]:
    """Run ``op`` in a child; with ``kill_after``, SIGKILL it that many seconds after its work
    starts (after its imports). Returns whether it finished, and how long the work took."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, op, str(data), arg], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "start", proc.stderr.read() if proc.stderr else ""
    t0 = time.monotonic()
    if kill_after is not None:
        time.sleep(kill_after)
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    if kill_after is None:
        assert proc.returncode == 0, err[-3000:]
    return "done" in out, time.monotonic() - t0


def _state(data: Path, kb: str) -> dict:
    """What a user relies on: every passage (id → path, text, offsets, tags, kind), enrichment."""
    with Library.open(_settings(data), embedder=HashEmbedder(), reranker=None) as lib:
        health = lib.check_kb(kb)
        # holds together: at most a write (or a re-embedding) the next run finishes
        assert health.codes() <= {"pending", "reembed"}, health.to_json()
        hits = lib.search("budget line", kbs=[kb])  # search works, and finds what is there
        assert bool(hits) == bool(health.documents)
        # killed before a new base's index was made, or a re-embedding's: no index, no documents
        indexed = lib.store.has_collection(kb)
        assert indexed or not health.documents
        passages = {r.id: (r.payload["path"], r.payload.get("kind", ""), r.payload["text"], r.payload["start"])
                    for r in (lib.store.scroll(kb) if indexed else ())}
        return {"passages": passages, "enriched": sorted(lib.enrichments(kb))}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A knowledge base of 6 files (ingested, enriched) and its archive, built once."""
    root = tmp_path_factory.mktemp("kill")
    docs = _docs(root)
    data = root / "base"
    _run("ingest", data, str(docs))
    _run("enrich", data, "")
    with Library.open(_settings(data), embedder=HashEmbedder(), reranker=None) as lib:
        lib.export_kb("kb", root / "kb.zip")
    return root, docs, data


def _copy(base_data: Path, to: Path) -> Path:
    shutil.copytree(base_data, to, ignore=shutil.ignore_patterns("*.lock"))
    return to


@pytest.mark.parametrize("op", ["ingest", "reembed", "import", "enrich"])
def test_a_kill_at_any_moment_loses_nothing_and_the_rerun_completes(base, tmp_path, op):
    root, docs, data = base
    kb = "copy" if op == "import" else "kb"
    arg = {"ingest": str(docs), "import": str(root / "kb.zip")}.get(op, "")

    def start(where: Path) -> Path:
        if op == "ingest":
            return where  # from nothing
        d = _copy(data, where)
        if op == "enrich":
            with Library.open(_settings(d), embedder=HashEmbedder(), reranker=None) as lib:
                m = lib.manifest("kb")
                m.drop_enrichment(list(m.enrichments()))
        return d

    reference_dir = start(tmp_path / "reference")
    _done, took = _run(op, reference_dir, arg)  # the work alone, without the child's start-up
    reference = _state(reference_dir, kb)
    assert reference["passages"]

    rng = random.Random(f"{SEED}-{op}")
    killed = 0
    for k in range(KILLS_PER_OPERATION):
        moment = rng.uniform(0.02, max(0.05, took * 0.8))
        for attempt in range(4):  # the work finished before the kill landed (a quieter machine
            where = start(tmp_path / f"kill{k}-{attempt}")  # than the reference's): earlier
            finished, _took = _run(op, where, arg, kill_after=moment / 2 ** attempt)
            if not finished:
                break
        if finished:
            continue
        killed += 1
        if op == "import":
            with Library.open(_settings(where), embedder=HashEmbedder(), reranker=None) as lib:
                assert "copy" not in lib.list_kbs()  # no half-imported base
        elif (where / "kbs" / kb / "manifest.sqlite").exists():
            _state(where, kb)  # holds together right after the kill
        _run(op, where, arg)  # the rerun completes
        assert _state(where, kb) == reference
    assert killed >= 1, "no kill landed mid-work"


_KILL_RESET = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from desktop_kb.backends.embed_hash import HashEmbedder
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import Settings

    def die(*args, **kwargs):
        os._exit(9)  # as a SIGKILL would: no cleanup runs
    s = Settings(data_dir=Path(sys.argv[1]))
    s = s.replace(models=s.models.__class__(embed_batch=1))
    with Library.open(s, embedder=HashEmbedder(), reranker=None) as lib:
        if sys.argv[2] == "rows":  # the rows dropped, the old index not yet
            lib.store.drop_collection = die
        else:  # the old index dropped, the new one not yet made
            lib.create_kb = die
        lib.reembed("kb")
""")


@pytest.mark.parametrize("step", ["rows", "index"])
def test_a_reembedding_killed_inside_its_reset_holds_together(base, tmp_path, step):
    """The two moments a kill at random rarely hits: between the manifest's rows and the old index
    dropped, and before the new index is made. The base is empty then (nothing searched, nothing
    reported but the stopped re-embedding) and the next re-embedding ends as an uninterrupted one."""
    _root, _docs, data = base
    reference_dir = _copy(data, tmp_path / "reference")
    _run("reembed", reference_dir, "")
    where = _copy(data, tmp_path / "killed")
    proc = subprocess.run([sys.executable, "-c", _KILL_RESET, str(where), step], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 9, proc.stderr[-2000:]
    _state(where, "kb")  # holds together, and search finds what the manifest has: nothing
    with Library.open(_settings(where), embedder=HashEmbedder(), reranker=None) as lib:
        assert lib.check_kb("kb").codes() == {"reembed"} and not lib.manifest("kb").documents()
        assert lib.search("budget line", kbs=["kb"]) == []  # the old passages are not searched
    _run("reembed", where, "")
    assert _state(where, "kb") == _state(reference_dir, "kb")
