"""One contract, every VectorStore: the embedded engine and qdrant-client (server API, in memory)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from desktop_kb.errors import KnowledgeBaseInUse, StoreError
from desktop_kb.protocols import SearchFilter, SparseVec, StoredPoint
from desktop_kb.store.edge import EdgeStore
from desktop_kb.store.server import ServerStore


def _vec(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _point(doc: str, i: int, dense: np.ndarray, terms: dict[int, float], **payload: object) -> StoredPoint:
    items = sorted(terms.items())
    base = {"doc_id": doc, "path": f"/docs/{doc}.md", "folder": "/docs", "tags": [], "owner": "",
            "mtime": 1000 + i, "ingested_at": 2000 + i, "text": f"{doc}-{i}"}
    base.update(payload)
    return StoredPoint(str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc}/{i}")), dense,
                       SparseVec(tuple(k for k, _ in items), tuple(v for _, v in items)), base)


@pytest.fixture(params=["edge", "server"])
def store(request, tmp_path):
    s = EdgeStore(tmp_path / "kbs") if request.param == "edge" else ServerStore(":memory:")
    s.create_collection("kb1", 3)
    s.upsert("kb1", [
        _point("a", 0, _vec(1, 0, 0), {1: 1.0, 2: 0.5}, tags=["finance"], owner="alice"),
        _point("a", 1, _vec(0.9, 0.1, 0), {2: 1.0}, tags=["finance", "2024"]),
        _point("b", 0, _vec(0, 1, 0), {3: 1.0}, tags=["hr"], mtime=5000),
        _point("c", 0, _vec(0, 0, 1), {1: 0.2, 4: 1.0}),
    ])
    yield s
    s.close()


def test_count_and_scroll(store):
    assert store.count("kb1") == 4
    texts = sorted(r.payload["text"] for r in store.scroll("kb1"))
    assert texts == ["a-0", "a-1", "b-0", "c-0"]


def test_dense_and_sparse_legs(store):
    dense, sparse = store.search_both("kb1", _vec(1, 0, 0), SparseVec((4,), (1.0,)), None, 10)
    assert dense[0].payload["text"] == "a-0"
    assert dense[0].score == pytest.approx(1.0, abs=1e-4)
    assert [r.payload["text"] for r in sparse] == ["c-0"]


def test_filters_apply_in_every_leg(store):
    flt = SearchFilter(tags=("finance",))
    dense, sparse = store.search_both("kb1", _vec(0, 0, 1), SparseVec((1, 4), (1.0, 1.0)), flt, 10)
    assert {r.payload["doc_id"] for r in dense} == {"a"}
    assert {r.payload["doc_id"] for r in sparse} == {"a"}
    assert store.count("kb1", SearchFilter(owners=("alice",))) == 1
    assert store.count("kb1", SearchFilter(mtime_from=4000)) == 1
    assert store.count("kb1", SearchFilter(ingested_from=2001, ingested_to=2001)) == 1
    assert store.count("kb1", SearchFilter(paths=("/docs/b.md",))) == 1


def test_delete_keeps_excluded_doc_and_refuses_empty_filter(store):
    store.delete("kb1", SearchFilter(paths=("/docs/a.md",)), exclude_doc_ids=("a",))
    assert store.count("kb1") == 4  # the current version of a.md is kept
    store.delete("kb1", SearchFilter(paths=("/docs/a.md",)))
    assert store.count("kb1") == 2
    with pytest.raises(StoreError):
        store.delete("kb1", SearchFilter())


def test_drop_collection(store):
    store.drop_collection("kb1")
    assert not store.has_collection("kb1")


def test_edge_store_survives_reopen(tmp_path):
    s = EdgeStore(tmp_path)
    s.create_collection("kb", 3)
    s.upsert("kb", [_point("a", 0, _vec(1, 0, 0), {1: 1.0})])
    s.close()
    s2 = EdgeStore(tmp_path)
    assert s2.has_collection("kb")
    assert s2.count("kb") == 1
    s2.close()


def test_edge_store_second_process_gets_in_use(tmp_path):
    import subprocess
    import sys
    import textwrap

    s = EdgeStore(tmp_path)
    s.create_collection("kb", 3)
    code = textwrap.dedent(f"""
        from desktop_kb.store.edge import EdgeStore
        from desktop_kb.errors import KnowledgeBaseInUse
        try:
            EdgeStore({str(tmp_path)!r}).count("kb")
        except KnowledgeBaseInUse as e:
            print("IN_USE", e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    s.close()
    assert "IN_USE" in out.stdout, out.stderr
    assert KnowledgeBaseInUse.__name__  # the error class is public


def test_set_payload_changes_only_matching_points_and_refuses_an_empty_filter(store):
    store.set_payload("kb1", SearchFilter(paths=("/docs/a.md",)), {"tags": ["audit"], "owner": "bob"})
    by_text = {r.payload["text"]: r.payload for r in store.scroll("kb1")}
    assert by_text["a-0"]["tags"] == ["audit"] and by_text["a-1"]["owner"] == "bob"
    assert by_text["b-0"]["tags"] == ["hr"] and by_text["a-0"]["doc_id"] == "a"  # other keys kept
    dense, _ = store.search_both("kb1", _vec(0, 0, 1), None, SearchFilter(tags=("audit",)), 10)
    assert {r.payload["doc_id"] for r in dense} == {"a"}
    with pytest.raises(StoreError, match="empty filter"):
        store.set_payload("kb1", SearchFilter(), {"tags": []})


def test_points_come_back_with_their_vectors(store):
    pts = {p.payload["text"]: p for p in store.points("kb1", batch=3)}
    assert sorted(pts) == ["a-0", "a-1", "b-0", "c-0"]
    assert np.allclose(pts["b-0"].dense, _vec(0, 1, 0)) and pts["a-0"].sparse.indices == (1, 2)
    assert pts["a-0"].sparse.values == pytest.approx((1.0, 0.5)) and pts["a-0"].payload["owner"] == "alice"


def test_edge_index_killed_while_being_made_is_made_again(tmp_path):
    """A creation killed half-way leaves its folder aside (``shard.creating``), or, from an older
    release, a shard folder without its write-ahead log: no index, and the next creation works."""
    root = tmp_path / "kbs"
    (root / "kb1" / "shard.creating").mkdir(parents=True)
    (root / "kb1" / "shard.creating" / "partial").write_bytes(b"x")
    (root / "kb2" / "shard").mkdir(parents=True)
    s = EdgeStore(root)
    assert not s.has_collection("kb1") and not s.has_collection("kb2")
    for name in ("kb1", "kb2"):
        s.create_collection(name, 3)
        s.upsert(name, [_point("a", 0, _vec(1, 0, 0), {1: 1.0})])
        assert s.count(name) == 1
    assert not (root / "kb1" / "shard.creating").exists()
    s.close()
