"""Tables of contents (ingest/toc.py): built at ingest from headings or a PDF outline, kept in
sync with the file, printed by `kb toc`."""

from __future__ import annotations

import dataclasses
import json

from filemakers import hash_data_dir, make_pdf

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.cli import main
from desktop_kb.ingest.toc import build_toc, flatten
from desktop_kb.library.kb import Library

PARA = "This paragraph explains the topic in some detail so that the section has a real size. " * 6

REPORT = (
    "# Annual report\n\nOverview of the year.\n\n"
    "## 1 Revenue\n\n" + PARA + "\n\n### 1.1 Products\n\n" + PARA + "\n\n### 1.2 Services\n\n" + PARA + "\n\n"
    "## 2 Costs\n\n" + PARA + "\n\n### 2.1 Staff\n\n" + PARA + "\n\n"
    "## 3 Outlook\n\nNext year looks steady.\n"
)


def _lib(settings):
    s = settings.replace(chunk=dataclasses.replace(settings.chunk, size=400, overlap=40))
    return Library.open(s, embedder=HashEmbedder(), reranker=None)


def _report(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.md").write_text(REPORT, encoding="utf-8")
    return docs


def test_three_level_headings_give_the_tree_with_tokens_and_chunks(settings, tmp_path):
    docs = _report(tmp_path)
    with _lib(settings) as lib:
        lib.ingest("kb", [docs])
        doc_id = lib.doc_id_of("kb", docs / "report.md")
        toc = lib.document_toc("kb", doc_id)
        chunks = {c.chunk_id: c for c in lib.document_chunks("kb", doc_id)}
    [root] = toc
    assert root.title == "Annual report" and root.level == 1
    assert [n.title for n in root.children] == ["1 Revenue", "2 Costs", "3 Outlook"]
    revenue, costs, _ = root.children
    assert [n.title for n in revenue.children] == ["1.1 Products", "1.2 Services"]
    assert [n.level for n in flatten(toc)] == [1, 2, 3, 3, 2, 3, 2]
    # a section's chunks are its own and its children's, in reading order, and hold its text
    assert set(revenue.children[0].chunk_ids) <= set(revenue.chunk_ids)
    starts = [chunks[c].start for c in costs.chunk_ids]
    assert starts == sorted(starts) and all("Costs" in chunks[c].heading_path[1] for c in costs.chunk_ids)
    assert not set(costs.chunk_ids) & set(revenue.children[1].chunk_ids[:-1])
    # token estimates add up: a parent is about the sum of its parts
    assert revenue.tokens >= sum(k.tokens for k in revenue.children) > 100
    assert root.tokens >= revenue.tokens + costs.tokens


def test_pdf_outline_gives_the_toc_with_pages(settings, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    pages = [["Introduction to the handbook."], ["Chapter one starts here."], ["Chapter one goes on."],
             ["Chapter two is short."]]
    (docs / "handbook.pdf").write_bytes(make_pdf(pages, outline=[
        ("Introduction", 1, []), ("Chapter One", 2, [("Part 1.1", 3, [])]), ("Chapter Two", 4, [])]))
    with _lib(settings) as lib:
        lib.ingest("kb", [docs])
        toc = lib.document_toc("kb", lib.doc_id_of("kb", docs / "handbook.pdf"))
    assert [(n.title, n.level, n.pages) for n in flatten(toc)] == [
        ("Introduction", 1, (1, 1)), ("Chapter One", 1, (2, 3)), ("Part 1.1", 2, (3, 3)), ("Chapter Two", 1, (4, 4))]
    assert all(n.chunk_ids and n.tokens > 0 for n in flatten(toc))


def test_a_document_without_headings_is_one_node_and_empty_text_none():
    [node] = build_toc("Just a note without headings.", [], title="note")
    assert node.title == "note" and node.level == 1 and node.tokens > 0
    assert build_toc("  \n", []) == ()


def test_toc_follows_the_file_and_kb_toc_prints_it(tmp_path, capsys):
    data = hash_data_dir(tmp_path / "data")
    docs = tmp_path / "docs"
    docs.mkdir()
    f = docs / "guide.md"
    f.write_text("# Guide\n\n## Setup\n\nInstall it.\n\n## Use\n\nRun it.\n", encoding="utf-8")
    assert main(["--data-dir", str(data), "ingest", str(docs), "--kb", "k", "--json"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(data), "kb", "toc", "k", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["title"] for c in out["toc"][0]["children"]] == ["Setup", "Use"]
    f.write_text("# Guide\n\n## Setup\n\nInstall it.\n\n## Use\n\nRun it.\n\n## Troubleshooting\n\nAsk.\n",
                 encoding="utf-8")
    assert main(["--data-dir", str(data), "ingest", str(docs), "--kb", "k", "--json"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", str(data), "kb", "toc", "k", str(f)]) == 0
    text = capsys.readouterr().out
    assert "  Troubleshooting (~" in text and text.startswith("Guide (~")
    doc_id = out["doc_id"]
    f.unlink()
    assert main(["--data-dir", str(data), "ingest", str(docs), "--kb", "k", "--json"]) == 0
    assert not list((data / "kbs" / "k" / "docs").glob(f"{doc_id}*"))  # its Markdown and TOC are gone


def test_a_base_indexed_before_tocs_gets_one_on_demand(settings, tmp_path):
    docs = _report(tmp_path)
    with _lib(settings) as lib:
        lib.ingest("kb", [docs])
        doc_id = lib.doc_id_of("kb", docs / "report.md")
        saved = lib._kb_dir("kb") / "docs" / f"{doc_id}.toc.json"
        first = lib.document_toc("kb", doc_id)
        saved.unlink()  # as an older version left it
        assert lib.document_toc("kb", doc_id) == first and saved.exists()


def test_docx_headings_make_the_toc(settings, tmp_path):
    from filemakers import make_docx

    docs = tmp_path / "docs"
    docs.mkdir()
    make_docx(docs / "contract.docx", [("Heading1", "Obligations"), ("", "The supplier delivers monthly."),
                                       ("Heading1", "Payment"), ("", "The buyer pays within 30 days.")])
    with _lib(settings) as lib:
        lib.ingest("kb", [docs])
        toc = lib.document_toc("kb", lib.doc_id_of("kb", docs / "contract.docx"))
    assert [n.title for n in flatten(toc)] == ["Obligations", "Payment"] and all(n.chunk_ids for n in toc)
