"""Loaders for the evaluation data: BEIR retrieval sets and QA sets (read in place, never copied).

BEIR layout::

    corpus.jsonl    {"_id", "title", "text"}
    queries.jsonl   {"_id", "text"}
    qrels.tsv       query-id <TAB> corpus-id <TAB> score    (a header line; score > 0 = relevant)

QA layout::

    items.jsonl     {"id", "question", "answers": [...], "context_id", "answerable", ...}
    contexts.jsonl  {"_id", "title", "text"}   the documents to ingest
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["BeirDataset", "Document", "QADataset", "QAItem", "load_beir", "load_qa", "sample_ids",
           "without_articles"]


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class BeirDataset:
    root: Path
    name: str
    corpus: dict[str, Document]
    queries: dict[str, str]  # id -> text, file order
    qrels: dict[str, dict[str, int]]  # query id -> {corpus id: grade}
    corpus_sha1: str  # of the corpus file's bytes: names the cached knowledge base

    def judged_queries(self) -> dict[str, str]:
        """The queries that have at least one relevant document (the ones metrics average over)."""
        return {q: t for q, t in self.queries.items() if any(g > 0 for g in self.qrels.get(q, {}).values())}


@dataclass(frozen=True)
class QAItem:
    id: str
    question: str
    answers: tuple[str, ...]
    context_id: str
    answerable: bool
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class QADataset:
    root: Path
    name: str
    items: tuple[QAItem, ...]
    corpus: dict[str, Document]
    corpus_sha1: str


def _need(path: Path, what: str) -> Path:
    if not path.is_file():
        raise ConfigError(f"{path} not found: {what}",
                          "Pass --dataset DIR with a BEIR folder (corpus.jsonl, queries.jsonl, qrels.tsv) "
                          "or a QA folder (items.jsonl, contexts.jsonl).")
    return path


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"{path}:{lineno} is not valid JSON: {exc}") from exc
            if not isinstance(value, dict):
                raise ConfigError(f"{path}:{lineno} must be a JSON object.")
            yield value


def _sha1(path: Path) -> str:
    h = hashlib.sha1()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _corpus(path: Path) -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    for rec in _jsonl(path):
        if "_id" not in rec:
            raise ConfigError(f"{path}: a record has no \"_id\".")
        doc_id = str(rec["_id"])
        corpus[doc_id] = Document(doc_id, str(rec.get("title") or ""), str(rec.get("text") or ""))
    return corpus


def load_beir(root: Path | str) -> BeirDataset:
    root = Path(root).expanduser().resolve()
    corpus_path = _need(root / "corpus.jsonl", "the documents")
    queries = {str(r["_id"]): str(r.get("text") or "") for r in _jsonl(_need(root / "queries.jsonl", "the queries"))}
    qrels: dict[str, dict[str, int]] = {}
    qrels_path = _need(root / "qrels.tsv", "the relevance judgements")
    with qrels_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) < 3:
                parts = line.split()
            if len(parts) < 3:
                continue
            try:
                grade = int(float(parts[-1]))
            except ValueError:
                if lineno == 1:
                    continue  # the header
                raise ConfigError(f"{qrels_path}:{lineno}: the score {parts[-1]!r} is not a number.") from None
            qrels.setdefault(parts[0], {})[parts[-2] if len(parts) == 3 else parts[2]] = grade
    return BeirDataset(root, root.name, _corpus(corpus_path), queries, qrels, _sha1(corpus_path))


def load_qa(root: Path | str) -> QADataset:
    root = Path(root).expanduser().resolve()
    contexts = _need(root / "contexts.jsonl", "the documents to ingest")
    items: list[QAItem] = []
    for r in _jsonl(_need(root / "items.jsonl", "the questions")):
        answers = r.get("answers") or []
        items.append(QAItem(
            id=str(r.get("id", len(items))), question=str(r.get("question", "")),
            answers=tuple(str(a) for a in answers), context_id=str(r.get("context_id", "")),
            answerable=bool(r.get("answerable", bool(answers))),
            extra={k: v for k, v in r.items() if k not in ("id", "question", "answers", "context_id", "answerable")},
        ))
    return QADataset(root, root.name, tuple(items), _corpus(contexts), _sha1(contexts))


def sample_ids(ids: list[str], limit: int | None) -> list[str]:
    """A deterministic, order-independent sample of ``limit`` ids (all when ``limit`` is None or
    large enough), in the original order. Hashing spreads the sample over the whole set (the first N
    queries of CMRC would all be about the same few documents)."""
    if limit is None or limit >= len(ids):
        return list(ids)
    chosen = set(sorted(ids, key=lambda i: hashlib.sha1(i.encode("utf-8")).hexdigest())[: max(limit, 0)])
    return [i for i in ids if i in chosen]


def without_articles(ds: QADataset, among: list[str], n: int) -> tuple[QADataset, list[str]]:
    """``ds`` with the whole articles (every context of the same title) of ``n`` answerable items
    of ``among`` taken out of the corpus, and every item whose context went with them turned
    unanswerable: questions the knowledge base cannot answer, in the documents' own language and
    style (CMRC has no unanswerable questions of its own). Returns the new set and the items
    made unanswerable. Deterministic (the same hash sample as :func:`sample_ids`)."""
    by_id = {it.id: it for it in ds.items}
    chosen = sample_ids([i for i in among if i in by_id and by_id[i].answerable], n)
    titles = {ds.corpus[by_id[i].context_id].title for i in chosen if by_id[i].context_id in ds.corpus}
    gone = {d for d, doc in ds.corpus.items() if doc.title in titles or any(
        by_id[i].context_id == d for i in chosen)}
    corpus = {d: doc for d, doc in ds.corpus.items() if d not in gone}
    items = tuple(replace(it, answerable=False, answers=()) if it.context_id in gone else it for it in ds.items)
    made = [it.id for it in ds.items if it.context_id in gone and it.answerable]
    sha1 = hashlib.sha1(("\x00".join([ds.corpus_sha1, *sorted(gone)])).encode("utf-8")).hexdigest()
    return QADataset(ds.root, f"{ds.name}-without-{len(titles)}-articles", items, corpus, sha1), made
