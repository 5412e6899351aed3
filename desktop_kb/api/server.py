"""Running the local API: on 127.0.0.1 by default; another address only when asked explicitly
(``allow_remote``), with a warning. ``desktop-kb serve`` runs it in the foreground; the app runs it
in a thread of its own process (:class:`ServerThread`), on the app's Library.

Uvicorn's access log is off (a request line carries no token, but nothing of a request is worth
a log line on a person's machine); errors are logged without headers.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from typing import Any

from ..errors import ConfigError
from .app import create_app
from .service import AnswerQueue, Service
from .tokens import TokenStore

__all__ = ["DEFAULT_PORT", "ServerThread", "check_host", "make_server"]

DEFAULT_PORT = 8765
log = logging.getLogger(__name__)


def check_host(host: str, allow_remote: bool) -> None:
    """ConfigError for an address other computers can reach, unless ``allow_remote``."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise ConfigError(f"{host!r} is not an IP address.", "Use 127.0.0.1 (the default).") from None
    if loopback:
        return
    if not allow_remote:
        raise ConfigError(f"Listening on {host} would let other computers ask your documents.",
                          "Keep the default 127.0.0.1, or pass --allow-remote if you really mean it.")
    log.warning("the API listens on %s: other computers on the network can reach it (tokens still needed)", host)


HEADERS_TIMEOUT_S = 10.0  # a connection that has not sent a whole request head by then is closed


def _protocol() -> type:
    """uvicorn's h11 protocol with a deadline for a new connection's first request head: without
    it a client that never finishes its headers holds the connection for good (thousands of them
    ran the server out of file handles)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class TimedH11(H11Protocol):  # type: ignore[misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._head_deadline = self.loop.call_later(HEADERS_TIMEOUT_S, self._no_head)

        def _no_head(self) -> None:
            if getattr(self, "cycle", None) is None and not self.transport.is_closing():
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_deadline.cancel()
            super().connection_lost(exc)

    return TimedH11


def make_server(lib: Any, data_dir: Any, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
                allow_remote: bool = False, max_waiting: int = 4) -> Any:
    """A uvicorn Server for the API over ``lib`` (not started)."""
    import uvicorn

    check_host(host, allow_remote)
    app = create_app(Service(lib, AnswerQueue(max_waiting)), TokenStore(data_dir))
    config = uvicorn.Config(app, host=host, port=port, access_log=False, log_level="warning", lifespan="off",
                            timeout_graceful_shutdown=5, http=_protocol())
    return uvicorn.Server(config)


class ServerThread:
    """The API in a background thread of this process (the app's setting)."""

    def __init__(self, lib: Any, data_dir: Any, host: str = "127.0.0.1", port: int = DEFAULT_PORT, **kw: Any) -> None:
        self.server = make_server(lib, data_dir, host, port, **kw)
        self._thread = threading.Thread(target=self.server.run, name="desktop-kb-api", daemon=True)

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        waited = 0.0
        while not self.server.started and self._thread.is_alive() and waited < timeout:
            threading.Event().wait(0.05)
            waited += 0.05
        if not self.server.started:
            raise ConfigError(f"The API could not start on {self.server.config.host}:{self.server.config.port}.",
                              "Is another program using that port? Choose another one in the settings.")

    @property
    def port(self) -> int:
        servers = getattr(self.server, "servers", None) or []
        for s in servers:
            for sock in s.sockets:
                return int(sock.getsockname()[1])
        return int(self.server.config.port)

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self._thread.join(timeout)
