"""The answer pipeline wired end to end with the real store and fakes for the models (plumbing)."""

from __future__ import annotations

import dataclasses

import pytest

from desktop_kb.backends.embed_hash import HashEmbedder
from desktop_kb.errors import Cancelled
from desktop_kb.library.kb import Library
from desktop_kb.progress import CancelToken


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "invoices.md").write_text("# Invoices\n\nInvoices must be paid within 30 days of receipt.\n", encoding="utf-8")
    (d / "travel.md").write_text("# Travel\n\nHotels are reimbursed up to 180 euros per night.\n", encoding="utf-8")
    return d


def _lib(settings, gen):
    s = settings.replace(query=dataclasses.replace(settings.query, dense_threshold=0.0))
    return Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen)


def test_answer_streams_and_carries_structured_citations(settings, folder, scripted):
    gen = scripted(answers=['Invoices are due "within 30 days of receipt" [1].'])
    tokens: list[str] = []
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"], on_token=tokens.append)
    assert a.status == "answered"
    assert len(tokens) > 3 and "".join(tokens).strip() == a.text
    c = a.citations[0]
    assert c.n == 1 and c.path.endswith(".md") and c.quote == "within 30 days of receipt"
    passage = a.passages[0].chunk
    assert passage.start <= c.quote_start < c.quote_end <= passage.end
    assert not a.rerank_degraded  # no reranker installed is the normal path, not a degradation
    assert set(a.timings_ms) >= {"rewrite", "retrieve", "rerank", "generate", "validate"}
    assert a.queries[0] == "When must invoices be paid?"


def test_forged_citation_is_corrected_by_retry(settings, folder, scripted):
    gen = scripted(answers=["Invoices are due in 30 days [7].", "Invoices are due in 30 days [1]."])
    restarts: list[int] = []
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"], on_restart=lambda: restarts.append(1))
    assert a.status == "answered" and a.text.endswith("[1].")
    assert restarts == [1]
    last = [c for c in gen.calls if c["json_schema"] is None][-1]["messages"][-1]["content"]
    assert "[7] does not exist" in last


def test_persistently_forged_quote_is_refused_with_passages(settings, folder, scripted):
    gen = scripted(answers=['They say "payment within 90 days" [1].'])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    answers = [c for c in gen.calls if c["json_schema"] is None]
    assert len(answers) == 4  # first try + 2 corrections + the passage it did not cite, read alone
    assert "[2]" not in answers[-1]["messages"][-1]["content"]  # that one passage, numbered [1] there
    assert a.status == "refused" and not a.citations and a.refusal == "unsupported"
    assert a.passages and a.problems and "not in passage" in a.problems[0]


def test_a_refused_draft_is_answered_from_the_passage_that_holds_the_answer(settings, folder, scripted):
    """The hotel question: the model answers from the wrong passage; the judge refuses it; the
    passage it did not cite, read alone, holds the answer, cited by its number in the answer."""
    import re

    class Model(scripted):
        def chat(self, messages, **kw):
            prompt = messages[-1]["content"]
            if kw.get("json_schema") is None:
                if "(invoices.md" in prompt and "(travel.md" in prompt:  # all passages: the wrong one
                    n = re.search(r"\[(\d)\] \(invoices\.md", prompt).group(1)
                    self.answers = [f"Invoices must be paid within 30 days [{n}]."]
                else:
                    self.answers = ["Hotels are reimbursed up to 180 euros per night [1]."]
            return super().chat(messages, **kw)

        def yes_no(self, messages, *, cancel=None):  # the judge: only the hotel passage answers it
            return 3.0 if "180 euros" in messages[-1]["content"] else -3.0

    stages: list[tuple[str, int]] = []
    with _lib(settings, Model()) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("How much are hotels reimbursed per night?", kbs=["kb"],
                    on_stage=lambda s, n: stages.append((s, n)))
    hotel = next(n for n, h in enumerate(a.passages, 1) if "travel" in h.chunk.path)
    assert a.status == "answered", a.text
    assert a.text == f"Hotels are reimbursed up to 180 euros per night [{hotel}]."
    assert [c.n for c in a.citations] == [hotel]
    assert ("alternate", hotel) in stages


def test_no_passage_is_tried_again_when_alternates_are_off(settings, folder, scripted):
    gen = scripted(answers=['They say "payment within 90 days" [1].'])
    s = settings.replace(query=dataclasses.replace(settings.query, alternate_passages=0))
    with _lib(s, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    assert len([c for c in gen.calls if c["json_schema"] is None]) == 3 and a.status == "refused"


def test_vague_question_goes_to_fallback(settings, folder, scripted):
    gen = scripted(json_replies=[{"decision": "clarify", "message": "Which invoices?"}])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("invoices", kbs=["kb"])
    assert a.status == "clarify" and a.text == "Which invoices?"
    assert a.fallback is not None and a.fallback.decision == "clarify"
    assert not [c for c in gen.calls if c["json_schema"] is None]  # no answer was generated


class _LowReranker:
    id = "test/low-reranker"

    def score(self, query, passages):
        return [0.01] * len(passages)


def _decisions(gen):
    return [c for c in gen.calls if c["json_schema"] and "decision" in c["json_schema"]["properties"]]


def test_weak_rerank_scores_retry_wider_then_reject(settings, folder, scripted):
    gen = scripted(json_replies=[{"decision": "retry_wider", "message": ""},
                                 {"decision": "retry_wider", "message": ""}])
    s = settings.replace(query=dataclasses.replace(settings.query, top_k=1))
    with Library.open(s, embedder=HashEmbedder(), reranker=_LowReranker(), generator=gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("What is the meaning of the quarterly roadmap?", kbs=["kb"])
    assert a.status == "refused" and a.fallback.decision == "reject"  # a second retry is not allowed
    assert len(_decisions(gen)) == 2


def test_weak_dense_signal_retry_wider_answers_from_wider_recall(settings, folder, scripted):
    gen = scripted(answers=["Invoices are due in 30 days [1]."],
                   json_replies=[{"decision": "retry_wider", "message": ""}])
    s = settings.replace(query=dataclasses.replace(settings.query, dense_threshold=1.5))  # always weak
    with Library.open(s, embedder=HashEmbedder(), reranker=None, generator=gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    assert a.status == "answered" and a.fallback.decision == "retry_wider"
    assert len(_decisions(gen)) == 1  # the dense top-1 cannot improve: not judged again


def test_filters_reach_retrieval(settings, folder, scripted):
    gen = scripted(answers=["Hotels up to 180 euros [1]."])
    from desktop_kb.store.filters import parse_filters

    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"],
                    flt=parse_filters([f"path={folder / 'travel.md'}"]))
    assert {h.chunk.path for h in a.passages} == {str(folder / "travel.md")}


def test_cancel_stops_generation(settings, folder, scripted):
    token = CancelToken()
    gen = scripted(answers=["word " * 200])
    seen: list[str] = []

    def on_token(t: str) -> None:
        seen.append(t)
        if len(seen) == 2:
            token.cancel()

    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        with pytest.raises(Cancelled):
            lib.ask("When must invoices be paid?", kbs=["kb"], on_token=on_token, cancel=token)
    assert len(seen) <= 3


def test_reading_order_sorts_by_file_and_position(settings, folder, scripted):
    gen = scripted(answers=["Both [1][2]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("invoices and hotels reimbursement rules", kbs=["kb"], reading_order=True)
    paths = [h.chunk.path for h in a.passages]
    assert paths == sorted(paths)


def test_uncited_answer_taken_from_a_passage_gets_its_citation(settings, folder, scripted):
    gen = scripted(answers=["Invoices must be paid within 30 days of receipt."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    assert a.status == "answered" and a.text.endswith("[1].")
    assert len([c for c in gen.calls if c["json_schema"] is None]) == 1  # no correction round needed


def test_uncited_sentence_of_a_cited_answer_is_cited_or_flagged(settings, folder, scripted):
    gen = scripted(answers=["Invoices are due in 30 days [1]. Hotels are reimbursed up to 180 euros per night. "
                            "Managers usually approve such claims within a week."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        # reading order: invoices.md is [1], travel.md [2]
        a = lib.ask("What are the rules for invoices and hotels?", kbs=["kb"], reading_order=True)
    assert a.status == "answered", a.problems
    assert "180 euros per night [2]." in a.text
    assert {c.n for c in a.citations} == {1, 2}
    assert [p for p in a.problems if "Managers" in p]  # nothing says that: flagged, shown to the user


def test_wrong_passage_number_is_fixed_without_a_retry(settings, folder, scripted):
    gen = scripted(answers=["Hotels are reimbursed up to 180 euros per night [1]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        # reading order: invoices.md is [1], travel.md [2]
        a = lib.ask("How much are hotels reimbursed?", kbs=["kb"], reading_order=True)
    assert a.status == "answered", a.problems
    assert a.text == "Hotels are reimbursed up to 180 euros per night [2]."
    assert [c.path.endswith("travel.md") for c in a.citations] == [True]
    assert len([c for c in gen.calls if c["json_schema"] is None]) == 1  # no correction round


def test_unsupported_sentence_supported_by_another_passage_is_recited_without_a_retry(settings, folder, scripted):
    said = "Travellers get their hotels reimbursed up to 180 euros a night [1]."  # too reworded to renumber
    gen = scripted(answers=[said])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("How much are hotels reimbursed for travellers?", kbs=["kb"], reading_order=True)
    assert a.status == "answered", a.problems
    assert a.text == said.replace("[1]", "[2]")
    assert [c.path.endswith("travel.md") for c in a.citations] == [True]
    assert len([c for c in gen.calls if c["json_schema"] is None]) == 1  # no correction round


def test_unsupported_sentence_is_named_in_the_retry_then_removed(settings, folder, scripted):
    bad = "Invoices must be paid within 30 days of receipt [1]. Late invoices must be paid within 90 days [1]."
    gen = scripted(answers=[bad, bad, bad])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"], reading_order=True)
    retries = [c for c in gen.calls if c["json_schema"] is None][1:]
    assert retries and "passage [1] says 30 days, not 90 days" in retries[0]["messages"][-1]["content"]
    assert a.status == "answered"
    assert a.text == "Invoices must be paid within 30 days of receipt [1]."
    assert a.removed and a.removed[0][0].startswith("Late invoices") and "90 days" in a.removed[0][1]
    assert [c.n for c in a.citations] == [1] and a.citations[0].evidence


def test_answer_that_is_only_an_unsupported_claim_is_refused(settings, folder, scripted):
    gen = scripted(answers=["Invoices must be paid within 90 days of receipt [1]."] * 3)
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"], reading_order=True)
    assert a.status == "refused" and not a.citations
    assert any("not 90 days" in p for p in a.problems)


def test_ask_json_carries_evidence_and_removed_sentences(settings, folder, scripted):
    from desktop_kb.cli.ask import answer_json

    bad = "Invoices must be paid within 30 days [1]. Late invoices must be paid within 90 days [1]."
    gen = scripted(answers=[bad] * 3)
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        out = answer_json(lib.ask("When must invoices be paid?", kbs=["kb"], reading_order=True))
    assert out["citations"][0]["evidence"][0]["text"] == "Invoices must be paid within 30 days of receipt."
    assert out["removed"][0]["sentence"].startswith("Late invoices")


def test_first_question_skips_the_rewrite_and_a_follow_up_is_rewritten(settings, folder, scripted):
    gen = scripted(answers=["Invoices must be paid within 30 days [1]."],
                   json_replies=[{"query": "hotel reimbursement per night"}])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
        assert a.queries == ("When must invoices be paid?",)
        assert [c["json_schema"] for c in gen.calls] == [None]  # the answer only: no rewrite call
        b = lib.ask("And how much are hotels reimbursed?", kbs=["kb"], history=[(a.question, a.text)])
    # searched as its standalone question alone, and answered as it (the model reads that question)
    assert b.queries == ("hotel reimbursement per night",)
    assert "Question: hotel reimbursement per night" in gen.calls[-1]["messages"][-1]["content"]
    assert b.question == "And how much are hotels reimbursed?"  # shown as the user asked it


def test_english_question_over_chinese_documents_is_also_searched_in_chinese(settings, tmp_path, scripted):
    docs = tmp_path / "zh"
    docs.mkdir()
    (docs / "发票.md").write_text("# 发票\n\n发票必须在收到后三十天内支付。\n", encoding="utf-8")
    (docs / "差旅.md").write_text("# 差旅\n\n酒店费用每晚最多报销一百八十欧元。\n", encoding="utf-8")
    gen = scripted(answers=["发票什么时候必须支付？", "Invoices must be paid within 30 days [1]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    assert a.queries == ("When must invoices be paid?", "发票什么时候必须支付？")
    assert "You translate questions" in gen.calls[0]["messages"][0]["content"]
    assert "发票.md" in a.passages[0].chunk.path  # the translated query's BM25 leg finds it


def test_answer_reports_prompt_tokens_and_the_first_token_moment(settings, folder, scripted):
    class Counting(type(scripted())):
        def count_tokens(self, messages):
            return sum(len(m["content"]) for m in messages) // 4

    gen = Counting(answers=["Invoices must be paid within 30 days [1]."])
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder])
        a = lib.ask("When must invoices be paid?", kbs=["kb"])
    assert a.prompt_tokens == gen.count_tokens(gen.calls[-1]["messages"]) and a.prompt_tokens > 50
    stages = sum(v for k, v in a.timings_ms.items() if k != "first_token")
    assert 0 < a.timings_ms["first_token"] <= stages + 1
    with _lib(settings, scripted()) as lib:  # a generator that cannot count: None, not a guess
        lib.ingest("kb", [folder])
        assert lib.ask("When must invoices be paid?", kbs=["kb"]).prompt_tokens is None


# -- no passages at all: an immediate, specific answer, and no model call ------------------------
def test_an_empty_base_is_answered_at_once_without_the_model(settings, tmp_path, scripted):
    gen = scripted(answers=["住宿费用每晚最多可以报销300元。[1]"])
    empty = tmp_path / "nothing"
    empty.mkdir()
    with _lib(settings, gen) as lib:
        lib.ingest("demo", [empty])  # the base exists, holds no document
        en = lib.ask("How long do I have to upload travel receipts?", kbs=["demo"])
        zh = lib.ask("出差住宿费用每晚最多可以报销多少钱？", kbs=["demo"])
    assert gen.calls == []  # neither the fallback nor the answer model was asked
    assert en.status == "refused" and not en.passages and not en.citations
    assert en.text == "The knowledge base 'demo' has no documents yet: add files or folders."
    assert zh.status == "refused" and zh.text == "知识库“demo”还没有文档：请先添加文件或文件夹。"
    assert "generate" not in en.timings_ms


def test_nothing_matching_the_filters_names_them(settings, folder, scripted):
    from desktop_kb.store.filters import parse_filters

    gen = scripted()
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [folder], tags=["finance"])
        flt = parse_filters(["tag=legal", "mtime_from=2020-01-01"])
        a = lib.ask("When must invoices be paid?", kbs=["kb"], flt=flt)
        b = lib.ask("发票什么时候付款？", kbs=["kb"], flt=flt)
    assert gen.calls == []
    assert a.status == "refused" and not a.passages
    assert a.text == ("Nothing in 'kb' matches this question with the filters in force "
                      "(tag legal; modified 2020-01-01–…); try without them.")
    assert b.text == "“kb”中没有与这个问题匹配的内容（当前筛选条件：tag legal; modified 2020-01-01–…；可去掉筛选条件再试）。"


def test_a_long_conversation_is_shortened_to_fit_the_prompt():
    from desktop_kb.query.pipeline import MAX_HISTORY_TOKENS, recent_history
    from desktop_kb.text.budget import estimate_tokens

    short = [(f"Question {i}?", f"Answer {i} [1].") for i in range(6)]
    # the earlier answers' [n] point at that turn's passages: not carried into this one's prompts
    assert recent_history(short, 4) == [(f"Question {i}?", f"Answer {i}.") for i in range(2, 6)]
    assert recent_history(short, 0) == []
    huge = [("差旅" * 4000, "答" * 8000), ("How much for hotels?", "Up to 180 euros [1][2, 3].")]
    kept = recent_history(huge, 4)  # 8,000-character turns (what the API accepts) would overflow 4,096
    assert kept == [("How much for hotels?", "Up to 180 euros.")]
    assert sum(estimate_tokens(q) + estimate_tokens(a) for q, a in kept) <= MAX_HISTORY_TOKENS


def test_the_history_leaves_out_the_quote_a_condition_check_appended():
    from desktop_kb.query.pipeline import recent_history
    from desktop_kb.verify.conditions import QUOTE

    en = "500元 a night [2]." + QUOTE["en"].format(sentence="住宿费用每晚不超过五百元，一线城市不超过六百元。", n=2)
    zh = "每晚500元。[1]" + QUOTE["zh"].format(sentence="住宿费用每晚不超过五百元。", n=1)
    assert recent_history([("Hotel?", en), ("住宿？", zh)], 4) == [("Hotel?", "500元 a night."), ("住宿？", "每晚500元。")]
    # and the quote's English after it: a follow-up copied "(in English: … 500 yuan … 600 yuan …)" as its answer
    from desktop_kb.query.one_script import ENGLISH_NOTE

    noted = en.removesuffix(" [2]") + ENGLISH_NOTE.format(english="up to 500 yuan (600 in first-tier cities)") + " [2]"
    assert recent_history([("Hotel?", noted)], 4) == [("Hotel?", "500元 a night.")]


def test_an_answer_about_another_thing_than_asked_is_refused_without_trying_passages_that_do_not_name_it(
        settings, tmp_path, scripted):
    """线蚓鳗's article is not in the documents: the model answers with 蟒鳗's length; the
    refusal names what was asked, and no other passage is read alone, as none names it."""
    d = tmp_path / "fish"
    d.mkdir()
    (d / "蟒鳗.md").write_text("# 蟒鳗\n\n蟒鳗为蚓鳗科的其中一种，体长可达42公分。\n", encoding="utf-8")
    (d / "裸胸鳝.md").write_text("# 裸胸鳝\n\n裸胸鳝为鳗鲡目的其中一种，体长可达80公分。\n", encoding="utf-8")

    class Model(scripted):
        def chat(self, messages, **kw):
            if kw.get("json_schema") is None:
                prompt = messages[-1]["content"]
                n = next(k for k in "123456" if f"[{k}] (蟒鳗.md" in prompt)
                self.answers = [f"蟒鳗的体长可达42公分[{n}]。"]
            return super().chat(messages, **kw)

        def yes_no(self, messages, *, cancel=None):
            return 4.0

    gen = Model()
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [d])
        a = lib.ask("线蚓鳗的体长是多少？", kbs=["kb"])
    assert a.status == "refused" and a.refusal == "not_stated", a.text
    assert "线蚓鳗" in a.text and "42" not in a.text
    assert len([c for c in gen.calls if c["json_schema"] is None]) == 1  # no passage read alone


def test_an_english_answer_over_chinese_passages_is_given_in_english(settings, tmp_path, scripted, monkeypatch):
    """The model leaves Chinese words in its English answer: they are put into English, the
    passage's words kept in brackets after them."""
    from desktop_kb.verify import support

    monkeypatch.setattr(support, "CROSS_LANGUAGE_MIN", -1.0)  # the hash embedder cannot read across languages
    docs = tmp_path / "zh"
    docs.mkdir()
    (docs / "地铁.md").write_text("# 苏州街站\n\n苏州街站是北京地铁10号线的一座车站，将来与规划中的16号线换乘。\n",
                                 encoding="utf-8")

    class Model(scripted):
        def chat(self, messages, **kw):
            prompt = messages[-1]["content"]
            if kw.get("json_schema") is None and prompt.startswith("1. "):  # the phrases to put into English
                self.answers = ["1. Beijing Subway Line 10"]
            elif kw.get("json_schema") is None and "You translate questions" in messages[0]["content"]:
                self.answers = ["苏州街站在哪条线上？"]
            elif kw.get("json_schema") is None:
                self.answers = ["Suzhou Street is a station on the 北京地铁10号线 and the planned 16号线 [1]."]
            return super().chat(messages, **kw)

    with _lib(settings, Model()) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("Which line is Suzhou Street station on?", kbs=["kb"])
    assert a.status == "answered", (a.text, a.problems)
    assert a.text == ("Suzhou Street is a station on the Beijing Subway Line 10 (北京地铁10号线) and the planned "
                      "Line 16 (16号线) [1].")
    assert "translate" in a.timings_ms


def test_an_english_question_is_searched_again_with_the_name_as_the_passages_write_it(settings, tmp_path, scripted):
    """The model translated "Pan Shu" as 潘书; the passage found writes 潘淑: the question is
    translated again with 潘淑 in place of the pinyin and searched so (the BM25 leg then matches the
    name), and the judge reads that translation."""
    docs = tmp_path / "zh"
    docs.mkdir()
    (docs / "潘淑.md").write_text("# 潘淑\n\n潘淑，会稽句章人，吴大帝孙权的皇后，是吴废帝孙亮之母。\n", encoding="utf-8")

    class Model(scripted):
        def chat(self, messages, **kw):
            if kw.get("json_schema") is None and "You translate questions" in messages[0]["content"]:
                self.answers = ["潘淑是哪里人？" if "潘淑" in messages[-1]["content"] else "潘书是从哪里来的？"]
            elif kw.get("json_schema") is None:
                self.answers = ["Pan Shu was from Kuaiji Juzhang [1]."]
            return super().chat(messages, **kw)

    gen = Model()
    with _lib(settings, gen) as lib:
        lib.ingest("kb", [docs])
        a = lib.ask("Where was Pan Shu from?", kbs=["kb"])
    assert a.queries == ("Where was Pan Shu from?", "潘淑是哪里人？")
    asked = [c["messages"][-1]["content"] for c in gen.calls if "You translate questions" in c["messages"][0]["content"]]
    assert asked[0].endswith("Where was Pan Shu from?") and asked[1].endswith("Where was 潘淑 from?")
    assert len(asked) == 2  # no third: the check reads the search's second translation
