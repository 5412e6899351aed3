"""Conversations, saved per knowledge base as JSON: ``<data_dir>/conversations/<kb>.json``.

When several knowledge bases are asked together the file is named after all of them, sorted and
joined with ``+``. Each file holds a list of conversations; each conversation its turns with the
answer text, status notes and citations (enough to reopen footnotes later).

No Qt here: this module is plain data and file I/O (small files, written atomically).
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diskspace import write_text_atomic
from ..types import Answer, Citation
from ..verify.citations import UNCITED
from ..verify.judge import NOT_JUDGED

__all__ = ["Conversation", "ConversationStore", "Turn", "kb_key"]

FORMAT_VERSION = 2  # 2: a conversation's own name, each turn's seconds (version 1 files read as they are)


@dataclass
class Turn:
    question: str
    answer: str = ""
    status: str = "pending"  # pending | answered | refused | clarify | stopped | failed
    citations: list[Citation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # status lines: refusal reason, rerank unavailable…
    # passages retrieved for an answer without citations (refused / clarify), to look at
    passages: list[Citation] = field(default_factory=list)
    rerank_degraded: bool = False
    uncited: list[str] = field(default_factory=list)  # answer sentences no passage backs
    uncertain: list[str] = field(default_factory=list)  # sentences the verifier could not confirm
    removed: list[str] = field(default_factory=list)  # sentences taken out: no cited passage supports them
    filter: str = ""  # the filter bar's choice this answer was searched with ("" = everything)
    asked_at: int = field(default_factory=lambda: int(time.time()))
    seconds: float = 0.0  # from the question to the checked answer (0: not finished, or an older file)
    scope: str = ""  # what a section / document answer was read from (Answer.scope; answered only)

    @property
    def finished(self) -> bool:
        return self.status != "pending"

    def citation(self, n: int) -> Citation | None:
        return next((c for c in self.citations if c.n == n), None)

    def apply_answer(self, answer: Answer) -> None:
        self.answer = answer.text
        self.status = answer.status
        self.citations = list(answer.citations)
        self.passages = [] if self.citations else [
            Citation(n=i, kb=h.kb, doc_id=h.chunk.doc_id, path=h.chunk.path, pages=h.chunk.pages,
                     heading_path=h.chunk.heading_path, start=h.chunk.start, end=h.chunk.end)
            for i, h in enumerate(answer.passages, 1)]
        self.rerank_degraded = bool(answer.rerank_degraded)
        self.uncited = [p.removeprefix(UNCITED) for p in answer.problems
                        if answer.status == "answered" and p.startswith(UNCITED)]
        self.removed = [sentence for sentence, _ in answer.removed]
        self.uncertain = [v.sentence for v in answer.verdicts if v.verdict == "uncertain"]
        self.notes = []
        if answer.fallback is not None and answer.fallback.message:
            self.notes.append(answer.fallback.message)
        self.scope = answer.scope if answer.status == "answered" else ""  # a refusal was answered from nothing
        self.notes.extend(p for p in answer.problems if p.startswith(NOT_JUDGED))
        # (a refusal's own text says why, in the passage's words: no second reason under it)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["citations"] = [dataclasses.asdict(c) for c in self.citations]
        d["passages"] = [dataclasses.asdict(c) for c in self.passages]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Turn:
        known = {f.name for f in dataclasses.fields(Citation)}

        def citation(raw: dict[str, Any]) -> Citation:
            c = dict(raw)
            c["pages"] = tuple(c.get("pages") or ())
            c["heading_path"] = tuple(c.get("heading_path") or ())
            c["evidence"] = tuple(tuple(int(x) for x in span) for span in c.get("evidence") or ())
            return Citation(**{k: v for k, v in c.items() if k in known})

        cites = [citation(c) for c in d.get("citations", [])]
        passages = [citation(c) for c in d.get("passages", [])]
        status = str(d.get("status", "answered"))
        return cls(
            question=str(d.get("question", "")), answer=str(d.get("answer", "")),
            status="stopped" if status == "pending" else status, citations=cites,
            notes=[str(n) for n in d.get("notes", [])], passages=passages, rerank_degraded=bool(d.get("rerank_degraded", False)),
            uncited=[str(u) for u in d.get("uncited", [])], removed=[str(r) for r in d.get("removed", [])],
            uncertain=[str(u) for u in d.get("uncertain", [])],
            filter=str(d.get("filter", "")), asked_at=int(d.get("asked_at", 0)),
            seconds=float(d.get("seconds", 0.0) or 0.0), scope=str(d.get("scope", "") or ""),
        )


@dataclass
class Conversation:
    kbs: tuple[str, ...]
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    turns: list[Turn] = field(default_factory=list)
    created_at: int = field(default_factory=lambda: int(time.time()))
    name: str = ""  # the user's own title ("" = the first question)

    @property
    def title(self) -> str:
        if self.name.strip():
            return self.name.strip()
        first = self.turns[0].question.strip().splitlines()[0] if self.turns and self.turns[0].question.strip() else ""
        return first[:60] + ("…" if len(first) > 60 else "")

    def history(self, max_turns: int) -> list[tuple[str, str]]:
        """Earlier (question, answer) pairs to pass to ``Library.ask`` (answered turns only)."""
        pairs = [(t.question, t.answer) for t in self.turns if t.status in ("answered", "clarify") and t.answer]
        return pairs[-max_turns:] if max_turns > 0 else []

    def matches(self, text: str) -> bool:
        """``text`` (any case) is in its title, a question or an answer."""
        needle = text.strip().casefold()
        return not needle or any(needle in s.casefold() for s in
                                 (self.title, *(t.question for t in self.turns), *(t.answer for t in self.turns)))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kbs": list(self.kbs), "created_at": self.created_at, "name": self.name,
                "turns": [t.to_json() for t in self.turns]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Conversation:
        return cls(kbs=tuple(d.get("kbs", ())), id=str(d.get("id") or uuid.uuid4().hex[:12]),
                   turns=[Turn.from_json(t) for t in d.get("turns", [])], created_at=int(d.get("created_at", 0)),
                   name=str(d.get("name", "") or ""))


def kb_key(kbs: Sequence[str]) -> str:
    return "+".join(sorted(set(kbs)))


class ConversationStore:
    def __init__(self, data_dir: Path) -> None:
        self.root = Path(data_dir) / "conversations"

    def path(self, kbs: Sequence[str]) -> Path:
        return self.root / f"{kb_key(kbs)}.json"

    def load(self, kbs: Sequence[str]) -> list[Conversation]:
        """The saved conversations for this set of knowledge bases, newest first."""
        path = self.path(kbs)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            convs = [Conversation.from_json(c) for c in raw.get("conversations", [])]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, TypeError, AttributeError):
            # a damaged file must not stop the app; keep it aside for the user
            path.replace(path.with_suffix(".json.damaged"))
            return []
        return sorted((c for c in convs if c.turns), key=lambda c: c.created_at, reverse=True)

    def _write(self, kbs: Sequence[str], convs: Sequence[Conversation]) -> Path:
        path = self.path(kbs)
        if not convs:
            path.unlink(missing_ok=True)
            return path
        self.root.mkdir(parents=True, exist_ok=True)
        data = {"version": FORMAT_VERSION, "kbs": sorted(set(kbs)), "conversations": [c.to_json() for c in convs]}
        write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=1), "to save the conversation")
        return path

    def save(self, conv: Conversation) -> Path:
        convs = [c for c in self.load(conv.kbs) if c.id != conv.id]
        if conv.turns:
            convs.insert(0, conv)
        return self._write(conv.kbs, convs)

    def delete(self, kbs: Sequence[str], conv_id: str) -> Conversation | None:
        """Delete one conversation; returns it (to put back with :meth:`restore`), or None."""
        convs = self.load(kbs)
        gone = next((c for c in convs if c.id == conv_id), None)
        if gone is not None:
            self._write(kbs, [c for c in convs if c.id != conv_id])
        return gone

    def restore(self, conv: Conversation) -> None:
        """Put a deleted conversation back where its date puts it (undo)."""
        convs = [c for c in self.load(conv.kbs) if c.id != conv.id] + [conv]
        self._write(conv.kbs, sorted(convs, key=lambda c: c.created_at, reverse=True))

    def get(self, kbs: Sequence[str], conv_id: str) -> Conversation | None:
        return next((c for c in self.load(kbs) if c.id == conv_id), None)

    def rename(self, kbs: Sequence[str], conv_id: str, name: str) -> str:
        """Store ``name`` (spaces run together, at most 120 characters) and return it as stored."""
        name = " ".join(name.split())[:120]
        convs = self.load(kbs)
        for c in convs:
            if c.id == conv_id:
                c.name = name
        self._write(kbs, convs)
        return name

    def forget_kb(self, name: str) -> None:
        """A knowledge base was deleted: drop the conversations that used it."""
        if not self.root.is_dir():
            return
        for path in self.root.glob("*.json"):
            if name in path.stem.split("+"):
                path.unlink(missing_ok=True)

    def rename_kb(self, old: str, new: str) -> None:
        if not self.root.is_dir():
            return
        for path in list(self.root.glob("*.json")):
            parts = path.stem.split("+")
            if old not in parts:
                continue
            kbs = [new if p == old else p for p in parts]
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            for c in raw.get("conversations", []):
                c["kbs"] = [new if k == old else k for k in c.get("kbs", [])]
            raw["kbs"] = sorted(kbs)
            target = self.path(kbs)
            self.root.mkdir(parents=True, exist_ok=True)
            write_text_atomic(target, json.dumps(raw, ensure_ascii=False, indent=1), "to save the conversations")
            if target != path:
                path.unlink(missing_ok=True)
