"""An answer's citations as its readers show them: file, pages, heading, the passage's offsets,
the quote, the supporting sentences cut from the passage, and the verdict. One reading below both
the command line (``ask --json``) and the local API / MCP (``answer_record``), so their JSON
cannot drift; each names the fields as its documentation says (docs/api.md, the README)."""

from __future__ import annotations

from dataclasses import dataclass

from ..types import Answer, Citation

__all__ = ["CitedSource", "cited_sources"]


@dataclass(frozen=True)
class CitedSource:
    citation: Citation  # file, pages, heading, the passage's offsets, the quote
    evidence: tuple[tuple[int, int, str], ...]  # the supporting sentences: offsets and text
    verdict: str | None  # the trained verifier's, else "supported" for an answered answer's citations


def cited_sources(a: Answer) -> list[CitedSource]:
    verdict_of = {n: v.verdict for v in a.verdicts for n in v.citations}
    out = []
    for c in a.citations:
        chunk = a.passages[c.n - 1].chunk if 1 <= c.n <= len(a.passages) else None
        text, at = (chunk.text, chunk.start) if chunk is not None else ("", c.start)
        evidence = tuple((s, e, text[max(0, s - at): max(0, e - at)]) for s, e in c.evidence)
        out.append(CitedSource(c, evidence, verdict_of.get(c.n, "supported" if a.status == "answered" else None)))
    return out
