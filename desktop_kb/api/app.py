"""The local HTTP API (FastAPI): OpenAI-compatible chat completions with claim-level citations,
retrieval-only search, and the knowledge bases as models. Every request needs a bearer token.

* ``GET /v1/models``: ``desktop-kb`` (every knowledge base) and ``kb:NAME`` for each one.
* ``POST /v1/chat/completions``: the same pipeline and checks as the app; the earlier turns are the
  history. The reply's text keeps its ``[n]`` marks; the extra field ``desktop_kb`` (in the last
  chunk when streaming) carries the citations, verdicts and, for a refusal, its reason, while
  ``finish_reason`` stays ``stop``. Streaming sends the *checked* answer: while the model writes and
  the check runs, only SSE comments (``: working``) keep the connection open, so a draft the check
  refuses never reaches a client as an answer.
* ``POST /v1/search``: hits with texts, metadata, offsets and scores.

Errors have OpenAI's shape, ``{"error": {"message", "type", "param", "code"}}``: 401 without a
valid token, 404 for an unknown model, 413 for a body over 256 KB, 400/422 naming the bad field,
429 with ``Retry-After`` when the answer queue is full. A client that disconnects cancels its answer.
"""


# no `from __future__ import annotations` here: FastAPI reads the endpoints' annotations at run time
import asyncio
import functools
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from ..errors import (
    Cancelled,
    ConfigError,
    DesktopKBError,
    KnowledgeBaseNotFound,
    QuestionTooLong,
    user_message,
)
from ..progress import CancelToken
from .guard import Guard, error_response
from .schemas import ChatRequest, SearchRequest
from .service import Busy, Service, answer_record, hit_record
from .tokens import TokenStore

__all__ = ["create_app"]

HEARTBEAT_S = 2.0


_error = error_response


def _known_error(exc: DesktopKBError) -> Any:
    message, hint = user_message(exc)
    text = f"{message} {hint}".strip()
    if isinstance(exc, Busy):
        return _error(429, text, "rate_limit_error", code="queue_full", headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, KnowledgeBaseNotFound):
        return _error(404, text, "invalid_request_error", "model", "model_not_found")
    if isinstance(exc, QuestionTooLong):
        return _error(400, text, "invalid_request_error", exc.param, "context_length_exceeded")
    if isinstance(exc, ConfigError):  # a bad filter value, an owner scope the base requires
        return _error(400, text, "invalid_request_error", getattr(exc, "param", "filter"), "invalid_filter")
    return _error(500, text, "server_error", code=type(exc).__name__)


def create_app(service: Service, tokens: TokenStore) -> Any:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, StreamingResponse
    from starlette.exceptions import HTTPException

    app = FastAPI(title="desktop-kb local API", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(Guard, tokens=tokens)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Any:  # 404, 405, a body that is not text
        return _error(exc.status_code, str(exc.detail), "invalid_request_error", code=f"http_{exc.status_code}",
                      headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Any:
        first = (exc.errors() or [{}])[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or None
        if first.get("type") == "json_invalid":
            return _error(400, "The request body is not valid JSON.", "invalid_request_error", code="invalid_json")
        return _error(422, f"{where or 'body'}: {first.get('msg', 'invalid')}", "invalid_request_error", where,
                      "invalid_value")

    @app.exception_handler(DesktopKBError)
    async def known(request: Request, exc: DesktopKBError) -> Any:
        return _known_error(exc)

    @app.get("/v1/models")
    async def models() -> Any:
        now = int(time.time())
        return {"object": "list", "data": [{"id": m, "object": "model", "created": now, "owned_by": "desktop-kb"}
                                           for m in service.models()]}

    @app.post("/v1/search")
    async def search(req: SearchRequest) -> Any:
        flt = req.filters()
        hits = await asyncio.to_thread(service.search, req.query, req.model, flt, req.top_k, req.mode)
        return {"object": "list", "model": req.model, "data": [hit_record(h, n) for n, h in enumerate(hits, 1)]}

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest, request: Request) -> Any:
        flt = req.filters()
        # what would stop it is a 4xx before anything queues, and a full queue a 429, also when streamed
        await asyncio.to_thread(service.check, req.question(), req.model, flt)
        place = service.queue.reserve()
        cancel = CancelToken()
        job = asyncio.get_running_loop().run_in_executor(service.executor, functools.partial(
            service.ask, req.question(), req.model, flt, req.history(), reading_order=req.reading_order,
            cancel=cancel, place=place))
        job.add_done_callback(_retrieved)
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        if req.stream:
            return StreamingResponse(_stream(job, cancel, cid, created, req.model), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-store"})
        try:
            while not job.done():
                if await request.is_disconnected():
                    cancel.cancel()
                    break
                await asyncio.wait({job}, timeout=0.25)
            answer = await job
        except Cancelled:
            return _error(499, "The client went away; the answer was stopped.", "cancelled")
        return JSONResponse({
            "id": cid, "object": "chat.completion", "created": created, "model": req.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": answer.prompt_tokens or 0, "completion_tokens": 0,
                      "total_tokens": answer.prompt_tokens or 0},
            "desktop_kb": answer_record(answer),
        })

    return app


def _retrieved(job: asyncio.Future[Any]) -> None:
    """Mark a job's exception as seen (a stream whose client left never reads it)."""
    if not job.cancelled():
        job.exception()


def _chunk(cid: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None,
           extra: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if extra is not None:
        body["desktop_kb"] = extra
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


async def _stream(job: asyncio.Future[Any], cancel: CancelToken, cid: str, created: int, model: str) -> AsyncIterator[str]:
    """Heartbeats while the answer is made and checked, then the checked text, then its record.
    A client that disconnects ends this generator: its answer is cancelled."""
    try:
        yield _chunk(cid, created, model, {"role": "assistant", "content": ""})
        while not job.done():
            done, _ = await asyncio.wait({job}, timeout=HEARTBEAT_S)
            if not done:
                yield ": working\n\n"
        try:
            answer = job.result()
        except DesktopKBError as exc:  # after the 200: the error as an event, in the error's shape
            yield f"data: {bytes(_known_error(exc).body).decode()}\n\n"
            return
        words = answer.text.split(" ")
        for k in range(0, len(words), 8):  # the checked text, a few words a chunk
            piece = " ".join(words[k:k + 8]) + (" " if k + 8 < len(words) else "")
            yield _chunk(cid, created, model, {"content": piece})
        yield _chunk(cid, created, model, {}, "stop", answer_record(answer))
        yield "data: [DONE]\n\n"
    finally:
        if not job.done():
            cancel.cancel()
