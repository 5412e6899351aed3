"""``desktop-kb mcp``: the same ``search`` and ``ask`` as the HTTP API, as MCP tools over stdio
(the official ``mcp`` SDK), and the documents as resources, so assistants that speak MCP can use a
knowledge base. Stdio is the assistant's own pipe to a process it started: no network, no token.

Tools: ``search(query, kb?, top_k?, tag?, folder?, owner?)`` → hits; ``ask(question, kb?, tag?,
folder?, owner?)`` → the checked answer with its citations (a refusal says so). A failure (a bad
filter, an owner the base requires, a text over the API's length) is a tool error (``isError``).
A cancelled ``ask`` stops its answer. Resources: ``desktop-kb://kbs`` (the knowledge bases and
their documents) and ``desktop-kb://{kb}/{doc_id}`` (a document as the Markdown it was indexed
as); a base that requires an owner lists no documents there and refuses to be read (resources
carry no owner: its passages are found with ``search`` and an ``owner``).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from ..errors import DesktopKBError, user_message
from ..progress import CancelToken
from ..store.filters import parse_filters
from ..text.tokenize import lone_surrogate
from .schemas import MAX_TEXT
from .service import ALL_MODEL, KB_PREFIX, Service, answer_record, hit_record

__all__ = ["build_mcp"]

def _model(kb: str | None) -> str:
    return KB_PREFIX + kb if kb else ALL_MODEL


def _filters(tag: str | None, folder: str | None, owner: str | None) -> Any:
    return parse_filters([f"{k}={v}" for k, v in (("tag", tag), ("folder", folder), ("owner", owner)) if v])


def _failed(exc: DesktopKBError) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(" ".join(user_message(exc)).strip())


def _text(value: str, field: str) -> str:
    """The API's limits on a query or question (``MAX_TEXT`` characters, real Unicode)."""
    from mcp.server.mcpserver.exceptions import ToolError

    if not value.strip() or len(value) > MAX_TEXT or lone_surrogate(value):
        raise ToolError(f"{field}: 1 to {MAX_TEXT} characters of text.")
    return value


def build_mcp(service: Service) -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError

    server = MCPServer("desktop-kb", instructions=(
        "Answers questions from the user's own documents, offline, every claim cited to a passage. "
        "`search` finds passages; `ask` answers with checked citations or says the documents do not answer."))

    @server.tool()
    def search(query: str, kb: str | None = None, top_k: int = 5, tag: str | None = None, folder: str | None = None,
               owner: str | None = None) -> dict[str, Any]:
        """Passages of the knowledge base(s) that match the query (hybrid retrieval), with their file,
        pages, headings and character offsets."""
        try:
            hits = service.search(_text(query, "query"), _model(kb), _filters(tag, folder, owner),
                                  max(1, min(int(top_k), 50)), "hybrid")
        except DesktopKBError as exc:
            raise _failed(exc) from None
        return {"hits": [hit_record(h, n) for n, h in enumerate(hits, 1)]}

    @server.tool()
    async def ask(question: str, kb: str | None = None, tag: str | None = None, folder: str | None = None,
                  owner: str | None = None) -> dict[str, Any]:
        """Answer from the documents only: the text with [n] marks, and each citation's file, pages,
        offsets and supporting sentences; a refusal when the documents do not answer."""
        cancel = CancelToken()
        try:
            job = asyncio.get_running_loop().run_in_executor(service.executor, functools.partial(
                service.ask, _text(question, "question"), _model(kb), _filters(tag, folder, owner), cancel=cancel))
            answer = await asyncio.shield(job)  # a cancelled request stops the answer, not just the wait
        except asyncio.CancelledError:
            cancel.cancel()
            raise
        except DesktopKBError as exc:
            raise _failed(exc) from None
        return {"answer": answer.text, **answer_record(answer)}

    @server.resource("desktop-kb://kbs", mime_type="application/json")
    def kbs() -> dict[str, Any]:
        """The knowledge bases and their documents (ids for desktop-kb://{kb}/{doc_id}); none for a
        base that requires an owner."""
        return {name: [] if service.requires_owner(name) else
                [{"doc_id": d.doc_id, "path": d.path, "title": d.title} for d in service.lib.documents(name)]
                for name in service.lib.list_kbs()}

    @server.resource("desktop-kb://{kb}/{doc_id}", mime_type="text/markdown")
    def document(kb: str, doc_id: str) -> str:
        """A document as the Markdown it was indexed as."""
        try:
            if service.requires_owner(kb):
                raise ResourceError(f"Knowledge base {kb!r} is read only for an owner: use the search tool "
                                    "with owner=NAME.")
            return str(service.lib.document_markdown(kb, doc_id))
        except DesktopKBError as exc:
            raise ResourceError(" ".join(user_message(exc)).strip()) from None

    return server
