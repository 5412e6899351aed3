"""Follow-up chains: a question, then one that leans on it, answered as the app answers them.

    .venv/bin/python benchmarks/bench_followups.py --data-dir D --json > after.json
    PYTHONPATH=<an older checkout> .venv/bin/python benchmarks/bench_followups.py --data-dir D --json > before.json

Each chain is two questions about one passage of ``../shared/eval/qa`` (SQuAD 2.0 dev in English,
CMRC 2018 dev in Chinese): the first is the dataset's own question, asked alone; the second is a
follow-up written for this benchmark that leaves out its subject ("What are its three sources?"),
asked with the first turn (question and the answer given) as history through ``Library.ask`` — the
path the app, the API and MCP take. Only item ids and the follow-up wording live here; questions and
gold answers are read from the dataset. The follow-up is scored against the gold answers of the
dataset question it rewords (``eval.normalize.contains_answer``): answered with the gold, answered
without it, refused. Per turn: seconds and the query the search ran (the rewrite).

Each dataset's whole context set is the base (``eval answers``'s cached one when the data and cache
folders are the same), so a follow-up that loses its subject meets hundreds of unrelated passages.
The load average is printed with the figures: compare runs only when it was alike.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after PYTHONPATH, so an older checkout given there is the one measured
EVAL = Path(os.environ.get("DKB_EVAL_DATA", ROOT.parent / "shared" / "eval"))

# (first question's item id, the follow-up as a user would type it, the item whose gold it answers)
CHAINS: dict[str, list[tuple[str, str, str]]] = {
    "squad2_dev": [
        ("630dafdb2fedf009eebafc4be", "With which Count did the Prince make that arrangement?",
         "c82fa7f33bad07208ffe17ada"),
        ("fb1b248cde5b33d3f66e2feaa", "And where are its oldest maps, gazettes and atlases kept?",
         "fa953df87fd4bf77939d27dc3"),
        ("f3ddd32da22fc512c00f74d2c", "How do those bills pass through Parliament?", "de81932af1bb4faa7487eebea"),
        ("6c0e8d8e0ffecd6ded8f9e28d", "When was its Parental Leave directive created?",
         "7eaba6d8dc2fbfb8bd65efd28"),
        ("babae8ac80da8af1f8cdb9a8b", "How many days does it have to override the mayor's veto?",
         "c309df7b1ff2bfe5f85dcad2e"),
        ("babae8ac80da8af1f8cdb9a8b", "What does it divide itself into?", "feb0aff1d4fdeed8ca86bcbd6"),
        ("fbd6b1c8ba22f8bcbae7bf83c", "What are its three sources?", "b85edddcecd9c415bca4a8b56"),
        ("b6d325dcd6398c103dcdeb955", "And what present-day county is it in?", "ac04efe2aed50f64b50e78cea"),
        ("1eb423a6dc7a0ef5f66f1e281", "What cell type is also used for that in most invertebrates?",
         "e045374c853a2d7fc13185baf"),
        ("036cb20d82edb8eded6fbeb4b", "And the largest medical school there?", "1c556ea3c93bd26e3d79cc9c3"),
        ("bb23bdef87cc2f9d33bee97e8", "Why do they need democratic elections?", "d4f0b2d4f1fd4dbe02a0ebfbf"),
        ("b04eccd9ad2e6aba9cd2fa3fe", "What was developed from his measurements?", "a25ccbb30cee5adaebb3bbb88"),
        ("f75570d427cb0f9b0ef349cae", "When do they apply?", "e872a62b72fbdbace6ecbaef9"),
        ("efeb9b7133aca0eccec72f7f0", "Besides more steam pressure, what did early drivers want when they "
         "fastened it down?", "84bd982c55e6acee334edf4a3"),
        ("f3eed5fba0d67eaadcd3ece22", "Which of the main interactions it describes is the weakest?",
         "c537dc6dfe596c58fe8ba3e8e"),
        ("b80cc7a0c225675ab2fd3eaeb", "In what style were its mass-constructed residential blocks designed?",
         "770bb5ebd00ea8baa26ff5fd9"),
    ],
    "cmrc2018_dev": [
        ("DEV_167_QUERY_0", "它一般生活在水深多少的海域？", "DEV_167_QUERY_3"),
        ("DEV_1784_QUERY_0", "他曾受邀与日本哪家选货店舖推出联名作品？", "DEV_1784_QUERY_2"),
        ("DEV_593_QUERY_0", "2011年1月他以什么形式加入杭州绿城？", "DEV_593_QUERY_3"),
        ("DEV_1004_QUERY_2", "他最后的下场是什么？", "DEV_1004_QUERY_4"),
        ("DEV_1526_QUERY_2", "2006年它获得的财政拨款大约是多少美元？", "DEV_1526_QUERY_3"),
        ("DEV_14_QUERY_1", "离它最近的主要港口是哪一个？", "DEV_14_QUERY_3"),
        ("DEV_490_QUERY_0", "他的父亲选择了哪国国籍？", "DEV_490_QUERY_1"),
        ("DEV_1149_QUERY_2", "它总共可载多少人？", "DEV_1149_QUERY_1"),
        ("DEV_468_QUERY_0", "它主要在哪一段时期播放？", "DEV_468_QUERY_3"),
        ("DEV_1162_QUERY_1", "它的创办人兼总裁是谁？", "DEV_1162_QUERY_2"),
        ("DEV_368_QUERY_1", "最常见的默哀时间是多久？", "DEV_368_QUERY_2"),
        ("DEV_1542_QUERY_0", "那里的科布是简·奥斯丁哪部小说的重要场所？", "DEV_1542_QUERY_2"),
        ("DEV_1064_QUERY_0", "他有哪些著作？", "DEV_1064_QUERY_3"),
        ("DEV_621_QUERY_0", "它全长多少？", "DEV_621_QUERY_1"),
        ("DEV_1657_QUERY_1", "它是哪一年灭绝的？", "DEV_1657_QUERY_2"),
        ("DEV_332_QUERY_0", "他的守备位置是什么？", "DEV_332_QUERY_1"),
    ],
}


def _turn(lib: Any, kb: str, question: str, golds: list[str], history: list[tuple[str, str]]) -> dict[str, Any]:
    from desktop_kb.eval.normalize import contains_answer

    started = time.perf_counter()
    a = lib.ask(question, kbs=[kb], history=history)
    seconds = time.perf_counter() - started
    right = a.status == "answered" and contains_answer(a.text, golds)
    return {"question": question, "searched": list(a.queries[:1]), "status": a.status, "right": right,
            "seconds": round(seconds, 1), "rewrite_ms": round(a.timings_ms.get("rewrite", 0.0)),
            "refusal": getattr(a, "refusal", ""), "answer": a.text}


def run_dataset(lib: Any, name: str, cache_root: Path, only: int | None, out: Any = None) -> list[dict[str, Any]]:
    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_qa

    ds = load_qa(EVAL / "qa" / name)
    items = {it.id: it for it in ds.items}
    prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, cache_root=cache_root, progress=LogProgress(f"ingest {name}"))
    rows = []
    for i, (first_id, follow_up, gold_id) in enumerate(CHAINS[name][:only], 1):
        first = items[first_id]
        one = _turn(lib, prep.name, first.question, list(first.answers), [])
        two = _turn(lib, prep.name, follow_up, list(items[gold_id].answers), [(first.question, one["answer"])])
        rows.append({"dataset": name, "chain": i, "first": one, "follow_up": two,
                     "rewords": items[gold_id].question})
        if out is not None:  # written as they come: an interrupted run keeps its chains
            out.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
            out.flush()
        print(f"{name} {i}/{len(CHAINS[name][:only])}: first {one['status']} {one['seconds']} s, "
              f"follow-up {two['status']}{' right' if two['right'] else ''} {two['seconds']} s", file=sys.stderr)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def share(turn: str, key: str, value: Any = True) -> float:
        return round(sum(r[turn][key] == value for r in rows) / len(rows), 3) if rows else 0.0

    def mean(turn: str, key: str) -> float:
        return round(sum(r[turn][key] for r in rows) / len(rows), 1) if rows else 0.0

    return {"chains": len(rows), "first_right": share("first", "right"),
            "follow_up_right": share("follow_up", "right"),
            "follow_up_refused": share("follow_up", "status", "refused"),
            "first_seconds": mean("first", "seconds"), "follow_up_seconds": mean("follow_up", "seconds"),
            "follow_up_rewrite_ms": mean("follow_up", "rewrite_ms")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True, help="the data folder (bases are made there)")
    ap.add_argument("--cache-dir", type=Path, help="eval corpus cache (default: <data dir>-eval)")
    ap.add_argument("--datasets", default="squad2_dev,cmrc2018_dev")
    ap.add_argument("--limit", type=int, help="the first N chains of each dataset")
    ap.add_argument("--per-chain", type=Path, help="write each chain's turns here (JSON lines)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    names = [n.strip() for n in args.datasets.split(",")]
    return run_and_report(args.data_dir, args.cache_dir, names, args.per_chain, args.json, summary,
                          lambda lib, name, cache_root, out: run_dataset(lib, name, cache_root, args.limit, out))


def run_and_report(data_dir: Path, cache_dir: Path | None, names: list[str], per_row: Path | None, as_json: bool,
                   summarise: Callable[[list[dict[str, Any]]], dict[str, Any]],
                   rows_of: Callable[[Any, str, Path, Any], list[dict[str, Any]]]) -> int:
    """One library over ``data_dir``; each dataset's rows (``rows_of``, written to ``per_row`` as they
    come), then the code measured, the load and ``summarise`` over all rows and per dataset, printed
    (one JSON document with ``as_json``). Shared with bench_cross_language.py."""
    import desktop_kb
    from desktop_kb.eval.corpus import default_cache_root
    from desktop_kb.library.kb import Library
    from desktop_kb.settings import load_settings

    cache_root = cache_dir or default_cache_root(data_dir)
    rows: list[dict[str, Any]] = []
    out = per_row.open("w", encoding="utf-8") if per_row else None
    with Library.open(load_settings(data_dir)) as lib:
        for name in names:
            rows += rows_of(lib, name, cache_root, out)
    if out is not None:
        out.close()
    report = {"code": str(Path(desktop_kb.__file__).parent.parent),
              "load_avg": [round(x, 2) for x in os.getloadavg()], "all": summarise(rows)}
    report |= {name: summarise([r for r in rows if r["dataset"] == name]) for name in names}
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    else:
        for k, v in report.items():
            print(f"{k}: {v}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
