"""The ``desktop-kb`` argument parser: every sub-command and its options. The built-in commands'
functions come from :mod:`desktop_kb.cli` (passed in, so this module imports none of them); the
other sub-command modules (answer, eval, demo, enrich) register themselves."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from ..settings import Settings

__all__ = ["Handler", "build_parser"]

Handler = Callable[[argparse.Namespace, Settings], int]


def _extra_commands() -> list[Any]:
    """Sub-command modules that register themselves (answer, eval, demo)."""
    mods = []
    for name in ("desktop_kb.cli.ask", "desktop_kb.cli.evaluate", "desktop_kb.cli.demo", "desktop_kb.cli.enrich",
                 "desktop_kb.cli.api", "desktop_kb.cli.doctor"):
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
    _add_ingest(sub, handlers["ingest"])
    _add_kb(sub, handlers["kb"])
    _add_watch_and_search(sub, handlers["watch"], handlers["search"])
    _add_models(sub, handlers["models"])
    for mod in _extra_commands():
        mod.register(sub)
    return p


def _add_ingest(sub: Any, handler: Handler) -> None:
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
    ing.set_defaults(func=handler)


# kb sub-commands: (name, help, positional arguments); each also takes --json
_KB_COMMANDS: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("list", None, ()),
    ("stats", None, ("name",)),
    ("docs", "the documents of a knowledge base: path, passages, tags, owner", ("name",)),
    ("delete", None, ("name",)),
    ("reembed", None, ("name",)),
    ("check", "compare manifest, stored text and index; report what is wrong (exit 1 if anything)", ("name",)),
    ("repair", "rebuild what kb check finds wrong, as far as it can (exit 1 if something is left)", ("name",)),
    ("rename", None, ("name", "new_name")),
    ("create", "create an empty knowledge base", ("name",)),
    ("tag", "add or remove tags of files or folders (no re-embedding)", ("name", "paths+")),
    ("set-owner", "set the owner of files or folders (no re-embedding)", ("name", "paths+", "owner")),
    ("export", "write a knowledge base to one archive file", ("name", "file")),
    ("import", "import an archive written by kb export", ("file",)),
    ("push", "copy a knowledge base into a Qdrant server", ("name",)),
    ("toc", "a document's table of contents (sections, pages, token estimates)", ("name", "path")),
    ("remove", "remove files or folders from a knowledge base (later scans keep them out)", ("name", "paths+")),
    ("excluded", "the files and folders removed from a knowledge base", ("name",)),
    ("put-back", "add removed files or folders to a knowledge base again", ("name", "paths+")),
)


def _ranged(convert: Callable[[str], float], low: float, high: float, what: str,
            unit: str = "") -> Callable[[str], Any]:
    """An argparse type: ``convert(text)`` from ``low`` to ``high`` (else a usage error, exit 2;
    NaN is out of every range)."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {low:g} to {high:g}{unit}, not {text}")
        return value

    return parse


def _add_kb(sub: Any, handler: Handler) -> None:
    kb = sub.add_parser("kb", help="list, inspect, rename or delete knowledge bases")
    kbs = kb.add_subparsers(dest="kb_command", required=True)
    made = {}
    for name, help_text, positionals in _KB_COMMANDS:
        sp = made[name] = kbs.add_parser(name, help=help_text)
        for arg in positionals:
            sp.add_argument(arg.rstrip("+"), nargs="+") if arg.endswith("+") else sp.add_argument(arg)
        sp.add_argument("--json", action="store_true")
    made["create"].add_argument("--require-owner", action="store_true",
                                help="every search must carry an owner (--filter owner=…); none: an error, "
                                     "never everything")
    made["tag"].add_argument("--add", action="append", help="tag to add (repeatable)")
    made["tag"].add_argument("--remove", action="append", help="tag to remove (repeatable)")
    made["import"].add_argument("--as", dest="as_name", help="the new knowledge base's name (default: the archive's)")
    made["import"].add_argument("--replace", action="store_true", help="replace a knowledge base of that name")
    made["push"].add_argument("--url", required=True)
    made["push"].add_argument("--api-key")
    kb.set_defaults(func=handler)


def _add_watch_and_search(sub: Any, watch: Handler, search: Handler) -> None:
    wa = sub.add_parser("watch", help="keep a knowledge base in sync with its folders until Ctrl-C")
    wa.add_argument("--kb", default="default")
    wa.add_argument("--debounce", type=_ranged(float, 0.1, 3600.0, "a number of seconds", " seconds"),
                    default=2.0,
                    help="seconds of quiet before re-indexing (0.1 to 3600; default 2)")
    wa.set_defaults(func=watch)
    se = sub.add_parser("search", help="hybrid retrieval without generation (debug view)")
    se.add_argument("query")
    se.add_argument("--kb", action="append", help="knowledge base (repeatable; default: all)")
    se.add_argument("--top-k", type=_ranged(int, 1, 200, "a whole number"), default=5,
                    help="how many passages (1 to 200; default 5)")
    se.add_argument("--filter", action="append", help="key=value (repeatable)")
    se.add_argument("--mode", choices=["hybrid", "dense", "sparse"], default="hybrid")
    se.add_argument("--json", action="store_true")
    se.set_defaults(func=search)


def _add_models(sub: Any, handler: Handler) -> None:
    mo = sub.add_parser("models", help="show or install models")
    mos = mo.add_subparsers(dest="models_command", required=True)
    st = mos.add_parser("status")
    st.add_argument("--check", action="store_true", help="also load each model to verify it")
    st.add_argument("--json", action="store_true")
    ins = mos.add_parser("install")
    ins.add_argument("--from", dest="from_dir", help="a folder or GGUF file you copied")
    ins.add_argument("--online", choices=["embedder", "reranker", "llm"], help="download (needs network)")
    mo.set_defaults(func=handler)
