"""training/gpu_pack.py: the built examples travel to a GPU machine within the device tool's carry
limit, and a run there finds them as the cache it looks for (plumbing: two hand-made examples)."""

from __future__ import annotations

import json

import pytest

from training import data, gpu_pack


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A cache with the train split's examples and both span files, as on the CPU machine."""
    cache = tmp_path / "cache"
    cache.mkdir()
    wikiqa, aligned = cache / "wikiqa-spans.jsonl", cache / "aligned-spans.jsonl"
    wikiqa.write_text(json.dumps({"key": "Q1|The Moon orbits Earth.", "question": "What orbits Earth?",
                                  "sentence": "The Moon orbits Earth.", "span": "The Moon", "score": 1.0}) + "\n")
    aligned.write_text(json.dumps({"qid": "e1", "question": "What gas?", "sentence": "Plants release oxygen.",
                                   "span": "oxygen", "score": 1.0, "sim": 0.9}) + "\n")
    monkeypatch.setattr(data, "WIKIQA_SPANS", wikiqa)
    monkeypatch.setattr(data, "ALIGNED_SPANS", aligned)
    rows = [data.Example("verify", "What gas?", "oxygen", "(Plants) Plants release oxygen.", 1, "short_right", "en",
                         "squad_en_aligned"),
            data.Example("rerank", "What gas?", "", "(Rocks) Rocks are old.", 0, "rerank_easy", "en", "x")]
    data.write_examples(data.cache_file(cache, "train"), rows)
    return cache, rows


def test_the_pack_is_unpacked_into_the_cache_a_run_reads(here, tmp_path):
    cache, rows = here
    written = gpu_pack.pack(tmp_path / "gpu", cache)
    assert {p.name for p in written} == {"wikiqa-spans.jsonl", "aligned-spans.jsonl",
                                         data.cache_file(cache, "train").name + ".gz"}
    # the GPU machine: no examples, no span files, no ../shared
    for p in cache.iterdir():
        p.unlink()
    (wanted,) = gpu_pack.unpack(tmp_path / "gpu", cache)
    assert wanted == data.cache_file(cache, "train") and wanted.is_file()
    assert data.build("train", cache=cache) == rows  # read from the cache, nothing built


def test_a_pack_from_another_data_state_is_refused_with_the_way_out(here, tmp_path):
    cache, _ = here
    gpu_pack.pack(tmp_path / "gpu", cache)
    (tmp_path / "gpu" / "aligned-spans.jsonl").write_text(json.dumps(
        {"qid": "e2", "question": "What?", "sentence": "Ice melts.", "span": "Ice", "score": 1.0, "sim": 0.9}) + "\n")
    with pytest.raises(SystemExit, match="pack it again"):
        gpu_pack.unpack(tmp_path / "gpu", cache)
    with pytest.raises(SystemExit, match="no pack"):
        gpu_pack.unpack(tmp_path / "nothing", cache)


def test_a_pack_over_the_carry_limit_is_refused(here, tmp_path, monkeypatch):
    cache, _ = here
    monkeypatch.setattr(gpu_pack, "LIMIT", 10)
    with pytest.raises(SystemExit, match="over the"):
        gpu_pack.pack(tmp_path / "gpu", cache)
