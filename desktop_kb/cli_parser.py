"""The ``desktop-kb`` argument parser: every sub-command and its options. The built-in commands'
functions come from :mod:`desktop_kb.cli` (passed in, so this module imports none of them); the
other sub-command modules (answer, eval, demo, enrich) register themselves."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from .settings import Settings

__all__ = ["Handler", "build_parser"]

Handler = Callable[[argparse.Namespace, Settings], int]


def _extra_commands() -> list[Any]:
    """Sub-command modules that register themselves (answer, eval, demo)."""
    mods = []
    for name in ("desktop_kb.query.cli", "desktop_kb.eval.cli", "desktop_kb.demo", "desktop_kb.enrich_cli"):
        try:
            mods.append(__import__(name, fromlist=["register"]))
        except ImportError as exc:
            if exc.name != name:
                raise
    return mods


def build_parser(handlers: Mapping[str, Handler]) -> argparse.ArgumentParser:
    """The parser; ``handlers`` are the built-in commands' functions by name (ingest, kb, watch,
    search, models), set as each sub-command's ``func``."""
    p = argparse.ArgumentParser(prog="desktop-kb", description="Answer questions from your own documents, offline.")
    p.add_argument("--data-dir", help="where knowledge bases, models and settings live "
                                      "(default: $DESKTOP_KB_DATA_DIR or the user data folder)")
    sub = p.add_subparsers(dest="command", required=True)

    ing = sub.add_parser("ingest", help="add files or folders to a knowledge base")
    ing.add_argument("paths", nargs="+")
    ing.add_argument("--kb", default="default")
    ing.add_argument("--tags", help="comma-separated tags, e.g. finance,2024")
    ing.add_argument("--owner")
    ing.add_argument("--pdf-password")
    ing.add_argument("--ocr", choices=("auto", "off", "force"),
                     help="read scanned PDF pages and images: auto (default setting), off, or force "
                          "(every PDF page)")
    ing.add_argument("--enrich", action="store_true",
                     help="then let the LLM summarise each new document (also after later ingests)")
    ing.add_argument("--json", action="store_true")
    ing.set_defaults(func=handlers["ingest"])

    kb = sub.add_parser("kb", help="list, inspect, rename or delete knowledge bases")
    kbs = kb.add_subparsers(dest="kb_command", required=True)
    lst = kbs.add_parser("list")
    lst.add_argument("--json", action="store_true")
    helps = {"check": "compare manifest, stored text and index; report what is wrong (exit 1 if anything)",
             "repair": "rebuild what kb check finds wrong, as far as it can (exit 1 if something is left)"}
    for name in ("stats", "delete", "reembed", "check", "repair"):
        sp = kbs.add_parser(name, help=helps.get(name))
        sp.add_argument("name")
        sp.add_argument("--json", action="store_true")
    rn = kbs.add_parser("rename")
    rn.add_argument("name")
    rn.add_argument("new_name")
    rn.add_argument("--json", action="store_true")
    cr = kbs.add_parser("create", help="create an empty knowledge base")
    cr.add_argument("name")
    cr.add_argument("--require-owner", action="store_true",
                    help="every search must carry an owner (--filter owner=…); none: an error, never everything")
    cr.add_argument("--json", action="store_true")
    tg = kbs.add_parser("tag", help="add or remove tags of files or folders (no re-embedding)")
    tg.add_argument("name")
    tg.add_argument("paths", nargs="+")
    tg.add_argument("--add", action="append", help="tag to add (repeatable)")
    tg.add_argument("--remove", action="append", help="tag to remove (repeatable)")
    tg.add_argument("--json", action="store_true")
    so = kbs.add_parser("set-owner", help="set the owner of files or folders (no re-embedding)")
    so.add_argument("name")
    so.add_argument("paths", nargs="+")
    so.add_argument("owner")
    so.add_argument("--json", action="store_true")
    ex = kbs.add_parser("export", help="write a knowledge base to one archive file")
    ex.add_argument("name")
    ex.add_argument("file")
    ex.add_argument("--json", action="store_true")
    im = kbs.add_parser("import", help="import an archive written by kb export")
    im.add_argument("file")
    im.add_argument("--as", dest="as_name", help="the new knowledge base's name (default: the archive's)")
    im.add_argument("--replace", action="store_true", help="replace a knowledge base of that name")
    im.add_argument("--json", action="store_true")
    pu = kbs.add_parser("push", help="copy a knowledge base into a Qdrant server")
    pu.add_argument("name")
    pu.add_argument("--url", required=True)
    pu.add_argument("--api-key")
    pu.add_argument("--json", action="store_true")
    tc = kbs.add_parser("toc", help="a document's table of contents (sections, pages, token estimates)")
    tc.add_argument("name")
    tc.add_argument("path")
    tc.add_argument("--json", action="store_true")
    rm = kbs.add_parser("remove", help="remove files from a knowledge base")
    rm.add_argument("name")
    rm.add_argument("paths", nargs="+")
    rm.add_argument("--json", action="store_true")
    kb.set_defaults(func=handlers["kb"])

    wa = sub.add_parser("watch", help="keep a knowledge base in sync with its folders until Ctrl-C")
    wa.add_argument("--kb", default="default")
    wa.add_argument("--debounce", type=float, default=2.0, help="seconds of quiet before re-indexing")
    wa.set_defaults(func=handlers["watch"])

    se = sub.add_parser("search", help="hybrid retrieval without generation (debug view)")
    se.add_argument("query")
    se.add_argument("--kb", action="append", help="knowledge base (repeatable; default: all)")
    se.add_argument("--top-k", type=int, default=5)
    se.add_argument("--filter", action="append", help="key=value (repeatable)")
    se.add_argument("--mode", choices=["hybrid", "dense", "sparse"], default="hybrid")
    se.add_argument("--json", action="store_true")
    se.set_defaults(func=handlers["search"])

    mo = sub.add_parser("models", help="show or install models")
    mos = mo.add_subparsers(dest="models_command", required=True)
    st = mos.add_parser("status")
    st.add_argument("--check", action="store_true", help="also load each model to verify it")
    st.add_argument("--json", action="store_true")
    ins = mos.add_parser("install")
    ins.add_argument("--from", dest="from_dir", help="a folder or GGUF file you copied")
    ins.add_argument("--online", choices=["embedder", "reranker", "llm"], help="download (needs network)")
    mo.set_defaults(func=handlers["models"])

    for mod in _extra_commands():
        mod.register(sub)
    return p
