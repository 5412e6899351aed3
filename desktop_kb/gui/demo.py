"""Sample documents and deterministic stand-in models for the screenshot scenario
(``desktop-kb-gui --screenshot DIR --fake-models``) when real models are not installed.

The stand-ins are for demonstrating the interface only: the "answers" are scripted, though every
citation they carry points at a real indexed passage found through ``Library.search``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import Cancelled
from ..library.kb import Library
from ..progress import CancelToken
from ..types import Answer, Citation

__all__ = ["QUESTIONS", "ScriptedGenerator", "make_demo_ask", "minimal_json", "write_sample_documents"]

INVOICE_MD = """# Invoice INV-2024-031

Northwind Traders Ltd. · 12 Harbour Street · Bristol

## Payment terms

The invoice is due on March 15, 2024. Please pay by bank transfer to IBAN GB29 NWBK 6016 1331 9268 19
and quote the invoice number as the payment reference.

## Items

- Consulting, February 2024: 32 hours at £95 = £3,040
- Travel expenses: £214

Total due: £3,254 (VAT included).
"""

HANDBOOK_MD = """# 员工手册

## 第三章 休假制度

### 年假

员工入职满一年后，每年可享受十五天带薪年假。年假需提前两周通过人事系统申请，并经直属主管批准。
未使用的年假最多可结转五天至下一年度，结转的天数须在次年三月三十一日前休完。

### 病假

员工因病不能工作时，应在当天上午十点前通知直属主管。连续病假超过三天的，需提交医院证明。

## 第四章 报销

差旅费用应在出差结束后三十天内通过财务系统报销，并附上发票原件。
"""

CONTRACT_HTML = """
<h1>Service Agreement</h1>
<p>This agreement is made between Northwind Traders Ltd. ("the Supplier") and Contoso GmbH ("the Client").</p>
<h2>1. Scope</h2>
<p>The Supplier provides consulting services as described in the statement of work. Changes to the scope
must be agreed in writing by both parties.</p>
<h2>2. Fees</h2>
<p>Fees are invoiced monthly at the hourly rates listed in Annex A. Travel is reimbursed at cost.</p>
<h2 style="page-break-before: always;">3. Late payment</h2>
<p>Invoices are payable within 30 days. Late payments incur interest of 2% per month on the outstanding
amount, and the Supplier may suspend the services after a written reminder.</p>
<h2>4. Termination</h2>
<p>Either party may terminate this agreement with three months' notice to the end of a calendar quarter.</p>
"""

# The scenario's questions: (question, scripted answer, {n: words the cited passage contains}).
QUESTIONS: dict[str, tuple[str, str, dict[int, str]]] = {
    "en": (
        "When is invoice INV-2024-031 due?",
        "Invoice **INV-2024-031** is due on **March 15, 2024** [1], payable by bank transfer to the "
        "account given on the invoice [1].",
        {1: "due on March 15, 2024"},
    ),
    "pdf": (
        "What interest is charged on late payments?",
        "Late payments incur interest of **2% per month** on the outstanding amount, and the supplier may "
        "suspend the services after a written reminder [1].",
        {1: "Late payments incur interest of 2% per month"},
    ),
    "zh": (
        "入职满一年后有多少天年假？",
        "入职满一年后，每年可享受**十五天带薪年假** [1]。\n\n"
        "- 申请：需提前两周通过人事系统申请，并经直属主管批准 [1]。\n"
        "- 结转：未使用的年假最多可结转五天至下一年度 [1]。",
        {1: "每年可享受十五天带薪年假"},
    ),
}


def write_sample_documents(folder: Path) -> list[Path]:
    """Write the sample Markdown files and a two-page PDF (made with QtGui's PDF writer)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "invoice-INV-2024-031.md").write_text(INVOICE_MD, encoding="utf-8")
    (folder / "员工手册.md").write_text(HANDBOOK_MD, encoding="utf-8")
    pdf = folder / "service-agreement.pdf"
    from PySide6.QtGui import QPageSize, QPdfWriter, QTextDocument

    writer = QPdfWriter(str(pdf))
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A5))
    writer.setResolution(150)
    writer.setTitle("Service Agreement")
    doc = QTextDocument()
    doc.setHtml(CONTRACT_HTML)
    doc.print_(writer)
    del writer
    return sorted(folder.iterdir())


def minimal_json(schema: dict[str, Any]) -> Any:
    """The smallest instance that satisfies a simple JSON schema (for json_schema requests)."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: minimal_json(props.get(k, {})) for k in schema.get("required", list(props))}
    if kind == "array":
        n = int(schema.get("minItems", 0))
        return [minimal_json(schema.get("items", {})) for _ in range(n)]
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


class ScriptedGenerator:
    """A Generator that streams a fixed text word by word (and valid JSON for json_schema)."""

    id = "demo/scripted-generator"

    def __init__(self, text: str = "The invoice is due on March 15 [1].", delay_s: float = 0.02) -> None:
        self.text = text
        self.delay_s = delay_s

    def chat(self, messages: Sequence[dict[str, str]], *, max_tokens: int = 512, temperature: float = 0.0,
             json_schema: dict[str, Any] | None = None, on_token: Callable[[str], None] | None = None,
             cancel: CancelToken | None = None) -> str:
        if json_schema is not None:
            return json.dumps(minimal_json(json_schema))
        out = []
        for token in _tokens(self.text):
            if cancel is not None:
                cancel.raise_if_cancelled()
            time.sleep(self.delay_s)
            out.append(token)
            if on_token is not None:
                on_token(token)
        return "".join(out)


def _tokens(text: str) -> list[str]:
    """Split like an LLM would stream: words for Latin text, 1–2 characters for Chinese."""
    out: list[str] = []
    buf = ""
    for ch in text:
        buf += ch
        if ch == " " or ("\u4e00" <= ch <= "\u9fff" and len(buf) >= 2) or ch in "，。；：\n":
            out.append(buf)
            buf = ""
    if buf:
        out.append(buf)
    return out


def _cite(lib: Library, question: str, kbs: list[str], n: int, words: str) -> Citation | None:
    """A citation for the indexed passage that contains ``words`` (found through search)."""
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words.split()))  # PDF text wraps lines
    for query in (words, question):
        for hit in lib.search(query, kbs=kbs, top_k=20):
            c = hit.chunk
            text = lib.document_markdown(hit.kb, c.doc_id)
            m = pattern.search(text, c.start, c.end)
            if m is None:
                continue
            return Citation(n=n, kb=hit.kb, doc_id=c.doc_id, path=c.path, pages=c.pages,
                            heading_path=c.heading_path, start=c.start, end=c.end, quote=m.group(0),
                            quote_start=m.start(), quote_end=m.end())
    return None


def make_demo_ask(lib: Library, delay_s: float = 0.03) -> Callable[..., Answer]:
    """An ask function with scripted answers for the sample questions (streamed, cancellable)."""

    def ask(question: str, kbs: list[str], history: list[tuple[str, str]], on_token: Callable[[str], None],
            cancel: CancelToken, on_restart: Callable[[], None] | None = None,
            on_stage: Callable[[str, int], None] | None = None) -> Answer:
        key = next((k for k, v in QUESTIONS.items() if v[0] == question),
                   "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in question) else "en")
        _q, text, needles = QUESTIONS[key]
        citations = []
        for n, words in needles.items():
            cancel.raise_if_cancelled()
            c = _cite(lib, question, kbs, n, words)
            if c is not None:
                citations.append(c)
        if len(citations) != len(needles):
            return Answer(question=question, text="", status="refused")
        gen = ScriptedGenerator(text, delay_s)
        gen.chat([{"role": "user", "content": question}], on_token=on_token, cancel=cancel)
        if cancel.cancelled:
            raise Cancelled()
        return Answer(question=question, text=text, status="answered", citations=tuple(citations))

    return ask
