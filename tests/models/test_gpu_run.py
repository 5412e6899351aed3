"""training/gpu_run.sh, the one prepared GPU run, walked through with a stand-in python3 (plumbing:
no GPU here). What it asks python to do, in order, must name modules and flags that exist, so the
script cannot rot between the sessions that are lent a GPU."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# records each call; "export" writes what the script then splits and copies into $OUT
STUB = """#!/bin/sh
echo "$*" >> "$CALLS"
case "$*" in
  *training.export*)
    run=$(echo "$*" | sed 's/.*--run \\([^ ]*\\).*/\\1/')
    mkdir -p "$run/export" && echo w > "$run/export/weights.npz" && echo {} > "$run/export/manifest.json"
    echo {} > "$run/log.jsonl";;
esac
"""


@pytest.mark.skipif(shutil.which("split") is None or sys.platform == "win32", reason="needs a POSIX shell")
@pytest.mark.parametrize("model", ["cross", "reader"])
def test_the_script_unpacks_trains_exports_and_returns_the_weights(tmp_path, model):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(STUB)
    (bin_dir / "python3").chmod(stat.S_IRWXU)
    calls, out, run = tmp_path / "calls", tmp_path / "out", tmp_path / "run"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls), "OUT": str(out)}
    args = ["bash", "training/gpu_run.sh", str(run), "20"] + ([model] if model == "reader" else [])
    subprocess.run(args, cwd=ROOT, env=env, check=True, timeout=60)
    lines = calls.read_text().splitlines()
    assert "torch.cuda.is_available" in lines[0]
    assert lines[1] == "-m training.gpu_pack unpack"  # before any training
    train, export = lines[2], lines[3]
    if model == "reader":
        assert train.startswith(f"-m training.reader train --out {run} --steps 20 --device cuda")
        assert "--init-from desktop_kb/resources/models/e5-reader" in train
        assert export == f"-m training.export --reader --run {run} --dest {run}/export"
    else:
        assert train.startswith(f"-m training.train --out {run} --steps 20 --device cuda")
        assert export == f"-m training.export --run {run} --dest {run}/export"
    assert sorted(p.name for p in (out / "run").iterdir()) == ["log.jsonl", "manifest.json", "weights.npz.part-aa"]
    # every flag the script passes is one the real command takes
    from training import reader
    from training import train as train_mod

    parsed = reader._args(train.split()[2:]) if model == "reader" else train_mod._args(train.split()[2:])
    assert parsed.device == "cuda" and parsed.batch == 64
    assert (ROOT / "training" / "gpu_pack.py").is_file() and (ROOT / "training" / "export.py").is_file()
    assert (ROOT / "desktop_kb" / "resources" / "models" / "e5-reader").is_dir()
