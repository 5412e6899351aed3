"""``desktop-kb doctor``: one JSON document with the computer's facts, the models' states and a
verdict; with the real shipped LLM, speeds that yield "answers here take about N s"."""

from __future__ import annotations

import json
import re

import pytest

from desktop_kb.cli import main
from desktop_kb.library.doctor import answer_seconds


def test_doctor_without_speeds_prints_one_json_document(tmp_path, capsys):
    assert main(["--data-dir", str(tmp_path / "d"), "doctor", "--no-speed", "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)  # exactly one document on stdout; progress on stderr
    assert "doctor: system" in err
    assert report["system"]["cores"] >= 1 and report["system"]["cpu"]
    assert report["system"]["ram_gib"] is None or report["system"]["ram_gib"] > 0
    assert report["folders"]["data_free_gib"] > 0
    roles = {m["role"]: m["state"] for m in report["models"]}
    assert {"embedder", "reranker", "llm"} <= set(roles) and roles["reranker"] == "off"
    assert report["api"]["port"] == 8765 and report["api"]["enabled"] is False
    assert report["llm"] == {} and "not measured" in report["verdict"]


def test_the_verdict_follows_the_speeds():
    assert answer_seconds(100, 10) == pytest.approx(28.0)
    assert answer_seconds(50, 5) > answer_seconds(100, 10)


@pytest.mark.slow
@pytest.mark.llm
def test_doctor_measures_the_shipped_model_in_under_a_minute(real_settings, capsys):
    from desktop_kb.library.doctor import run_doctor

    report = run_doctor(real_settings)
    llm = report.llm
    assert llm["prefill_tokens_per_s"] > 1 and llm["decode_tokens_per_s"] > 0.5 and llm["prompt_tokens"] >= 700
    assert report.embedder["chunks_per_s"] > 0
    assert re.match(r"Answers here take about \d+ s", report.verdict)
