"""``desktop-kb mcp``: an MCP client session (the SDK's stdio client) starts it, lists the tools and
resources, and calls both tools."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")


def _data(tmp_path: Path, llm: Path) -> Path:
    """A data folder with the test-only hash embedder (no model needed to search), the shipped LLM
    (``ask`` opens it first) and the sample docs."""
    from api_helpers import write_docs

    from desktop_kb.cli import main

    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps(
        {"models": {"embedder": {"backend": "hash", "id": "test/hash-embedder", "dim": 64},
                    "reranker": {"backend": "none"},
                    "llm": {"backend": "llama_cpp", "id": llm.stem, "path": str(llm)}}}))
    assert main(["--data-dir", str(data), "ingest", str(write_docs(tmp_path / "docs")), "--kb", "docs"]) == 0
    assert main(["--data-dir", str(data), "kb", "create", "empty"]) == 0
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "salaries.md").write_text("# Salaries\n\nThe chief engineer earns 412,000 euros.\n", encoding="utf-8")
    assert main(["--data-dir", str(data), "kb", "create", "hr", "--require-owner"]) == 0
    assert main(["--data-dir", str(data), "ingest", str(secret), "--kb", "hr", "--owner", "alice"]) == 0
    return data


def _doc_id(data: Path, kb: str) -> str:
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import load_settings

    with Library.open(load_settings(data)) as lib:
        return lib.documents(kb)[0].doc_id


async def _session(data: Path, hr_doc: str) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "desktop_kb", "--data-dir", str(data), "mcp"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        searched = await session.call_tool("search", {"query": "hotel per night", "kb": "docs", "top_k": 2})
        asked = await session.call_tool("ask", {"question": "When must invoices be paid?", "kb": "empty"})
        resources = await session.read_resource("desktop-kb://kbs")
        kbs = json.loads(resources.contents[0].text)
        try:  # hr lists nothing: its document's id as a client could have it from elsewhere
            await session.read_resource(f"desktop-kb://hr/{hr_doc}")
            read_hr = "read"
        except Exception as exc:  # the SDK raises the server's resource error
            read_hr = str(exc)
        return {"tools": sorted(t.name for t in tools.tools), "search": searched, "ask": asked, "kbs": kbs,
                "hr_unscoped": await session.call_tool("search", {"query": "chief engineer", "kb": "hr"}),
                "hr_owner": await session.call_tool("search", {"query": "chief engineer", "kb": "hr", "owner": "alice"}),
                "too_long": await session.call_tool("search", {"query": "x " * 5000, "kb": "docs"}),
                "read_hr": read_hr}


def _payload(result) -> dict:
    if getattr(result, "structured_content", None):
        return result.structured_content
    return json.loads(result.content[0].text)


@pytest.mark.slow
@pytest.mark.llm
def test_an_mcp_client_lists_the_tools_and_calls_both(tmp_path, shipped_llm):
    data = _data(tmp_path, shipped_llm)
    out = asyncio.run(asyncio.wait_for(_session(data, _doc_id(data, "hr")), 300))
    assert out["tools"] == ["ask", "search"]
    hits = _payload(out["search"])["hits"]
    assert hits[0]["file"].endswith("travel.md") and "180 euros" in hits[0]["text"]
    asked = _payload(out["ask"])
    # no documents in that base: answered at once, no generation
    assert asked.get("status") == "refused" and "has no documents yet" in asked["answer"], asked
    kbs = out["kbs"]
    assert {d["path"].rsplit("/", 1)[-1] for d in kbs["docs"]} >= {"invoices.md", "travel.md"}
    # a base that requires an owner: no documents listed, none read, its search a tool error without one
    assert kbs["hr"] == [] and "412,000" not in out["read_hr"] and "owner" in out["read_hr"], out["read_hr"]
    assert out["hr_unscoped"].is_error and "owner" in out["hr_unscoped"].content[0].text
    assert not out["hr_owner"].is_error and "412,000" in _payload(out["hr_owner"])["hits"][0]["text"]
    assert out["too_long"].is_error and "8000" in out["too_long"].content[0].text
