"""What every request meets first: the body's size (by its declared length, then as it arrives: a
chunked body is never read past the limit), the time the body may take to arrive, then the token.

A plain ASGI middleware, not Starlette's ``@app.middleware``: behind that one an endpoint's
``request.is_disconnected()`` never sees the client leave, and a non-streamed answer would run on
for nobody. The body read here is handed to the app as one message; after it the app reads the
connection itself, so it hears the disconnect.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .schemas import MAX_BODY_BYTES
from .tokens import TokenStore

__all__ = ["BODY_TIMEOUT_S", "Guard", "error_response"]

BODY_TIMEOUT_S = 30.0  # a client that has not sent its whole body by then is not coming back


def error_response(status: int, message: str, kind: str, param: str | None = None, code: str | None = None,
                   headers: dict[str, str] | None = None) -> Any:
    """An error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status, headers=headers)


def _too_large() -> Any:
    return error_response(413, f"The request body is over {MAX_BODY_BYTES // 1024} KB.", "invalid_request_error",
                          code="body_too_large")


class _TooLarge(Exception):
    pass


class _Gone(Exception):
    pass


async def _read_body(receive: Any) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def _replay(body: bytes, receive: Any) -> Any:
    """``receive`` for the app: the body read, then the connection's own (its disconnect)."""
    given = False

    async def replay() -> Any:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class Guard:
    def __init__(self, app: Any, tokens: TokenStore) -> None:
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.datastructures import Headers

        headers = Headers(scope=scope)
        size = headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_BODY_BYTES):
            await _too_large()(scope, receive, send)
            return
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or self.tokens.check(secret.strip()) is None:
            await error_response(401, "A valid API token is needed: Authorization: Bearer <token> (create one in "
                                      "the app or with `desktop-kb api token create NAME`).", "authentication_error",
                                 code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        if scope["method"] == "POST":
            try:
                body = await asyncio.wait_for(_read_body(receive), BODY_TIMEOUT_S)
            except _TooLarge:
                await _too_large()(scope, receive, send)
                return
            except TimeoutError:
                await error_response(408, f"The request body did not arrive within {BODY_TIMEOUT_S:.0f} s.",
                                     "invalid_request_error", code="timeout")(scope, receive, send)
                return
            except _Gone:
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)
