"""training/retrieval_set.py: retrieval sets from training files (files the test writes)."""

from __future__ import annotations

import json
from pathlib import Path

from training.retrieval_set import build_set


def _squad(path: Path, articles: list[tuple[str, list[tuple[str, list[str]]]]]) -> None:
    data = [{"title": t, "paragraphs": [{"context": c, "qas": [{"id": f"{t}-{p}-{k}", "question": q, "answers": []}
                                                            for k, q in enumerate(qs)]}
                                        for p, (c, qs) in enumerate(paras)]} for t, paras in articles]
    path.write_text(json.dumps({"version": "test", "data": data}, ensure_ascii=False), encoding="utf-8")


def test_english_questions_are_relevant_to_their_paragraphs_chinese_translation(tmp_path: Path) -> None:
    _squad(tmp_path / "chinesesquad_zh.json", [
        ("氧", [("氧是一种化学元素。", ["氧是什么？"]), ("氧气由两个原子组成。", ["氧气由什么组成？"])]),
        ("地质学", [("地质学研究地球。", ["地质学研究什么？"])]),  # a held-out article
    ])
    _squad(tmp_path / "squad2_testhalf_en_unlabelled.json", [
        ("Oxygen", [("Oxygen is a chemical element.", ["What is oxygen?"]),
                    ("Dioxygen is made of two atoms.", ["What is dioxygen made of?", "How many atoms?"])]),
        ("Geology", [("Geology studies the Earth.", ["What does geology study?"])]),
    ])
    for name in ("drcd_test.json", "cmrc2018_trial.json"):
        _squad(tmp_path / name, [])
    corpus, queries, rel = build_set(tmp_path, "en-zh", "train")
    assert set(corpus) == {"chinesesquad_zh-0-0", "chinesesquad_zh-0-1", "chinesesquad_zh-1-0"}  # Chinese only
    by_text = {queries[q]: rel[q] for q in queries}
    assert by_text == {"What is oxygen?": "chinesesquad_zh-0-0", "What is dioxygen made of?": "chinesesquad_zh-0-1",
                       "How many atoms?": "chinesesquad_zh-0-1"}  # Geology is held out
    _, held, held_rel = build_set(tmp_path, "en-zh", "heldout")
    assert list(held.values()) == ["What does geology study?"] and list(held_rel.values()) == ["chinesesquad_zh-1-0"]
    _, zh, _ = build_set(tmp_path, "zh", "train")
    assert set(zh.values()) == {"氧是什么？", "氧气由什么组成？"}
