"""``desktop-kb mcp``: the same ``search`` and ``ask`` as the HTTP API, as MCP tools over stdio
(the official ``mcp`` SDK), and the documents as resources, so assistants that speak MCP can use a
knowledge base. Stdio is the assistant's own pipe to a process it started: no network, no token.

Tools: ``search(query, kb?, top_k?, tag?, folder?, owner?)`` → hits; ``ask(question, kb?, tag?,
folder?, owner?)`` → the checked answer with its citations (a refusal says so). Resources:
``desktop-kb://kbs`` (the knowledge bases and their documents) and
``desktop-kb://{kb}/{doc_id}`` (a document as the Markdown it was indexed as).
"""

from __future__ import annotations

from typing import Any

from ..errors import DesktopKBError, user_message
from ..store.filters import parse_filters
from .service import ALL_MODEL, KB_PREFIX, Service, answer_record, hit_record

__all__ = ["build_mcp"]


def _model(kb: str | None) -> str:
    return KB_PREFIX + kb if kb else ALL_MODEL


def _filters(tag: str | None, folder: str | None, owner: str | None) -> Any:
    return parse_filters([f"{k}={v}" for k, v in (("tag", tag), ("folder", folder), ("owner", owner)) if v])


def build_mcp(service: Service) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("desktop-kb", instructions=(
        "Answers questions from the user's own documents, offline, every claim cited to a passage. "
        "`search` finds passages; `ask` answers with checked citations or says the documents do not answer."))

    @server.tool()
    def search(query: str, kb: str | None = None, top_k: int = 5, tag: str | None = None, folder: str | None = None,
               owner: str | None = None) -> dict[str, Any]:
        """Passages of the knowledge base(s) that match the query (hybrid retrieval), with their file,
        pages, headings and character offsets."""
        try:
            hits = service.search(query, _model(kb), _filters(tag, folder, owner), max(1, min(int(top_k), 50)), "hybrid")
        except DesktopKBError as exc:
            return {"error": " ".join(user_message(exc)).strip()}
        return {"hits": [hit_record(h, n) for n, h in enumerate(hits, 1)]}

    @server.tool()
    def ask(question: str, kb: str | None = None, tag: str | None = None, folder: str | None = None,
            owner: str | None = None) -> dict[str, Any]:
        """Answer from the documents only: the text with [n] marks, and each citation's file, pages,
        offsets and supporting sentences; a refusal when the documents do not answer."""
        try:
            answer = service.ask(question, _model(kb), _filters(tag, folder, owner))
        except DesktopKBError as exc:
            return {"error": " ".join(user_message(exc)).strip()}
        return {"answer": answer.text, **answer_record(answer)}

    @server.resource("desktop-kb://kbs", mime_type="application/json")
    def kbs() -> dict[str, Any]:
        """The knowledge bases and their documents (ids for desktop-kb://{kb}/{doc_id})."""
        return {name: [{"doc_id": d.doc_id, "path": d.path, "title": d.title} for d in service.lib.documents(name)]
                for name in service.lib.list_kbs()}

    @server.resource("desktop-kb://{kb}/{doc_id}", mime_type="text/markdown")
    def document(kb: str, doc_id: str) -> str:
        """A document as the Markdown it was indexed as."""
        return str(service.lib.document_markdown(kb, doc_id))

    return server
