"""The answer queue and the request guard under clients that leave, race or never finish sending
(the local API over real HTTP on loopback; fake models: plumbing)."""

from __future__ import annotations

import json
import socket
import threading
import time
from urllib.parse import urlparse

import httpx

LONG = " ".join(["Invoices are due in 30 days [1]."] * 12)
ASK = {"messages": [{"role": "user", "content": "When must invoices be paid?"}]}


def _raw(s, head: str, body: bytes = b"", timeout: float = 20.0) -> bytes:
    """A hand-written request on a socket; the server's reply (what arrives before it closes)."""
    u = urlparse(s.url)
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as sock:
        sock.sendall(head.encode() + body)
        reply = b""
        while b"\r\n\r\n" not in reply:
            part = sock.recv(65536)
            if not part:
                break
            reply += part
        return reply


def test_a_client_that_leaves_a_plain_request_cancels_its_answer(serve):
    s = serve(delay_s=0.5, text=LONG)
    try:
        httpx.post(s.url + "/v1/chat/completions", headers=s.headers(), json=ASK, timeout=1.5)
    except httpx.ReadTimeout:
        pass  # the client gave up and closed its connection
    assert s.gen.cancelled.wait(10), "a non-streamed answer went on after its client left"


def test_a_waiting_client_that_leaves_gives_its_place_back(serve):
    s = serve(delay_s=0.1, text=LONG, max_waiting=1)
    first = threading.Thread(target=lambda: httpx.post(s.url + "/v1/chat/completions", headers=s.headers(),
                                                       json=ASK, timeout=60))
    first.start()  # holds the model for ~8 s
    time.sleep(0.5)
    with httpx.stream("POST", s.url + "/v1/chat/completions", headers=s.headers(), timeout=30,
                      json={**ASK, "stream": True}) as r:
        assert r.status_code == 200  # the one waiting place
    time.sleep(1.5)  # it left while waiting
    with httpx.stream("POST", s.url + "/v1/chat/completions", headers=s.headers(), timeout=30,
                      json={**ASK, "stream": True}) as r:
        assert r.status_code == 200, "the place of a client that left was still counted"
    first.join(60)


def test_racing_streams_get_a_429_not_an_error_inside_a_200(serve):
    s = serve(delay_s=0.3, text=LONG, max_waiting=0)
    barrier, answered = threading.Barrier(6), threading.Barrier(6)
    statuses: list[int] = []

    def ask() -> None:
        barrier.wait()
        with httpx.stream("POST", s.url + "/v1/chat/completions", headers=s.headers(), timeout=30,
                          json={**ASK, "stream": True}) as r:
            statuses.append(r.status_code)
            answered.wait(30)  # nobody leaves (and frees a place) before all have their status

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(statuses) == [200, 429, 429, 429, 429, 429], statuses


def test_an_owner_scope_error_is_a_400_before_a_stream_starts(serve):
    s = serve()
    s.lib.create_kb("hr", require_owner=True)
    r = httpx.post(s.url + "/v1/chat/completions", headers=s.headers(),
                   json={**ASK, "model": "kb:hr", "stream": True}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["param"] == "owner", r.text


def test_a_chunked_body_is_refused_once_it_passes_the_limit(serve):
    s = serve()
    head = (f"POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {s.token}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"a" * 65536
    body = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(5))  # 320 KB, never ended
    reply = _raw(s, head, body)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]


def test_a_body_that_never_arrives_times_out(serve, monkeypatch):
    from desktop_kb.api import guard

    monkeypatch.setattr(guard, "BODY_TIMEOUT_S", 1.0)
    s = serve()
    head = (f"POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {s.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
    started = time.monotonic()
    reply = _raw(s, head, b'{"query"')
    assert reply.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 10, reply[:200]
    assert json.loads(reply.split(b"\r\n\r\n", 1)[1] or b"{}").get("error", {}).get("code") in (None, "timeout")


def test_a_connection_that_never_finishes_its_headers_is_closed(serve, monkeypatch):
    from desktop_kb.api import server

    monkeypatch.setattr(server, "HEADERS_TIMEOUT_S", 1.0)
    s = serve()
    u = urlparse(s.url)
    with socket.create_connection((u.hostname, u.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\n")  # no token needed to try this
        started = time.monotonic()
        assert sock.recv(1024) == b"" and time.monotonic() - started < 8  # closed by the server
    assert httpx.get(s.url + "/v1/models", headers=s.headers()).status_code == 200
