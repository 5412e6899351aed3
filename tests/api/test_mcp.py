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
    return data


async def _session(data: Path) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "desktop_kb", "--data-dir", str(data), "mcp"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        searched = await session.call_tool("search", {"query": "hotel per night", "kb": "docs", "top_k": 2})
        asked = await session.call_tool("ask", {"question": "When must invoices be paid?", "kb": "empty"})
        resources = await session.read_resource("desktop-kb://kbs")
        return {"tools": sorted(t.name for t in tools.tools), "search": searched, "ask": asked, "kbs": resources}


def _payload(result) -> dict:
    if getattr(result, "structured_content", None):
        return result.structured_content
    return json.loads(result.content[0].text)


@pytest.mark.slow
@pytest.mark.llm
def test_an_mcp_client_lists_the_tools_and_calls_both(tmp_path, shipped_llm):
    out = asyncio.run(asyncio.wait_for(_session(_data(tmp_path, shipped_llm)), 300))
    assert out["tools"] == ["ask", "search"]
    hits = _payload(out["search"])["hits"]
    assert hits[0]["file"].endswith("travel.md") and "180 euros" in hits[0]["text"]
    asked = _payload(out["ask"])
    # no documents in that base: answered at once, no generation
    assert asked.get("status") == "refused" and "has no documents yet" in asked["answer"], asked
    kbs = json.loads(out["kbs"].contents[0].text)
    assert {d["path"].rsplit("/", 1)[-1] for d in kbs["docs"]} >= {"invoices.md", "travel.md"}
