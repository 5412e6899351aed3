"""``desktop-kb eval …``: retrieval metrics on BEIR sets, answer quality on QA sets, and the
"check my knowledge base" probe. Picked up by ``desktop_kb.cli`` through :func:`register`."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DesktopKBError, GenerationError, ModelError, ModelNotInstalled
from ..settings import Settings

__all__ = ["cmd_answers", "cmd_claims", "cmd_probe", "cmd_retrieval", "register"]

MODE_CHOICES = ("default", "dense", "sparse", "hybrid", "hybrid-equal", "hybrid-convex", "hybrid+rerank", "all")


def register(subparsers: Any) -> None:
    ev = subparsers.add_parser("eval", help="measure retrieval and answer quality on benchmark data")
    evs = ev.add_subparsers(dest="eval_command", required=True)

    r = evs.add_parser("retrieval", help="nDCG@10, Recall@10/100, MRR@10 and latency on a BEIR dataset")
    r.add_argument("--dataset", required=True, help="BEIR folder: corpus.jsonl, queries.jsonl, qrels.tsv")
    r.add_argument("--mode", choices=MODE_CHOICES, default="default")
    r.add_argument("--limit-queries", type=int, help="evaluate a fixed sample of N queries")
    r.add_argument("--query-lang", choices=("en", "zh"),
                   help="translate the queries into this language with the local LLM first (cached)")
    r.add_argument("--cached-translations-only", action="store_true",
                   help="with --query-lang: use only translations already cached (no LLM), skip the other queries")
    r.add_argument("--recall", type=int, default=100, help="chunks retrieved per query (default 100)")
    r.add_argument("--rewrite", choices=("off", "auto", "always"), default="off",
                   help="also search each query's LLM rewrite as the answer pipeline would with "
                        "query.rewrite set so (auto: only a translation, when the query's language is not "
                        "the corpus's); rewrites are cached")
    r.add_argument("--per-query", metavar="FILE", help="also write per-query rankings and weights (JSONL)")
    r.add_argument("--cache-dir", help="where the corpus files and translations are cached "
                                       "(default: <data dir>-eval, beside the data folder)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_retrieval)

    a = evs.add_parser("answers", help="answer accuracy, citation validity and refusals on a QA dataset")
    a.add_argument("--dataset", required=True, help="QA folder: items.jsonl, contexts.jsonl")
    a.add_argument("--limit", type=int, help="ask a fixed sample of N questions")
    a.add_argument("--ids", help="ask only these item ids (comma-separated), e.g. a previous run's failures")
    a.add_argument("--remove-articles", type=int, metavar="N", default=0,
                   help="take the whole articles of N answerable sampled questions out of the knowledge base, "
                        "so they (and any question on those articles) must be refused")
    a.add_argument("--query-lang", choices=("en", "zh"),
                   help="ask each question translated into this language by the local LLM (cached) over the "
                        "same documents: the cross-language check")
    a.add_argument("--cached-translations-only", action="store_true",
                   help="with --query-lang: use only translations already cached (no LLM), skip the other questions")
    a.add_argument("--per-item", metavar="FILE", help="also write per-item results (JSONL)")
    a.add_argument("--cache-dir", help="where the corpus files are cached (default: <data dir>-eval)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=cmd_answers)

    c = evs.add_parser("claims", help="the answer check (validation, claim support, judge) on given answers, "
                                      "no generation")
    c.add_argument("file", help="JSONL: {id, question, answer (with [n]), passages: [{title, text}], kind?, expect?}")
    c.add_argument("--no-judge", action="store_true", help="the word and figure checks only")
    c.add_argument("--verifier", action="store_true",
                   help="the trained verifier decides meaning (graded verdicts) instead of the LLM judge")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_claims)

    p = evs.add_parser("probe", help="check a knowledge base: can retrieval find passages from questions about them?")
    p.add_argument("--kb", required=True)
    p.add_argument("--n", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_probe)


def _open_library(settings: Settings) -> Any:
    from ..library.kb import Library

    return Library.open(settings)


def _cache(args: argparse.Namespace) -> Path | None:
    return Path(args.cache_dir).expanduser() if getattr(args, "cache_dir", None) else None


def _err(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _counter(label: str) -> Any:
    tty = sys.stderr.isatty()
    step = {"last": -1}

    def on(i: int, n: int) -> None:
        if tty:
            sys.stderr.write(f"\r{label}: {i}/{n}" + ("\n" if i == n else ""))
            sys.stderr.flush()
        elif i == n or i * 10 // n != step["last"]:
            step["last"] = i * 10 // n
            _err(f"{label}: {i}/{n}")

    return on


def _reranker(lib: Any) -> tuple[Any, str]:
    try:
        reranker = lib.reranker
    except DesktopKBError as exc:
        return None, f"reranker unavailable: {exc.message}"
    return reranker, "" if reranker is not None else "none installed"


# -- retrieval ------------------------------------------------------------------------------------
def cmd_retrieval(args: argparse.Namespace, settings: Settings) -> int:
    from ..eval.corpus import LogProgress, prepare_kb
    from ..eval.datasets import load_beir, sample_ids
    from ..eval.retrieval import format_table, fusion_verdict, kb_views, write_per_query

    if args.recall < 10:
        raise ConfigError("--recall must be at least 10.")
    ds = load_beir(args.dataset)
    judged = ds.judged_queries()
    qids = sample_ids(list(judged), args.limit_queries)
    queries = {q: judged[q] for q in qids}
    with _open_library(settings) as lib:
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, cache_root=_cache(args),
                          progress=LogProgress(f"ingest {ds.name}"))
        if prep.failed:
            _err(f"warning: {prep.failed} documents failed to ingest (see `desktop-kb kb stats {prep.name}`)")
        queries, translated_note = _translated(lib, queries, args, prep.cache_dir)
        views = kb_views(lib, [prep.name])
        searched: dict[str, Any] = dict(queries)
        if args.rewrite != "off":
            from ..eval.rewrites import rewrite_queries

            searched = rewrite_queries(lib, views, queries, args.rewrite, prep.cache_dir,
                                       on_progress=_counter(f"rewrite {args.rewrite}"))
        results, skipped = _run_modes(lib, settings, views, searched, ds.qrels, prep, args)

    if not results:
        _err("nothing evaluated")
        return 3
    summaries = {m: r.summary() | {"ingest_s": round(prep.ingest_s, 1)} for m, r in results.items()}
    if args.per_query:
        write_per_query(Path(args.per_query), queries, results, ds.qrels)
    if args.json:
        sys.stdout.write(json.dumps(summaries, ensure_ascii=False, indent=2) + "\n")
        return 0
    print(f"{ds.name}: {len(ds.corpus)} documents → {prep.chunks} chunks in {prep.name} "
          f"(ingest {prep.ingest_s:.0f} s{', cached' if prep.cached else ''}); "
          f"{len(queries)} queries, {args.recall} chunks retrieved per query")
    if translated_note:
        print(translated_note)
    print(format_table(summaries))
    for mode, why in skipped.items():
        print(f"{mode}: {why}")
    verdict = fusion_verdict(summaries)
    if verdict:
        print(verdict)
    return 0


def _translated(lib: Any, queries: dict[str, str], args: argparse.Namespace, cache_dir: Path
                ) -> tuple[dict[str, str], str]:
    """The queries in ``--query-lang`` (translated by the local LLM, cached), and a note saying so."""
    from ..eval.translate import TranslationCache, query_language, translate_queries

    source_lang = query_language(list(queries.values()))
    if not args.query_lang or args.query_lang == source_lang:
        return queries, ""
    cache = TranslationCache(cache_dir / f"translations-{args.query_lang}.json", args.query_lang)
    factory = None if args.cached_translations_only else (lambda: lib.generator)
    done, missing, why = translate_queries(queries, cache, factory,
                                           on_progress=_counter(f"translating to {args.query_lang}"))
    if missing:
        _err(f"warning: {len(missing)} of {len(queries)} queries have no {args.query_lang} translation "
             f"({why}); they are left out. Translations are cached in {cache.path}.")
    if not done:
        raise ModelError(f"No query has a {args.query_lang} translation: {why}",
                         "Install the LLM (`desktop-kb models install`) and run again; "
                         "translations are cached, so this is done once.")
    return ({q: done[q] for q in queries if q in done},
            f"queries translated {source_lang}→{args.query_lang} by the local LLM")


def _run_modes(lib: Any, settings: Settings, views: Any, searched: dict[str, Any], qrels: Any, prep: Any,
               args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str]]:
    """Each retrieval mode asked for, over the same queries: (results by mode, skipped modes and why)."""
    from ..eval.retrieval import RERANK_MISSING, TABLE_ORDER, ModeResult, run_mode

    modes = list(TABLE_ORDER) if args.mode == "all" else [args.mode]
    reranker, rerank_why = _reranker(lib)
    by_hit: dict[str, str] = {}

    def doc_of(hit: Any) -> str:
        path = hit.chunk.path
        got = by_hit.get(path)
        if got is None:
            got = by_hit[path] = prep.doc_id(path)
        return got

    results: dict[str, ModeResult] = {}
    skipped: dict[str, str] = {}
    for mode in modes:
        if mode == "hybrid+rerank" and reranker is None:
            skipped[mode] = RERANK_MISSING if rerank_why == "none installed" else rerank_why
            _err(f"{mode}: {skipped[mode]} (skipped)")
            continue
        same = "hybrid-convex" if settings.query.fusion == "convex" else "hybrid"
        if mode == "default" and reranker is None and settings.query.adaptive_fusion and same in results:
            h = results[same]  # identical without a reranker: don't run it twice
            results[mode] = ModeResult(mode, h.metrics, h.latencies_ms, h.rankings, h.weights,
                                       note=f"= {same} (no reranker installed)")
            continue
        res = run_mode(lib, views, mode, searched, qrels, doc_of, recall=args.recall, reranker=reranker,
                       on_query=_counter(f"{mode}"))
        if mode in ("default", "hybrid+rerank") and reranker is not None:
            res.note = _rerank_note(reranker, settings)
        elif mode == "default":
            res.note = "hybrid (no reranker installed)"
        results[mode] = res
    return results, skipped


def _rerank_note(reranker: Any, settings: Settings) -> str:
    """Which reranker reordered how many candidates, and how its score was blended."""
    from ..query.rerank import blend_of

    weight, candidates = blend_of(reranker, settings.query.rerank_weight, settings.query.rerank_candidates)
    over = f"the first {candidates}" if candidates else f"all {settings.query.recall}"
    how = "alone" if weight == 1.0 else f"blended with the fused order, weight {weight:g}"
    return f"hybrid + rerank ({reranker.id}, {how}, over {over})"


# -- answers --------------------------------------------------------------------------------------
def cmd_answers(args: argparse.Namespace, settings: Settings) -> int:
    from ..eval.answers import ItemScore, aggregate, score_answer
    from ..eval.corpus import LogProgress, prepare_kb
    from ..eval.datasets import load_qa, sample_ids, without_articles

    ds = load_qa(args.dataset)
    try:
        from ..query import pipeline  # noqa: F401
    except ImportError as exc:
        raise GenerationError(f"The answer pipeline is not available: {exc}",
                              "desktop_kb.query.pipeline is missing from this build.") from exc
    wanted = set(sample_ids([it.id for it in ds.items], args.limit))
    removed: list[str] = []
    if args.remove_articles:
        ds, removed = without_articles(ds, [it.id for it in ds.items if it.id in wanted], args.remove_articles)
    if args.ids:
        wanted &= {i.strip() for i in args.ids.split(",") if i.strip()}
    items = [it for it in ds.items if it.id in wanted]
    with _open_library(settings) as lib:
        try:
            _ = lib.generator  # fail now, with the model's hint, rather than after ingesting
        except DesktopKBError:
            raise
        except Exception as exc:
            raise GenerationError(f"The LLM could not be loaded: {exc}") from exc
        prep = prepare_kb(lib, ds.corpus, ds.corpus_sha1, cache_root=_cache(args),
                          progress=LogProgress(f"ingest {ds.name}"))
        asked, asked_note = _translated(lib, {it.id: it.question for it in items}, args, prep.cache_dir)
        items = [it for it in items if it.id in asked]
        scores: list[ItemScore] = []
        progress = _counter("asking")
        # per-item lines are written as they come, so an interrupted long run keeps what it did
        per_item = Path(args.per_item) if args.per_item else None
        if per_item is not None:
            per_item.parent.mkdir(parents=True, exist_ok=True)
        with per_item.open("w", encoding="utf-8") if per_item is not None else contextlib.nullcontext() as fh:
            for i, item in enumerate(items, 1):
                try:
                    ans = lib.ask(asked[item.id], kbs=[prep.name])
                    scores.append(score_answer(item, ans, prep.doc_id))
                except DesktopKBError as exc:
                    if isinstance(exc, ModelError):
                        raise
                    scores.append(ItemScore(item.id, item.answerable, "error", False, None, None, 0,
                                            error=exc.message))
                if fh is not None:
                    fh.write(json.dumps({"question": asked[item.id], **scores[-1].to_json()}, ensure_ascii=False)
                             + "\n")
                    fh.flush()
                progress(i, len(items))
    summary = aggregate(scores) | {"kb": prep.name, "ingest_s": round(prep.ingest_s, 1)}
    if asked_note:
        summary["questions"] = asked_note
    if args.remove_articles:
        summary["made_unanswerable"] = sorted(set(removed) & wanted)
    if args.json:
        sys.stdout.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
        return 0
    print(f"{ds.name}: {summary['items']} questions ({summary['answerable']} answerable, "
          f"{summary['unanswerable']} unanswerable) over {len(ds.corpus)} documents in {prep.name}")

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.1%}"

    print(f"  statuses:                        {summary['status']}")
    print(f"  answer contains gold:            {pct(summary['answer_contains_gold'])} of answerable"
          f" ({pct(summary['answer_contains_gold_when_answered'])} of those answered)")
    print(f"  gold answer in a cited passage:  {pct(summary['answer_gold_supported'])} of answerable"
          f" ({pct(summary['answer_gold_supported_when_answered'])} of those answered)")
    print(f"  a cited passage has a gold span: {pct(summary['cited_passage_has_gold'])} of answered answerable")
    print(f"  citations valid (self-check):    {pct(summary['citation_validity'])} of answered")
    print(f"  citation hits the gold context:  {pct(summary['citation_hits_gold'])} of answered answerable")
    print(f"  refusal rate (unanswerable):     {pct(summary['refusal_rate_unanswerable'])}")
    print(f"  false refusal rate (answerable): {pct(summary['false_refusal_rate'])}")
    print(f"  mean timings ms:                 {summary['mean_timings_ms']} (total {summary['mean_total_ms']})")
    if summary["errors"]:
        print(f"  errors: {summary['errors']}")
    return 0


# -- claims ---------------------------------------------------------------------------------------
def cmd_claims(args: argparse.Namespace, settings: Settings) -> int:
    from ..eval.claims import load_records, run_claims
    from ..library.factory import build_embedder, build_generator, build_verifier
    from ..query.read import similarity
    from ..verify.answer_check import CheckOptions
    from ..verify.graded import Thresholds

    records = load_records(Path(args.file).expanduser())
    q = settings.query
    verifier = build_verifier(settings) if args.verifier else None
    if args.verifier and verifier is None:
        raise ModelNotInstalled("The trained verifier is not installed.", "Run `desktop-kb models install`.")
    q = dataclasses.replace(q, verifier=verifier is not None)
    options = dataclasses.replace(CheckOptions.of(q, calibrated_thresholds=Thresholds.of_model(verifier)),
                                  judge=q.judge and not args.no_judge and (verifier is None or q.verifier_judge_uncertain))
    embedder = build_embedder(settings)
    scorer = None
    if options.judge:
        scorer = build_generator(settings)
        if not hasattr(scorer, "yes_no"):
            raise GenerationError("The LLM cannot judge (it does not weigh yes against no).")
    try:
        report = run_claims(records, options=options, scorer=scorer, similarity=similarity(embedder),
                            verifier=verifier, on_item=_counter("checking"))
    finally:
        for backend in (scorer, embedder):
            close = getattr(backend, "close", None)
            if close is not None:
                close()
    report = {"file": str(args.file), "judge": options.judge, "thresholds": {"en": options.threshold, "zh": options.threshold_cjk},
              "verifier": None if verifier is None else {"id": verifier.id, **dataclasses.asdict(options.thresholds)}} | report
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        return 0
    print(f"{report['records']} records from {args.file}; judge: {'on' if report['judge'] else 'off'}")
    for kind, k in sorted(report["kinds"].items()):
        extra = f", as expected {k['as_expected_rate']:.1%}" if "as_expected_rate" in k else ""
        graded = "".join(f", {v} {k[v + '_rate']:.1%}" for v in ("supported", "uncertain") if v + "_rate" in k)
        print(f"  {kind:<18} {k['n']:>4}  accepted {k['accept_rate']:.1%}{graded}{extra}")
    t = report["timings_ms"]
    print(f"  ms per record: mean {t['mean']}, p50 {t['p50']}, p95 {t['p95']}; judge mean {t['judge_mean']} "
          f"({t['judged']} judged)")
    return 0


# -- probe ----------------------------------------------------------------------------------------
def cmd_probe(args: argparse.Namespace, settings: Settings) -> int:
    from ..eval.probe import probe

    if args.n < 1:
        raise ConfigError("--n must be at least 1.")
    with _open_library(settings) as lib:
        report = probe(lib, args.kb, n=args.n, seed=args.seed, on_item=_counter("probe"))
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
        return 0
    print(f"{report.kb}: {report.asked} questions from {report.n} sampled passages ({report.seconds:.0f} s)")
    print(f"  Recall@5 (the passage itself): {report.recall_at_5:.1%}   MRR@5: {report.mrr_at_5:.3f}")
    print(f"  Recall@5 (same document):      {report.doc_recall_at_5:.1%}")
    for it in report.items:
        mark = "-" if it.error else (f"#{it.rank}" if it.rank else "miss")
        print(f"  {mark:>5}  {Path(it.path).name[:40]:<40}  {it.question or it.error}")
    return 0
