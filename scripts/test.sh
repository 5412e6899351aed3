#!/usr/bin/env bash
# Runs the whole suite (slow, LLM and GUI tests included), offscreen.
set -euo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check desktop_kb tests benchmarks
.venv/bin/python scripts/check_qt_free.py
exec .venv/bin/python -m pytest -q "$@"
