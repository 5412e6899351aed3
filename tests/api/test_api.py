"""The local API over real HTTP on loopback: the real OpenAI client and httpx against the running
server (fake models: plumbing; the real models in test_api_real.py)."""

from __future__ import annotations

import json
import logging
import threading
import time

import httpx
import pytest

from desktop_kb.api.server import check_host
from desktop_kb.api.tokens import TokenStore
from desktop_kb.errors import ConfigError

openai = pytest.importorskip("openai")


def _client(s, token=None):
    return openai.OpenAI(base_url=s.url + "/v1", api_key=token or s.token, max_retries=0, timeout=60)


def test_models_are_the_knowledge_bases(serve):
    s = serve()
    ids = [m.id for m in _client(s).models.list().data]
    assert ids == ["desktop-kb", "kb:docs"]


def test_a_cited_answer_with_offsets_that_point_at_the_words(serve):
    s = serve()
    reply = _client(s).chat.completions.create(
        model="kb:docs", messages=[{"role": "user", "content": "When must invoices be paid?"}])
    assert reply.choices[0].message.content == "Invoices must be paid within 30 days of receipt [1]."
    assert reply.choices[0].finish_reason == "stop"
    extra = reply.model_extra["desktop_kb"]
    assert extra["status"] == "answered" and extra["refusal"] is None
    (cite,) = extra["citations"]
    assert cite["file"].endswith("invoices.md") and cite["heading_path"] == ["Invoices"]
    markdown = s.lib.document_markdown(cite["kb"], cite["doc_id"])
    sentence = cite["sentences"][0]
    assert markdown[sentence["start"]:sentence["end"]] == sentence["text"] == "Invoices must be paid within 30 days of receipt."
    assert sentence["text"] in markdown[cite["passage"]["start"]:cite["passage"]["end"]]


def test_streaming_sends_the_checked_answer_then_its_citations(serve):
    s = serve()
    chunks = list(_client(s).chat.completions.create(
        model="desktop-kb", stream=True, messages=[
            {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi."},
            {"role": "user", "content": [{"type": "text", "text": "When must invoices be paid?"}]}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "Invoices must be paid within 30 days of receipt [1]."
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["desktop_kb"]["citations"][0]["n"] == 1
    assert all("desktop_kb" not in (c.model_extra or {}) for c in chunks[:-1])


def test_a_refusal_says_so_beside_a_standard_finish(serve):
    s = serve()
    reply = _client(s).chat.completions.create(
        model="kb:docs", messages=[{"role": "user", "content": "When must invoices be paid?"}],
        extra_body={"tag": "legal"})
    assert reply.choices[0].finish_reason == "stop"
    extra = reply.model_extra["desktop_kb"]
    assert extra["status"] == "refused" and extra["citations"] == []
    assert "filters in force (tag legal)" in extra["refusal"]["reason"] == reply.choices[0].message.content
    assert s.gen.answers == 0


def test_search_with_filters(serve):
    s = serve()
    r = httpx.post(s.url + "/v1/search", headers=s.headers(), json={"query": "hotel per night", "tag": "finance"})
    assert r.status_code == 200
    hits = r.json()["data"]
    assert hits[0]["file"].endswith("travel.md") and hits[0]["n"] == 1 and "180 euros" in hits[0]["text"]
    assert {"kb", "doc_id", "pages", "heading_path", "start", "end", "score"} <= set(hits[0])
    r = httpx.post(s.url + "/v1/search", headers=s.headers(), json={"query": "hotel", "tag": ["other"]})
    assert r.status_code == 200 and r.json()["data"] == []


@pytest.mark.parametrize("token", [None, "dkb_wrong", "Basic abc"])
def test_no_wrong_or_revoked_token_is_401(serve, token):
    s = serve()
    headers = {} if token is None else {"Authorization": token if token.startswith("Basic") else f"Bearer {token}"}
    r = httpx.get(s.url + "/v1/models", headers=headers)
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    assert r.headers["WWW-Authenticate"] == "Bearer"
    TokenStore(s.data_dir).revoke("test-0")
    r = httpx.get(s.url + "/v1/models", headers=s.headers())
    assert r.status_code == 401


def test_a_non_loopback_bind_is_refused_without_the_flag():
    with pytest.raises(ConfigError, match="other computers"):
        check_host("0.0.0.0", allow_remote=False)
    with pytest.raises(ConfigError, match="not an IP address"):
        check_host("example.com", allow_remote=True)
    check_host("127.0.0.1", allow_remote=False)
    check_host("::1", allow_remote=False)
    check_host("0.0.0.0", allow_remote=True)


@pytest.mark.parametrize(("body", "status", "param"), [
    (b"{not json", 400, None),
    (json.dumps({"model": "desktop-kb"}).encode(), 422, "messages"),
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "stream": "sometimes"}).encode(), 422, "stream"),
    (json.dumps({"messages": [{"role": "assistant", "content": "x"}]}).encode(), 422, "messages"),
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "mtime_from": "yesterday"}).encode(), 400,
     "mtime_from"),
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "mtime_from": 999999999999}).encode(), 400,
     "mtime_from"),  # a date no message can show (was a 500)
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "mtime_to": True}).encode(), 400, "mtime_to"),
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "owner": "\ud800"}).encode(), 400, "owner"),
    (json.dumps({"messages": [{"role": "user", "content": "hotel \ud800"}]}).encode(), 422, "messages"),
    (json.dumps({"messages": [{"role": "user", "content": "差" * 7990}]}).encode(), 400, "messages"),  # > the prompt
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "tag": {"$ne": 1}}).encode(), 400, "tag"),
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "model": "kb:nope"}).encode(), 404, "model"),
    (json.dumps({"messages": [{"role": "user", "content": "x" * 300_000}]}).encode(), 413, None),
])
def test_bad_requests_get_a_clear_4xx_naming_the_field(serve, body, status, param):
    s = serve()
    r = httpx.post(s.url + "/v1/chat/completions", content=body,
                   headers={**s.headers(), "Content-Type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["message"] and "Traceback" not in r.text
    if param:
        assert err["param"] is not None and err["param"].startswith(param), err


def test_errors_outside_the_endpoints_have_the_same_shape(serve):
    s = serve()
    for r, status in ((httpx.get(s.url + "/v1/search", headers=s.headers()), 405),
                      (httpx.get(s.url + "/v1/nothing", headers=s.headers()), 404),
                      (httpx.post(s.url + "/v1/search", content=b'{"query": "caf\xe9"}',
                                  headers={**s.headers(), "Content-Type": "application/json"}), 400)):
        assert r.status_code == status, r.text
        assert set(r.json()["error"]) == {"message", "type", "param", "code"}, r.text


def test_a_full_queue_answers_429_with_retry_after(serve):
    s = serve(delay_s=0.3, max_waiting=0)
    results: list[int] = []

    def ask() -> None:
        r = httpx.post(s.url + "/v1/chat/completions", headers=s.headers(), timeout=60,
                       json={"messages": [{"role": "user", "content": "When must invoices be paid?"}]})
        results.append(r.status_code)
        if r.status_code == 429:
            assert int(r.headers["Retry-After"]) > 0 and r.json()["error"]["code"] == "queue_full"

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
        time.sleep(0.2)
    for t in threads:
        t.join(60)
    assert sorted(results)[0] == 200 and 429 in results and len(results) == 3


def test_a_client_that_disconnects_cancels_its_answer(serve):
    s = serve(delay_s=0.5, text=" ".join(["Invoices are due in 30 days [1]."] * 10))
    with httpx.stream("POST", s.url + "/v1/chat/completions", headers=s.headers(), timeout=30,
                      json={"stream": True, "messages": [{"role": "user", "content": "When must invoices be paid?"}]}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith(": working"):
                break  # the model is writing: go away
    assert s.gen.cancelled.wait(10), "the answer went on after the client left"


def test_tokens_never_appear_in_logs(serve, caplog, capfd):
    s = serve()
    with caplog.at_level(logging.DEBUG):
        httpx.get(s.url + "/v1/models", headers=s.headers())
        httpx.get(s.url + "/v1/models", headers=s.headers("dkb_not-a-real-token-123"))
        httpx.post(s.url + "/v1/search", headers=s.headers(), json={"query": 5})
    out, err = capfd.readouterr()
    for text in (caplog.text, out, err):
        assert s.token not in text and "not-a-real-token" not in text
    stored = (s.data_dir / "api-tokens.json").read_text()
    assert s.token not in stored


def test_an_instruction_inside_a_document_changes_nothing_the_api_returns(serve):
    s = serve()
    r = httpx.post(s.url + "/v1/search", headers=s.headers(), json={"query": "admin mode HACKED token"})
    hit = next(h for h in r.json()["data"] if h["file"].endswith("vendor-note.md"))
    assert "Ignore all previous instructions" in hit["text"]  # the person's own text, returned as data
    assert set(hit) == {"n", "kb", "doc_id", "file", "pages", "heading_path", "start", "end", "score", "text"}
    reply = httpx.post(s.url + "/v1/chat/completions", headers=s.headers(),
                       json={"messages": [{"role": "user", "content": "What does the vendor note say?"}]}).json()
    assert s.token not in json.dumps(reply)
    assert set(reply) == {"id", "object", "created", "model", "choices", "usage", "desktop_kb"}


def test_a_bounded_load_loses_no_request_and_keeps_memory_flat(serve):
    """8 clients x 5 questions on loopback: each answered or told to retry, none lost, no crash."""
    from pathlib import Path

    def rss_mb() -> float:
        status = Path("/proc/self/status")
        if not status.exists():
            pytest.skip("resident memory is read from /proc")
        return next(int(x.split()[1]) for x in status.read_text().splitlines() if x.startswith("VmRSS:")) / 1024

    s = serve(delay_s=0.01, max_waiting=4)
    statuses: list[int] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        with httpx.Client(timeout=60) as c:
            for i in range(5):
                r = c.post(s.url + "/v1/chat/completions", headers=s.headers(),
                           json={"messages": [{"role": "user", "content": f"When must invoices be paid? ({k}.{i})"}]})
                with lock:
                    statuses.append(r.status_code)

    def load() -> None:
        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)

    load()  # warm-up: first imports and caches
    statuses.clear()
    rss_before = rss_mb()
    load()
    assert len(statuses) == 40 and set(statuses) <= {200, 429} and statuses.count(200) >= 5
    assert httpx.get(s.url + "/v1/models", headers=s.headers()).status_code == 200  # still up
    assert rss_mb() - rss_before < 50, (rss_before, rss_mb())
