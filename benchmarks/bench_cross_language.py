"""Questions asked in the other language than the documents, beside the same questions in theirs.

    .venv/bin/python benchmarks/bench_cross_language.py --data-dir D [--cache-dir C] [--per-item F] --json
    (--sides other --datasets cmrc2018_dev: only the English questions over Chinese articles)
    .venv/bin/python benchmarks/bench_cross_language.py --unanswerable --data-dir D_OF_EVAL_ANSWERS --json

Two sets written for this benchmark (the translations are ours, made by hand, not by the app's
model, whose translations mangle names: 矢井田瞳 became "Yasuda Toshio"): 24 CMRC 2018 dev
questions asked in English over the Chinese articles, and 16 SQuAD 2.0 dev questions asked in
Chinese over the English ones, all from outside the ``eval answers --limit 50`` samples. Only item
ids, our wording of the question and the gold answer in the other language live here; the dataset's
own questions, gold answers and articles are read from ``../shared/eval``. Each item is asked twice
through ``Library.ask`` over its dataset's whole article set (``eval answers``'s cached base): in the
passages' language (the dataset question) and in the other one (ours).

Scored per ask: right (answered, the text holds a gold answer in either language:
``eval.normalize.contains_answer``), refused, and for an English answer over Chinese passages
whether it mixes scripts (Chinese characters outside quotes and brackets: "the Beijing地铁10号线").
Issue #56 asks of the cross-language column: right at least 90% as often as the same-language one,
right answers refused at most 1.2× as often, every answer in one script, and unanswerable
questions refused as often as today: ``--unanswerable`` asks 16 CMRC questions whose articles
``eval answers --limit 50 --remove-articles 25`` takes out of its base, over that base (its data
folder given), in Chinese and in our English; there "refused" is the right outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after PYTHONPATH, so an older checkout given there is the one measured
EVAL = Path(os.environ.get("DKB_EVAL_DATA", ROOT.parent / "shared" / "eval"))

# item id -> (our question in the other language, gold answers in that language)
SETS: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "cmrc2018_dev": {
        "DEV_162_QUERY_0": ("Where was Pan Shu from?", ("Kuaiji", "Gouzhang", "Ningbo")),
        "DEV_1784_QUERY_2": ("Which Japanese select shop invited Li Han to release a collaboration?", ("Beams",)),
        "DEV_239_QUERY_2": ("What drug can treat hair loss in men?", ("finasteride",)),
        "DEV_1001_QUERY_0": ("Who designed the .45 ACP in 1904?", ("Browning",)),
        "DEV_259_QUERY_2": ("When was Kaifeng Prefecture raised to Jingji Circuit?", ("Chongning", "1106")),
        "DEV_1784_QUERY_0": ("Who created the little sign-holding figures?", ("Li Han",)),
        "DEV_406_QUERY_0": ("Gabriel Leung is currently dean of which school?",
                            ("Li Ka Shing Faculty of Medicine", "University of Hong Kong")),
        "DEV_1603_QUERY_3": ("Which developer won the second-phase land at the auction of 8 June 2010 "
                             "for HK$10.9 billion?", ("Sun Hung Kai",)),
        "DEV_144_QUERY_2": ("What is the outer diameter of the hemispherical turret of the AK-130 naval gun?",
                            ("6 m", "6 metres", "6 meters", "six metres", "six meters")),
        "DEV_1170_QUERY_0": ("Which country does Svealand belong to?", ("Sweden",)),
        "DEV_41_QUERY_2": ("When is Wuxue sesame crisp candy usually made and sold?",
                           ("Spring Festival", "Chinese New Year", "Lunar New Year")),
        "DEV_191_QUERY_3": ("How many appearances did Peter Lorimer make for Leeds United in his whole career?",
                            ("703",)),
        "DEV_221_QUERY_1": ("Where does Percy Weasley come among the children of his family?",
                            ("third", "3rd")),
        "DEV_1094_QUERY_0": ("In which century was the rule that the Bill of Rights applies to the federal "
                             "government but not to the states called into question?", ("19th", "nineteenth")),
        "DEV_1068_QUERY_1": ("How many special guest stars appear in One Piece: Curse of the Sacred Sword?",
                             ("3", "three")),
        "DEV_85_QUERY_2": ("Which club does Ivica Olić play for now?", ("1860",)),
        "DEV_293_QUERY_0": ("Who was the mother of Zhu Youyuan?", ("Shao",)),
        "DEV_620_QUERY_1": ("Where do palm pit vipers like to be active?", ("tree",)),
        "DEV_1039_QUERY_0": ("Where was the mathematician Zeng Jiong from?", ("Nanchang", "Jiangxi")),
        "DEV_238_QUERY_0": ("Which company runs Cross-Harbour Tunnel bus route 935?", ("KMB", "Kowloon Motor Bus")),
        "DEV_530_QUERY_2": ("What brought about the most recent No. 1 typhoon signal in Macau?", ("Khanun",)),
        "DEV_1555_QUERY_1": ("Which elder composer did Kuo Chih-yuan often say in public that he admired?",
                             ("Chiang Wen-yeh", "Jiang Wenye")),
        "DEV_1050_QUERY_1": ("What substance was once the most turbulent ever observed?", ("hydrogen",)),
        "DEV_565_QUERY_0": ("From which dynasty did the Jagiellonian dynasty spring?", ("Gedimin",)),
    },
    "squad2_dev": {
        "630b99004a602f9facdeeaaeb": ("与外界环境接触的组织中的吞噬细胞叫什么？", ("树突",)),
        "b2fdebe25aa0ea71eceb8af1c": ("DATAPAC是由谁开发的？", ("贝尔北方研究",)),
        "adeaa1eabc0dc9a1cea45b5ca": ("1760年英军在魁北克城外输掉了哪一场战役？", ("圣富瓦", "圣福伊")),
        "c56b94ebad3ef8fdf6aaebb10": ("脱脱曾试图打败谁？", ("红巾",)),
        "591ddcc62bcfa4ffbeecb2009": ("戴维斯把他的系统叫作什么？", ("分组交换", "包交换", "封包交换")),
        "6e8ecf2467ecab21ecf4e6a28": ("大多数成员国规定至少有多少天带薪假期？", ("28",)),
        "036cb20d82edb8eded6fbeb4b": ("波兰第二所理工类大学是哪一所？", ("华沙理工",)),
        "09ab8dfbe5ccc6ea00f2b86cf": ("1752年去世的新法兰西总督是谁？", ("容基耶尔", "让基耶尔")),
        "e1dcd85748e2dfc4fe16a23ce": ("免疫系统过度活跃、攻击正常组织，这叫什么？", ("自身免疫",)),
        "efead5b6edf0aadefd2c0e141": ("华沙被德国占领了多长时间？", ("1915",)),
        "fc05ba2a6d16cc5a8a1eb5aaf": ("哈佛体育场在哪一年成为美国第一座钢筋混凝土体育场？", ("1903",)),
        "a8c0dc4ffd21d1becac6af7c7": ("哪一类法律使欧盟机构及其成员国遵守法律？", ("行政法",)),
        "e98bcff0083fc2ab9cc3b5dec": ("蒙古萨满使用什么样的医术？", ("精神", "灵性", "心灵")),
        "b2d9577817dc2b85ceeb714fc": ("坦克雷德参与了哪一次重大征服？", ("耶路撒冷",)),
        "0c7c46cfdeeb1e0d0bee63f2e": ("在17和18世纪，爱尔兰哪些城市有胡格诺派市长？", ("都柏林", "科克")),
        "2e5bf19b482b3cdffbc3b9ed3": ("“大元”这个国号取自哪部著作？", ("易经", "周易", "I Ching")),
    },
}

# Unanswerable: CMRC questions whose articles `eval answers --limit 50 --remove-articles 25` takes out
# of its base (the same sample and cut, so its cached base is read), in our English; ``--unanswerable``
UNANSWERABLE: dict[str, str] = {
    "DEV_1030_QUERY_1": "What colour is the cap of the king bolete?",
    "DEV_31_QUERY_1": "In which year was St. Paul's Parish established?",
    "DEV_1149_QUERY_1": "How many people in total can the FV603 Saracen carry?",
    "DEV_30_QUERY_2": "Who is the outgoing president of Macedonia?",
    "DEV_510_QUERY_2": "When did Anzhenmen station open?",
    "DEV_231_QUERY_0": "What is a throttle valve also commonly called?",
    "DEV_1126_QUERY_0": "Which country's uncrewed cargo spacecraft is Progress?",
    "DEV_159_QUERY_3": "How many square kilometres does the North China Craton cover?",
    "DEV_355_QUERY_1": "How is the value of inventory calculated?",
    "DEV_1135_QUERY_1": "How long is the slender worm eel?",
    "DEV_36_QUERY_0": "What was the papal canopy used for in the past?",
    "DEV_37_QUERY_3": "Which internationally known mechanicians did Prandtl train?",
    "DEV_1888_QUERY_4": "Which work of Vivaldi is often heard in churches?",
    "DEV_1111_QUERY_2": "In Detective Conan: Crossroad in the Ancient Capital, which gang of thieves did the victims "
                        "belong to?",
    "DEV_1679_QUERY_4": "Phenacodus and Tetraclaenodon are both considered early stages in the evolution of "
                        "which animal?",
    "DEV_1149_QUERY_2": "In which year was the Saracen armoured car produced?",
}

_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|「[^」]*」|《[^》]*》|\([^)]*\)|（[^）]*）")
_CJK = re.compile(r"[\u3400-\u9fff]")


def mixed_script(text: str) -> bool:
    """An English answer with Chinese characters outside quotes and brackets."""
    return bool(_CJK.search(_QUOTED.sub(" ", text)))


def _ask(lib: Any, kb: str, question: str, golds: list[str], english: bool) -> dict[str, Any]:
    from desktop_kb.eval.normalize import contains_answer

    started = time.perf_counter()
    a = lib.ask(question, kbs=[kb])
    answered = a.status == "answered"
    return {"question": question, "status": a.status, "refusal": getattr(a, "refusal", ""),
            "right": answered and contains_answer(a.text, golds),
            "mixed_script": answered and english and mixed_script(a.text),
            "seconds": round(time.perf_counter() - started, 1), "answer": a.text,
            "problems": [str(p)[:300] for p in a.problems[:3]],
            "withheld": a.withheld.text if a.withheld is not None else "", "searched": list(a.queries[:2])}


def run_dataset(lib: Any, name: str, cache_root: Path, only: int | None, out: Any = None,
                sides: tuple[str, ...] = ("same", "other")) -> list[dict[str, Any]]:
    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_qa

    ds = load_qa(EVAL / "qa" / name)
    items = {it.id: it for it in ds.items}
    prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, cache_root=cache_root, progress=LogProgress(f"ingest {name}"))
    passages_english = name.startswith("squad")
    rows = []
    for i, (item_id, (ours, our_golds)) in enumerate(list(SETS[name].items())[:only], 1):
        it = items[item_id]
        golds = [*it.answers, *our_golds]
        row: dict[str, Any] = {"dataset": name, "id": item_id}
        if "same" in sides:
            row["same"] = _ask(lib, prep.name, it.question, golds, passages_english)
        if "other" in sides:
            row["other"] = _ask(lib, prep.name, ours, golds, not passages_english)
        rows.append(row)
        if out is not None:  # written as they come: an interrupted run keeps its items
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
        said = ", ".join(f"{side} {row[side]['status']}{' right' if row[side]['right'] else ''}" for side in sides)
        print(f"{name} {i}/{len(SETS[name]) if only is None else only}: {said}", file=sys.stderr)
    return rows


def run_unanswerable(lib: Any, name: str, cache_root: Path, only: int | None, out: Any = None,
                     sides: tuple[str, ...] = ("same", "other")) -> list[dict[str, Any]]:
    """The :data:`UNANSWERABLE` questions over ``eval answers``'s base without their articles: in
    the dataset's Chinese (same) and in our English (other); a refusal is the right outcome."""
    from desktop_kb.eval.corpus import LogProgress, prepare_kb
    from desktop_kb.eval.datasets import load_qa, sample_ids, without_articles

    ds = load_qa(EVAL / "qa" / name)
    wanted = set(sample_ids([it.id for it in ds.items], 50))
    ds, removed = without_articles(ds, [it.id for it in ds.items if it.id in wanted], 25)
    assert set(UNANSWERABLE) <= set(removed), "the sample or the cut of eval answers changed"
    items = {it.id: it for it in ds.items}
    prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, cache_root=cache_root, progress=LogProgress(f"ingest {ds.name}"))
    rows = []
    for i, (item_id, ours) in enumerate(list(UNANSWERABLE.items())[:only], 1):
        row: dict[str, Any] = {"dataset": name, "id": item_id, "answerable": False}
        if "same" in sides:
            row["same"] = _ask(lib, prep.name, items[item_id].question, [], False)
        if "other" in sides:
            row["other"] = _ask(lib, prep.name, ours, [], True)
        rows.append(row)
        if out is not None:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
        said = ", ".join(f"{side} {row[side]['status']}" for side in sides)
        print(f"{name} unanswerable {i}/{len(UNANSWERABLE) if only is None else only}: {said}", file=sys.stderr)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def share(side: str, key: str, value: Any = True) -> float:
        return round(sum(r[side][key] == value for r in rows) / len(rows), 3) if rows else 0.0

    out: dict[str, Any] = {"items": len(rows)}
    for side in ("same", "other"):
        if not rows or side not in rows[0]:
            continue
        answered = [r for r in rows if r[side]["status"] == "answered"]
        out[side] = {"right": share(side, "right"), "refused": share(side, "status", "refused"),
                     "mixed_script_of_answered": round(sum(r[side]["mixed_script"] for r in answered) / len(answered), 3)
                     if answered else 0.0,
                     "seconds": round(sum(r[side]["seconds"] for r in rows) / len(rows), 1) if rows else 0.0}
    if "same" in out and "other" in out:
        same, other = out["same"], out["other"]
        out["right_ratio"] = round(other["right"] / same["right"], 3) if same["right"] else None
        out["refused_ratio"] = round(other["refused"] / same["refused"], 3) if same["refused"] else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True, help="the data folder (bases are made there)")
    ap.add_argument("--cache-dir", type=Path, help="eval corpus cache (default: <data dir>-eval)")
    ap.add_argument("--datasets", default="cmrc2018_dev,squad2_dev")
    ap.add_argument("--limit", type=int, help="the first N items of each set")
    ap.add_argument("--per-item", type=Path, help="write each item's two asks here (JSON lines)")
    ap.add_argument("--sides", default="same,other",
                    help="ask in the passages' language (same), in the other (other), or both")
    ap.add_argument("--unanswerable", action="store_true",
                    help="the CMRC questions made unanswerable by eval answers --limit 50 --remove-articles 25, "
                         "over its base (give its data folder): refused is right")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from bench_followups import run_and_report  # the same run and report as the follow-up chains

    names = [n.strip() for n in args.datasets.split(",")]
    sides = tuple(x.strip() for x in args.sides.split(","))
    run = run_unanswerable if args.unanswerable else run_dataset
    if args.unanswerable:
        names = ["cmrc2018_dev"]
    return run_and_report(args.data_dir, args.cache_dir, names, args.per_item, args.json, summary,
                          lambda lib, name, cache_root, out: run(lib, name, cache_root, args.limit, out, sides))

if __name__ == "__main__":
    sys.exit(main())
