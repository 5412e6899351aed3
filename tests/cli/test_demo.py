"""The README's main job, run as the README runs it: ``./run demo`` on a fresh data folder with the
real shipped models must index the sample folder and give both cited answers. Also: the sample
folder is package data (inside the wheel), the demo fails loudly without it, and every script of
``benchmarks/`` and ``packaging/`` still starts (``--help``) after a package move."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from demo_output import assert_demo_output

from desktop_kb.cli import demo as demo_cli
from desktop_kb.cli import main

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"


def _setup_models_dir() -> Path:
    """The models folder ``./run setup`` fills: the user data folder's, shared by every data folder."""
    from desktop_kb.settings import Settings, default_data_dir

    return Settings(data_dir=default_data_dir()).models_dir


@pytest.mark.slow
@pytest.mark.llm
def test_run_demo_as_the_readme_runs_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DESKTOP_KB_MODELS_DIR")  # this test's own, set by conftest: not what ./run reads
    if not VENV_PYTHON.exists():
        pytest.skip("no .venv: ./run setup (or ./run test) makes it")
    data = tmp_path / "fresh-data"
    # a fresh data folder; the models where ./run setup assembled them (as for any --data-dir)
    env = dict(os.environ, DESKTOP_KB_DATA_DIR=str(data), DESKTOP_KB_MODELS_DIR=str(_setup_models_dir()),
               PYTHONUNBUFFERED="1")
    proc = subprocess.run(["bash", str(ROOT / "run"), "demo"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1800)
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-3000:]}\n{proc.stderr[-3000:]}"
    assert f"Data folder: {data}" in out
    assert_demo_output(out)


def test_sample_folder_is_found_from_the_package_root() -> None:
    import desktop_kb

    folder = demo_cli.sample_docs()
    assert folder == Path(desktop_kb.__file__).resolve().parent / "resources" / "sample_docs"
    assert {p.name for p in folder.iterdir()} >= {"travel-policy.md", "员工手册.md", "it-faq.txt"}


def test_demo_fails_loudly_without_its_sample_folder(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(demo_cli, "sample_docs", lambda: tmp_path / "gone")
    code = main(["--data-dir", str(tmp_path / "data"), "demo"])
    err = capsys.readouterr().err
    assert code == 1
    assert "sample folder is missing or empty" in err and str(tmp_path / "gone") in err
    assert "hint:" in err


def test_demo_fails_loudly_when_its_ingest_fails(tmp_path, monkeypatch, capsys) -> None:
    broken = tmp_path / "samples"
    broken.mkdir()
    (broken / "report.pdf").write_bytes(b"%PDF-1.4 this is no PDF")
    monkeypatch.setattr(demo_cli, "sample_docs", lambda: broken)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "settings.json").write_text(json.dumps(
        {"models": {"embedder": {"backend": "hash", "id": "test/hash-embedder", "dim": 64},
                    "reranker": {"backend": "none"}}}))
    code = main(["--data-dir", str(tmp_path / "data"), "demo"])
    err = capsys.readouterr().err
    assert code == 1
    assert "could not index its sample folder" in err and "report.pdf" in err


def test_a_refused_draft_is_marked_and_the_checked_result_printed(capsys) -> None:
    from desktop_kb.cli.ask import DraftStream, print_result
    from desktop_kb.types import Answer

    stream = DraftStream(indent="   ")
    for tok in ("住宿费用", "每晚最多300元。[1]"):
        stream.on_token(tok)
    stream.end()
    print_result(Answer(question="q", text="我无法给出引用可核实的答案。", status="refused"), label="A: [refused]")
    out = capsys.readouterr().out
    assert out == "   (draft, checking its citations…) 住宿费用每晚最多300元。[1]\nA: [refused] 我无法给出引用可核实的答案。\n"
    stream = DraftStream()
    stream.on_token("The answer is [1].")
    stream.on_restart()
    stream.on_token("Receipts within 30 days [1].")
    stream.end()
    assert capsys.readouterr().out == (
        "(draft, checking its citations…) The answer is [1].\n"
        "(the citations did not check out; the model corrects its draft)\n"
        "(draft, checking its citations…) Receipts within 30 days [1].\n")


def test_the_wheel_carries_the_sample_folder(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("desktop_kb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for sample in ("travel-policy.md", "员工手册.md", "it-faq.txt"):
        assert f"desktop_kb/resources/sample_docs/{sample}" in names, sorted(names)[:20]


# (packaging/check_ingredients.py has no --help: build.sh runs it, and the frozen test runs build.sh)
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), ROOT / "packaging" / "measure_startup.py",
                  ROOT / "packaging" / "make_icons.py"])


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_every_script_still_starts(script: Path) -> None:
    """A moved or renamed module breaks a script's imports: each must at least print its help."""
    proc = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{script.name}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "usage:" in proc.stdout.lower(), proc.stdout[:500]
