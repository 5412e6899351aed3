"""``desktop-kb doctor``: what this computer is and how fast answers will be here (library/doctor.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..settings import Settings
from .common import print_json

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("doctor", help="check this computer: CPU, llama.cpp build, model speeds, "
                                             "memory, disk, models, local API; what a bug report pastes")
    p.add_argument("--no-speed", action="store_true", help="skip the model timings (seconds instead of a minute)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from ..library.doctor import run_doctor

    report = run_doctor(settings, speed=not args.no_speed,
                        progress=lambda what: print(f"doctor: {what}…", file=sys.stderr, flush=True))
    if args.json:
        print_json(report.to_json())
        return 0
    print(report.text())
    return 0
