"""``desktop-kb eval claims FILE``: the product's whole post-generation check on given answers.

Each line of FILE is one JSON object::

    {"id": "q1", "question": "Who approved the contract?", "answer": "Ms. Lin approved it [1].",
     "passages": [{"title": "Contract", "text": "The contract was signed by Ms. Lin and approved by Mr. Park."}],
     "kind": "in_passage_swap", "expect": "reject"}

``kind`` and ``expect`` ("accept" | "reject") are optional. The passages are numbered 1..n in
order, as if retrieved; the knowledge base's document frequencies are those of all the distinct
passages in the file. Every record goes through :func:`desktop_kb.verify.answer_check.check_answer`
(exactly what ``ask`` runs after the model has answered, without the correction retries, which
would generate), with the real embedder and the real LLM as judge.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..protocols import SpanJudge, Verifier, YesNoScorer
from ..types import Chunk, Hit

__all__ = ["ClaimRecord", "load_records", "run_claims"]

EXPECT = ("accept", "reject")


@dataclass(frozen=True)
class ClaimRecord:
    line: int
    id: str
    question: str
    answer: str
    passages: tuple[tuple[str, str], ...]  # (title, text)
    kind: str = ""
    expect: str | None = None


def _string(rec: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = rec.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ConfigError(f"{where}: \"{key}\" must be a non-empty string"
                          + ("" if key in rec else " (it is missing)") + ".")
    return value


def _record(rec: Any, where: str, line: int) -> ClaimRecord:
    if not isinstance(rec, dict):
        raise ConfigError(f"{where}: each line must be a JSON object.")
    rid = rec.get("id")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool) or not str(rid).strip():
        raise ConfigError(f"{where}: \"id\" must be a non-empty string or number.")
    passages = rec.get("passages")
    if not isinstance(passages, list) or not passages:
        raise ConfigError(f"{where}: \"passages\" must be a non-empty list of {{\"title\", \"text\"}} objects.")
    parsed = []
    for k, p in enumerate(passages, 1):
        if not isinstance(p, dict) or not isinstance(p.get("text"), str) or not p["text"].strip():
            raise ConfigError(f"{where}: passage {k} must be an object with a non-empty \"text\".")
        title = p.get("title", "")
        if not isinstance(title, str):
            raise ConfigError(f"{where}: passage {k}'s \"title\" must be a string.")
        parsed.append((title, p["text"]))
    expect = rec.get("expect")
    if expect is not None and expect not in EXPECT:
        raise ConfigError(f"{where}: \"expect\" must be \"accept\" or \"reject\", not {expect!r}.")
    kind = rec.get("kind", "")
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: \"kind\" must be a string.")
    return ClaimRecord(line, str(rid), _string(rec, "question", where), _string(rec, "answer", where),
                       tuple(parsed), kind, expect)


def load_records(path: Path) -> list[ClaimRecord]:
    """The records of ``path``; a clear error naming the line for anything malformed."""
    if not path.is_file():
        raise ConfigError(f"{path} not found.", "Pass a JSONL file with one claim record a line.")
    out: list[ClaimRecord] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for line, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            where = f"{path}, line {line}"
            try:
                value = json.loads(raw)
            except ValueError as exc:
                raise ConfigError(f"{where} is not valid JSON: {exc}") from None
            rec = _record(value, where, line)
            if rec.id in seen:
                raise ConfigError(f"{where}: the id {rec.id!r} was used before.")
            seen.add(rec.id)
            out.append(rec)
    if not out:
        raise ConfigError(f"{path} holds no records.", "Write one JSON object a line.")
    return out


def _hit(title: str, text: str) -> Hit:
    doc = hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:16]
    return Hit(Chunk(doc, doc, f"/claims/{doc}.md", 0, text, (title,) if title.strip() else (), 0, len(text)),
               "claims", 1.0)


def run_claims(records: Sequence[ClaimRecord], *, options: Any, scorer: YesNoScorer | SpanJudge | None,
               similarity: Callable[[str, str], float] | None = None, verifier: Verifier | None = None,
               on_item: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Every record through the answer check; per record the decision and its reasons, per kind
    the accept rates, and the time per record."""
    from ..text.term_stats import TermStats
    from ..verify.answer_check import check_answer
    from ..verify.citations import validate

    hits = {p: _hit(*p) for r in records for p in r.passages}
    stats = TermStats.from_texts(f"{t} {x}" for t, x in hits)
    results: list[dict[str, Any]] = []
    times: list[float] = []
    judge_ms: list[float] = []
    for i, r in enumerate(records, 1):
        passages = [hits[p] for p in r.passages]
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        checked = check_answer(
            r.question, r.answer, passages,
            lambda text, ps=passages, q=r.question: validate(text, ps, q, stats=stats, similarity=similarity),
            options=options, scorer=scorer, verifier=verifier, stats=stats, timings=timings)
        times.append((time.perf_counter() - t0) * 1000)
        if "judge" in timings:
            judge_ms.append(timings["judge"])
        by = None if checked.accepted else ("words" if checked.withheld is None else
                                            "judge" if checked.judge_score is not None or not checked.verdicts
                                            else "verifier")
        rec: dict[str, Any] = {"id": r.id, "kind": r.kind, "accepted": checked.accepted, "rejected_by": by,
                               "reasons": list(checked.problems if not checked.accepted else ()),
                               "notes": list(checked.problems if checked.accepted else ()),
                               "judge_score": checked.judge_score, "ms": round(times[-1], 1)}
        if checked.verdicts:  # the trained verifier's (graded): the answer's weakest sentence decides its grade
            rec["verdicts"] = [{"verdict": v.verdict, "score": v.score} for v in checked.verdicts]
            rec["grade"] = ("unsupported" if not checked.accepted else
                            "uncertain" if any(v.verdict == "uncertain" for v in checked.verdicts) else "supported")
        elif verifier is not None and options.verify:
            rec["grade"] = "unsupported" if not checked.accepted else "supported"
        if checked.answerability is not None:
            a = checked.answerability
            rec |= {"judge_span": a.span, "judge_bound": a.bound, "missing_terms": list(a.missing_terms),
                    "threshold": a.threshold, "core": a.core, "core_odds": a.core_odds, "core_gap": a.core_gap}
        if checked.accepted and checked.text != r.answer:
            rec["text"] = checked.text  # as repaired (a citation renumbered, a sentence removed)
        if r.expect is not None:
            rec["expect"] = r.expect
        results.append(rec)
        if on_item is not None:
            on_item(i, len(records))
    return {"records": len(records), "results": results, "kinds": _kinds(results),
            "timings_ms": _timings(times, judge_ms)}


def _kinds(results: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    kinds: dict[str, dict[str, Any]] = {}
    for r in results:
        k = kinds.setdefault(r["kind"] or "-", {"n": 0, "accepted": 0, "judged": 0})
        k["n"] += 1
        k["accepted"] += int(r["accepted"])
        k["judged"] += int(r["judge_score"] is not None)
        if "grade" in r:
            k[r["grade"]] = k.get(r["grade"], 0) + 1
        if "expect" in r:
            k.setdefault("as_expected", 0)
            k["as_expected"] += int(r["accepted"] == (r["expect"] == "accept"))
    for k in kinds.values():
        k["accept_rate"] = round(k["accepted"] / k["n"], 4)
        for grade in ("supported", "uncertain", "unsupported"):
            if grade in k:
                k[grade + "_rate"] = round(k[grade] / k["n"], 4)
        if "as_expected" in k:
            k["as_expected_rate"] = round(k["as_expected"] / k["n"], 4)
    return kinds


def _timings(times: Sequence[float], judge_ms: Sequence[float]) -> dict[str, Any]:
    def pct(v: Sequence[float], q: float) -> float | None:
        return round(sorted(v)[min(len(v) - 1, int(q * len(v)))], 1) if v else None

    return {"mean": round(statistics.fmean(times), 1) if times else None, "p50": pct(times, 0.5),
            "p95": pct(times, 0.95), "judge_mean": round(statistics.fmean(judge_ms), 1) if judge_ms else None,
            "judged": len(judge_ms)}
