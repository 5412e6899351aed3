"""The CLI over the real core, with the deterministic hash embedder configured in settings.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_kb.cli import main


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "settings.json").write_text(json.dumps(
        {"models": {"embedder": {"backend": "hash", "id": "test/hash-embedder", "dim": 64},
                    "reranker": {"backend": "none"}}}))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# 财务\n\n## 发票\n\n增值税专用发票的开具期限为三十天。\n", encoding="utf-8")
    (docs / "b.md").write_text("# Travel\n\nHotels up to 180 euros per night.\n", encoding="utf-8")
    return d, docs


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_ingest_search_kb_commands(data, capsys):
    d, docs = data
    assert main(["--data-dir", str(d), "ingest", str(docs), "--kb", "k1", "--tags", "fin,2024", "--json"]) == 0
    report = _json(capsys)
    assert report["kb"] == "k1" and len(report["added"]) == 2 and report["failed"] == [] and report["chunks"] == 2
    assert main(["--data-dir", str(d), "search", "发票", "--kb", "k1", "--json"]) == 0
    hits = _json(capsys)
    assert hits[0]["heading_path"] == ["财务", "发票"] and hits[0]["path"].endswith("a.md")
    assert main(["--data-dir", str(d), "search", "hotels", "--filter", "tag=other", "--json"]) == 0
    assert _json(capsys) == []  # the filter is applied, never ignored
    assert main(["--data-dir", str(d), "kb", "stats", "k1", "--json"]) == 0
    stats = _json(capsys)
    assert stats["documents"] == 2 and stats["embedder"] == "test/hash-embedder"
    assert main(["--data-dir", str(d), "kb", "list", "--json"]) == 0
    assert [k["name"] for k in _json(capsys)] == ["k1"]
    assert main(["--data-dir", str(d), "kb", "docs", "k1", "--json"]) == 0
    listed = _json(capsys)
    assert [Path(r["path"]).name for r in listed] == ["a.md", "b.md"] and listed[0]["tags"] == ["fin", "2024"]
    assert main(["--data-dir", str(d), "kb", "docs", "k1"]) == 0
    assert capsys.readouterr().out.count("passages") == 2
    assert main(["--data-dir", str(d), "kb", "rename", "k1", "k2"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(d), "kb", "delete", "k2", "--json"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(d), "kb", "stats", "k2"]) == 4  # store error: not found
    assert "no knowledge base named" in capsys.readouterr().err


def test_usage_errors_have_messages_and_codes(data, capsys):
    d, _ = data
    assert main(["--data-dir", str(d), "search", "x", "--filter", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "hint:" in err
    assert main(["--data-dir", str(d), "ingest", str(d / "nowhere"), "--kb", "bad/name"]) == 2
    for top_k in ("0", "-1", "99999999999999999999", "many"):  # a usage error, not a slice or a traceback
        with pytest.raises(SystemExit) as stop:
            main(["--data-dir", str(d), "search", "x", "--top-k", top_k])
        assert stop.value.code == 2
    assert "--top-k" in capsys.readouterr().err
    for command in (["search", " "], ["ask", ""]):  # nothing to look for: said at once, no model run
        assert main(["--data-dir", str(d), *command]) == 2
        assert "is empty" in capsys.readouterr().err


def test_core_never_imports_qt():
    script = Path(__file__).resolve().parents[2] / "scripts" / "check_qt_free.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    code = "import sys, desktop_kb.library.kb, desktop_kb.cli, desktop_kb.query.pipeline; " \
           "print(any(m.startswith('PySide6') for m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.stdout.strip() == "False"


def test_the_cli_writes_nothing_outside_its_data_folder(tmp_path):
    """A clean system's home showed onnxruntime's device id (~/.cache/Microsoft/…) after an OCR
    ingest; the CLI runs with an empty HOME here, reads a scanned page (onnxruntime) and must
    leave that HOME empty."""
    import os
    import subprocess
    import sys

    from PIL import Image, ImageDraw, ImageFont

    docs, home, data = tmp_path / "docs", tmp_path / "home", tmp_path / "data"
    docs.mkdir()
    home.mkdir()
    img = Image.new("L", (1200, 400), 255)
    ImageDraw.Draw(img).text((80, 150), "The spare keys are in room B12.", font=ImageFont.load_default(size=40), fill=0)
    img.save(docs / "scan.png")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ORT_"))} | {"HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "desktop_kb", "--data-dir", str(data), "ingest", str(docs),
                           "--kb", "k", "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["ocr"]  # the page was read by OCR (onnxruntime ran)
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []


def test_piped_output_with_a_code_page_that_cannot_write_chinese(data):
    """Windows gives a pipe the ANSI code page (cp1252): `desktop-kb search … | more` crashed with
    UnicodeEncodeError on a Chinese heading. The CLI writes UTF-8 there instead; a stream that can
    write Chinese (here GBK, the user's choice) keeps its encoding, with "?" for what it lacks (the
    heading separator "›" crashed it too)."""
    import os

    d, docs = data
    assert main(["--data-dir", str(d), "ingest", str(docs), "--kb", "k1", "--json"]) == 0
    for encoding, expect in (("cp1252", "utf-8"), ("gbk", "gbk")):
        env = {**os.environ, "PYTHONIOENCODING": encoding, "PYTHONUTF8": "0"}
        proc = subprocess.run([sys.executable, "-m", "desktop_kb", "--data-dir", str(d), "search", "发票",
                               "--kb", "k1"], capture_output=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
        out = proc.stdout.decode(expect)
        assert "增值税专用发票" in out and ("财务 › 发票" if expect == "utf-8" else "财务 ? 发票") in out


def test_names_every_system_can_hold_and_no_empty_base_from_a_failed_ingest(data, capsys):
    d, docs = data
    for name in ("CON", "nul.txt", "x.", "lpt1"):
        assert main(["--data-dir", str(d), "kb", "create", name]) == 2, name
    assert "Windows" in capsys.readouterr().err
    assert main(["--data-dir", str(d), "kb", "create", "main"]) == 0
    assert main(["--data-dir", str(d), "kb", "create", "MAIN"]) == 2
    assert "letter case" in capsys.readouterr().err
    assert main(["--data-dir", str(d), "ingest", str(docs / "nowhere"), "--kb", "typo"]) == 1
    capsys.readouterr()
    assert main(["--data-dir", str(d), "kb", "list", "--json"]) == 0
    assert [k["name"] for k in json.loads(capsys.readouterr().out)] == ["main"]  # no empty "typo"


def test_output_piped_into_a_reader_that_stops_is_no_traceback(data):
    d, docs = data
    assert main(["--data-dir", str(d), "ingest", str(docs), "--kb", "k"]) == 0
    script = ("import sys; from desktop_kb.cli import main; sys.exit(main(sys.argv[1:]))")
    for _ in range(3):  # the pipe closes at a moment that varies
        proc = subprocess.run(f'"{sys.executable}" -c "{script}" --data-dir "{d}" kb docs k | head -c 1',
                              shell=True, capture_output=True, text=True, timeout=120)
        assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_a_data_folder_that_is_a_file_or_a_bad_settings_version_is_said_not_a_traceback(tmp_path, capsys):
    afile = tmp_path / "data"
    afile.write_text("not a folder")
    assert main(["--data-dir", str(afile), "kb", "list"]) == 1
    err = capsys.readouterr().err
    assert "Not a directory" in err and "--data-dir" in err and "Traceback" not in err
    folder = tmp_path / "d2"
    folder.mkdir()
    for version in ('"abc"', "null", "2.5"):
        (folder / "settings.json").write_text(json.dumps({"version": json.loads(version)}))
        assert main(["--data-dir", str(folder), "kb", "list"]) == 2
        assert "whole number" in capsys.readouterr().err
    for debounce in ("0", "-1", "inf", "nan"):
        with pytest.raises(SystemExit) as stop:
            main(["--data-dir", str(folder), "watch", "--debounce", debounce])
        assert stop.value.code == 2


def test_kb_rename_json_is_one_json_document(data, capsys):
    d, docs = data
    assert main(["--data-dir", str(d), "ingest", str(docs), "--kb", "k"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(d), "kb", "rename", "k", "k2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"renamed": "k", "to": "k2"}
