"""The local API: other programs on this computer ask a knowledge base.

Owns: bearer tokens (:mod:`.tokens`), request validation (:mod:`.schemas`), the answer queue and the
JSON of answers and hits (:mod:`.service`), the OpenAI-compatible HTTP app (:mod:`.app`), running it
(:mod:`.server`) and the MCP server over stdio (:mod:`.mcp_server`).
May import: :mod:`desktop_kb.library` and everything below it; never the CLI or the GUI (both use it).
FastAPI, uvicorn and mcp are imported inside the functions that need them (extra ``desktop-kb[api]``).
"""
