"""The core's English messages a user meets in the app, in the app's language.

The core (ingest, store, library) says what went wrong in English, for the command line, the API
and the log. The app shows some of those messages as they are: error dialogs and the skipped and
failed files of an ingest. Here each such message's shape is matched and rewritten from the
catalogue (:mod:`.i18n`), so the Chinese UI has no English holes; a message with no pattern here
is shown as the core wrote it.
"""

from __future__ import annotations

import re

from .i18n import N_, language, tr

__all__ = ["localize", "localize_pair"]

# the core's messages by their catalogue template, its varying parts as {0}, {1}, … (each matched as
# ".+"), or as (pattern, template) where a part is narrower than that or the core's words differ
_ROWS: tuple[str | tuple[str, str], ...] = (
    N_("Knowledge base '{0}' is in use by another desktop-kb process."),
    (r"(.+): (\.\w+) files are not read\.", N_("{0}: {1} files are not read.")),
    N_("Open it in its application and save it as {0}, then add it again."),
    N_("{0}: archives are not opened."),
    (r"(.+): (\.\w+) files are turned off in the settings\.", N_("{0}: {1} files are turned off in the settings.")),
    (r"Add (\.\w+) to the file types in the settings to read them\.",
     N_("Add {0} to the file types in the settings to read them.")),
    (r"(.+): (\.\w+) files are not supported\.", N_("{0}: {1} files are not supported.")),
    (r"(.+): Files without an extension are not supported\.", N_("{0}: files without an extension are not supported.")),
    # files that could not be read (ingest/convert.py, pdf.py, images.py, odf.py, …)
    N_("{0} is damaged or not a real Outlook message."),
    N_("{0} is damaged or not a real {1} file."),
    N_("{0} is empty."),
    N_("{0} is password-protected (no password was given)."),
    N_("{0} is password-protected (the password is wrong)."),
    N_("{0} is password-protected with an encryption method that cannot be opened."),
    N_("{0} is password-protected."),
    N_("{0}: no text was recognised on its scanned pages."),
    N_("{0}: no text was recognised in the image."),
    N_("{0} has no extractable text (scanned or empty PDF?)."),
    N_("{0} has no text to index."),
    N_("{0} is not a text file (binary content)."),
    (r"(.+) is too large \((\d+) MB; limit (\d+) MB\)\.", N_("{0} is too large ({1} MB; limit {2} MB).")),
    N_("{0} is too large an image ({1} pixels)."),
    N_("{0}: this kind of file is not supported."),
    (r"(.+) unpacks to (\d+) MB of text \(limit (\d+) MB\)\.", N_("{0} unpacks to {1} MB of text (limit {2} MB).")),
    N_("Could not read {0}: not enough memory."),
    N_("{0} is damaged or not a desktop-kb archive."),
    N_("{0} is not a desktop-kb archive of a format this version reads."),
    # any other error, as errors.user_message words it
    N_("Permission denied: {0}"),
    N_("File not found: {0}"),
    N_("System error: {0}"),
    N_("Unexpected error: {0}"),
    (r"Not enough free space in (.+): (.+) free, (.+) needed(?: (.+))?\.",
     N_("Not enough free space in {0}: {1} free, {2} needed.")),  # what it was for: the core's English
    (r"The question is too long: about (\d+) tokens, at most (\d+)\.",
     N_("The question is too long: about {0} tokens, at most {1}.")),
    # what a section or document answer was read from (query/scope.py, Scope.describe)
    N_("Answered from section “{0}” of {1}."),
    N_("Answered from the whole of {0}."),
)


def _pattern(template: str) -> re.Pattern[str]:
    """The core's message a template translates: its words as they are, each {n} any text."""
    return re.compile(re.sub(r"\\\{\d\\\}", "(.+)", re.escape(template)))


_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (_pattern(row), row) if isinstance(row, str) else (re.compile(row[0]), row[1]) for row in _ROWS)


# fixed sentences, word for word: the error tree's hints (desktop_kb/errors.py, each class's
# default_hint) and the skipped-file hints without a part that varies
_HINTS = frozenset((
    N_("Check the value and try again, or reset the settings file."),
    N_("The file seems damaged; open and re-save it in its own application."),
    N_("Free some space on that disk, or move the data folder to a larger one (--data-dir, or DESKTOP_KB_DATA_DIR), "
       "then run it again; what was already saved is kept."),
    N_("Switch back to the embedder this knowledge base was built with, or re-embed it with "
       "`desktop-kb kb reembed NAME`."),
    N_("Filters look like key=value; keys: tag, folder, owner, path, doc_id, mtime_from, mtime_to, ingested_from, "
       "ingested_to (Unix seconds or YYYY-MM-DD)."),
    N_("Check the LLM model with `desktop-kb models status`."),
    N_("Rebuild it from its files: desktop-kb kb reembed NAME."),
    N_("The file was skipped; the other files were indexed."),
    N_("Run `desktop-kb kb list` to see the existing knowledge bases."),
    N_("Run `desktop-kb models status` to see which models are installed and loadable."),
    N_("Run `desktop-kb models install` (installs the shipped models), or `desktop-kb models install --from DIR` "
       "to use a model folder you copied."),
    N_("The file may be empty, or a scan while OCR is off (settings, or ingest --ocr auto)."),
    N_("Search with an owner, e.g. --filter owner=NAME (the app: the owner filter)."),
    N_("Ask a shorter question; to ask about a long text, add it to a knowledge base and ask about it."),
    N_("If this persists, close other desktop-kb windows and retry."),
    N_("Close the other desktop-kb window or command that uses it, then retry."),
    N_("Convert it to PDF, DOCX, Markdown or plain text and add it again."),
    N_("Remove the password (or supply it with --pdf-password) and add the file again."),
    N_("Extract it into a folder and add that folder."),  # (unsupported_reason's hint for an archive)
    N_("Answered from the library."),
    N_("The scan may be blank, too faint or too small to read."),
    N_("The image may hold no text, or be too faint or small to read."),
    N_("Turn OCR on in the settings (or ingest --ocr auto)."),
    N_("Scan it at a lower resolution (300 DPI is plenty)."),
    N_("Remove the password and add it again."),
    N_("Check that the file exists and that you can open it."),
    N_("Close other programs and retry."),
    N_("The question is empty."),  # before "(.+) is empty." reads it as a file's name
    N_("Type a question."),
    N_("The search is empty."),
    N_("Type what to look for."),
    N_("Out of memory."),  # errors.user_message's, with their hints
    N_("Close other programs or use a smaller model."),
    N_("Check the file's permissions."),
    N_("Check the path."),
    N_("Check disk space and permissions."),
    N_("This is a bug in desktop-kb; please report it with the steps that led here."),
))


def localize(message: str) -> str:
    """``message`` in the app's language when its shape is known (English: unchanged)."""
    if language() == "en" or not message:
        return message
    if message.strip() in _HINTS:
        return tr(message.strip())
    out = []
    for sentence in re.split(r"(?<=\.)\s+", message.strip()):
        if sentence in _HINTS:
            out.append(tr(sentence))
            continue
        for pattern, template in _PATTERNS:
            m = pattern.fullmatch(sentence)
            if m:
                sentence = tr(template).format(*m.groups())
                break
        out.append(sentence)
    return " ".join(out)


def localize_pair(message: str, hint: str) -> tuple[str, str]:
    return localize(message), localize(hint)
