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
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from ..errors import Cancelled, ConfigError, DesktopKBError, KnowledgeBaseNotFound, user_message
from ..progress import CancelToken
from .schemas import MAX_BODY_BYTES, ChatRequest, SearchRequest
from .service import Busy, Service, answer_record, hit_record
from .tokens import TokenStore

__all__ = ["create_app"]

HEARTBEAT_S = 2.0


def _error(status: int, message: str, kind: str, param: str | None = None, code: str | None = None,
           headers: dict[str, str] | None = None) -> Any:
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status, headers=headers)


def _known_error(exc: DesktopKBError) -> Any:
    message, hint = user_message(exc)
    text = f"{message} {hint}".strip()
    if isinstance(exc, Busy):
        return _error(429, text, "rate_limit_error", code="queue_full", headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, KnowledgeBaseNotFound):
        return _error(404, text, "invalid_request_error", "model", "model_not_found")
    if isinstance(exc, ConfigError):  # a bad filter value, an owner scope the base requires
        return _error(400, text, "invalid_request_error", getattr(exc, "param", "filter"), "invalid_filter")
    return _error(500, text, "server_error", code=type(exc).__name__)


def create_app(service: Service, tokens: TokenStore) -> Any:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, StreamingResponse

    app = FastAPI(title="desktop-kb local API", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Any:
        """Body size first (by its declared length, then as read), then the token."""
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_BODY_BYTES):
            return _error(413, f"The request body is over {MAX_BODY_BYTES // 1024} KB.", "invalid_request_error",
                          code="body_too_large")
        auth = request.headers.get("authorization", "")
        scheme, _, secret = auth.partition(" ")
        if scheme.lower() != "bearer" or tokens.check(secret.strip()) is None:
            return _error(401, "A valid API token is needed: Authorization: Bearer <token> "
                               "(create one in the app or with `desktop-kb api token create NAME`).",
                          "authentication_error", code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
        if request.method == "POST":
            body = await request.body()
            if len(body) > MAX_BODY_BYTES:
                return _error(413, f"The request body is over {MAX_BODY_BYTES // 1024} KB.", "invalid_request_error",
                              code="body_too_large")
        return await call_next(request)

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
        service.kbs(req.model)  # an unknown model is a 404 before anything queues
        service.queue.check_room()  # a full queue is a 429, also for a streamed reply
        cancel = CancelToken()
        job = asyncio.ensure_future(asyncio.to_thread(
            service.ask, req.question(), req.model, flt, req.history(), reading_order=req.reading_order, cancel=cancel))
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
        except DesktopKBError as exc:
            message, hint = user_message(exc)
            code = "queue_full" if isinstance(exc, Busy) else type(exc).__name__
            yield f"data: {json.dumps({'error': {'message': f'{message} {hint}'.strip(), 'code': code}})}\n\n"
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
