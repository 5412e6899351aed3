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

# (the core's message as a pattern, its catalogue template with the groups as {0}, {1}, …)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), t) for p, t in (
    (r"Knowledge base '(.+)' is in use by another desktop-kb process\.",
     N_("Knowledge base '{0}' is in use by another desktop-kb process.")),
    (r"Close the other desktop-kb window or command that uses it, then retry\.",
     N_("Close the other desktop-kb window or command that uses it, then retry.")),
    (r"(.+): (\.\w+) files are not read\.", N_("{0}: {1} files are not read.")),
    (r"Open it in its application and save it as (.+), then add it again\.",
     N_("Open it in its application and save it as {0}, then add it again.")),
    (r"(.+): archives are not opened\.", N_("{0}: archives are not opened.")),
    (r"Extract it into a folder and add that folder\.", N_("Extract it into a folder and add that folder.")),
    (r"(.+): (\.\w+) files are turned off in the settings\.", N_("{0}: {1} files are turned off in the settings.")),
    (r"Add (\.\w+) to the file types in the settings to read them\.",
     N_("Add {0} to the file types in the settings to read them.")),
    (r"(.+): (\.\w+) files are not supported\.", N_("{0}: {1} files are not supported.")),
    (r"(.+): Files without an extension are not supported\.", N_("{0}: files without an extension are not supported.")),
    (r"Convert it to PDF, DOCX, Markdown or plain text and add it again\.",
     N_("Convert it to PDF, DOCX, Markdown or plain text and add it again.")),
    (r"Remove the password \(or supply it with --pdf-password\) and add the file again\.",
     N_("Remove the password (or supply it with --pdf-password) and add the file again.")),
))


def localize(message: str) -> str:
    """``message`` in the app's language when its shape is known (English: unchanged)."""
    if language() == "en" or not message:
        return message
    out = []
    for sentence in re.split(r"(?<=\.)\s+", message.strip()):
        for pattern, template in _PATTERNS:
            m = pattern.fullmatch(sentence)
            if m:
                sentence = tr(template).format(*m.groups())
                break
        out.append(sentence)
    return " ".join(out)


def localize_pair(message: str, hint: str) -> tuple[str, str]:
    return localize(message), localize(hint)
