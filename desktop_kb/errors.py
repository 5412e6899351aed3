"""One exception tree for desktop_kb.

Every error carries a user-facing ``message`` (what went wrong) and a ``hint`` (what to do).
The CLI maps errors to exit codes with :func:`exit_code`; the GUI shows them through
``desktop_kb.gui.errors``; nothing else formats errors for users.

::

    DesktopKBError
    ├── Cancelled                 user pressed Cancel / Ctrl-C (never shown as an error)
    ├── ConfigError               bad settings file, bad option value
    │   ├── FilterError           a hostile or malformed search filter
    │   └── QuestionTooLong       a question longer than the LLM's prompt can hold
    ├── ModelError                a model is missing, fails to load, or does not match the KB
    │   ├── ModelNotInstalled
    │   └── EmbedderMismatch      (also a NeedsReembed)
    ├── StoreError                the vector store failed
    │   ├── KnowledgeBaseInUse    another process holds the knowledge base
    │   ├── KnowledgeBaseNotFound
    │   └── IndexMissing          (also a NeedsReembed)
    ├── DiskFull                  not enough free space where it was about to write (stops the run)
    ├── IngestError               one file could not be ingested (reported per file)
    │   ├── UnsupportedFile
    │   ├── PasswordProtected
    │   ├── NoExtractableText
    │   └── CorruptFile
    └── GenerationError           the LLM failed
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "Cancelled",
    "ConfigError",
    "CorruptFile",
    "DesktopKBError",
    "DiskFull",
    "EmbedderMismatch",
    "FilterError",
    "GenerationError",
    "IngestError",
    "KnowledgeBaseInUse",
    "KnowledgeBaseNotFound",
    "ModelError",
    "ModelNotInstalled",
    "NeedsReembed",
    "NoExtractableText",
    "PasswordProtected",
    "QuestionTooLong",
    "StoreError",
    "UnsupportedFile",
    "exit_code",
    "human_size",
    "user_message",
]


class DesktopKBError(Exception):
    """Base of every error desktop_kb raises on purpose."""

    default_hint = ""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def __str__(self) -> str:
        return self.message


class Cancelled(DesktopKBError):
    def __init__(self, message: str = "Cancelled.", hint: str | None = None) -> None:
        super().__init__(message, hint)


class ConfigError(DesktopKBError):
    default_hint = "Check the value and try again, or reset the settings file."


class FilterError(ConfigError):
    default_hint = (
        "Filters look like key=value; keys: tag, folder, owner, path, doc_id, "
        "mtime_from, mtime_to, ingested_from, ingested_to (Unix seconds or YYYY-MM-DD)."
    )

    def __init__(self, message: str, hint: str | None = None, *, param: str = "filter") -> None:
        super().__init__(message, hint)
        self.param = param  # the request field it is about (the local API names it)


class QuestionTooLong(ConfigError):
    default_hint = "Ask a shorter question; to ask about a long text, add it to a knowledge base and ask about it."
    param = "messages"  # the local API names the request field


class ModelError(DesktopKBError):
    default_hint = "Run `desktop-kb models status` to see which models are installed and loadable."


class ModelNotInstalled(ModelError):
    default_hint = (
        "Run `desktop-kb models install` (installs the shipped models), or "
        "`desktop-kb models install --from DIR` to use a model folder you copied."
    )


class NeedsReembed(DesktopKBError):
    """The knowledge base ``kb`` can be repaired by re-embedding it from its files
    (``Library.reembed``; the app offers it as a button). ``kb`` is None when no base is named
    (an archive built with another embedder)."""

    def __init__(self, message: str, hint: str | None = None, *, kb: str | None = None) -> None:
        if hint is None and kb:
            hint = self.default_hint.replace("NAME", kb)
        super().__init__(message, hint)
        self.kb = kb


class EmbedderMismatch(ModelError, NeedsReembed):
    default_hint = (
        "Switch back to the embedder this knowledge base was built with, or re-embed it "
        "with `desktop-kb kb reembed NAME`."
    )


class StoreError(DesktopKBError):
    default_hint = "If this persists, close other desktop-kb windows and retry."


class KnowledgeBaseInUse(StoreError):
    default_hint = "Close the other desktop-kb window or command that uses it, then retry."


class KnowledgeBaseNotFound(StoreError):
    default_hint = "Run `desktop-kb kb list` to see the existing knowledge bases."


class IndexMissing(StoreError, NeedsReembed):
    default_hint = "Rebuild it from its files: desktop-kb kb reembed NAME."


class OwnerScopeRequired(FilterError):
    default_hint = "Search with an owner, e.g. --filter owner=NAME (the app: the owner filter)."

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint, param="owner")


def human_size(n: int) -> str:
    """``n`` bytes for a person: "7.9 MB", "1.2 GB"."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


class DiskFull(DesktopKBError):
    """Not enough free space in ``folder`` for what was about to be written (``what``). Raised
    before the write where it can be (``desktop_kb.diskspace``): what was committed stays, the
    rest is not started; never a per-file failure (every next file would fail the same way)."""

    default_hint = ("Free some space on that disk, or move the data folder to a larger one "
                    "(--data-dir, or DESKTOP_KB_DATA_DIR), then run it again; what was already saved is kept.")

    def __init__(self, folder: Path, free: int, needed: int, what: str = "", hint: str | None = None) -> None:
        self.folder, self.free, self.needed, self.what = Path(folder), int(free), int(needed), what
        doing = f" {what}" if what else ""
        super().__init__(f"Not enough free space in {self.folder}: {human_size(self.free)} free, "
                         f"{human_size(self.needed)} needed{doing}.", hint)


class IngestError(DesktopKBError):
    """A single file failed; the rest of the batch goes on."""

    default_hint = "The file was skipped; the other files were indexed."


class UnsupportedFile(IngestError):
    default_hint = "Convert it to PDF, DOCX, Markdown or plain text and add it again."


class PasswordProtected(IngestError):
    default_hint = "Remove the password (or supply it with --pdf-password) and add the file again."


class NoExtractableText(IngestError):
    default_hint = "The file may be empty, or a scan while OCR is off (settings, or ingest --ocr auto)."


class CorruptFile(IngestError):
    default_hint = "The file seems damaged; open and re-save it in its own application."


class GenerationError(DesktopKBError):
    default_hint = "Check the LLM model with `desktop-kb models status`."


def user_message(exc: BaseException) -> tuple[str, str]:
    """The one place that turns any exception into (message, hint) for a person."""
    if isinstance(exc, DesktopKBError):
        return exc.message, exc.hint
    if isinstance(exc, MemoryError):
        return "Out of memory.", "Close other programs or use a smaller model."
    if isinstance(exc, PermissionError):
        return f"Permission denied: {exc.filename or exc}", "Check the file's permissions."
    if isinstance(exc, FileNotFoundError):
        return f"File not found: {exc.filename or exc}", "Check the path."
    if isinstance(exc, OSError):
        return f"System error: {exc.strerror or exc}", "Check disk space and permissions."
    return (
        f"Unexpected error: {type(exc).__name__}: {exc}",
        "This is a bug in desktop-kb; please report it with the steps that led here.",
    )


def exit_code(exc: BaseException) -> int:
    """CLI exit codes: 130 cancelled, 2 usage/config, 3 model, 4 store, 5 disk full, 1 anything else."""
    if isinstance(exc, Cancelled):
        return 130
    if isinstance(exc, DiskFull):
        return 5
    if isinstance(exc, ConfigError):
        return 2
    if isinstance(exc, ModelError):
        return 3
    if isinstance(exc, StoreError):
        return 4
    return 1
