"""desktop-kb's own reader inside the app: spans and a claim's mass from token logits, the fused
verifier's mapping, the ONNX build of the shipped weights against the training framework, the
shipped reader + verifier on fixed claims, and a damaged reader leaving the verifier alone."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from fixed_claims import FIXED

from desktop_kb.backends.reader_e5 import MAX_SPAN, claim_mass, fuse, read_spans
from desktop_kb.errors import ModelError
from desktop_kb.models import cross_encoder as ce
from desktop_kb.models import reader as rd
from desktop_kb.settings import Settings

SHIPPED = (rd.shipped_reader_dir() / ce.WEIGHTS_FILE).is_file() and (ce.shipped_weights_dir() / ce.WEIGHTS_FILE).is_file()
needs_shipped = pytest.mark.skipif(not SHIPPED, reason="no shipped reader weights (training/README.md)")


def test_spans_share_one_softmax_with_not_here_and_stay_short():
    pieces = ["▁The", "▁bridge", "▁opened", "▁in", "▁1937", "."]
    first = 3  # <s> q </s></s> then the passage
    start = np.full(first + len(pieces), -20.0)
    end = np.full(first + len(pieces), -20.0)
    start[0] = end[0] = 0.0  # not here: logit 0
    start[first + 4] = end[first + 4] = 1.0  # "1937": logit 2
    null, spans = read_spans(start, end, first, pieces, top=3)
    assert spans[0][1] == "▁1937"
    assert spans[0][0] / null == pytest.approx(math.e ** 2, rel=1e-6)
    assert null + sum(p for p, _ in read_spans(start, end, first, pieces, top=100)[1]) == pytest.approx(1.0)
    # no span longer than MAX_SPAN tokens is a candidate
    long = ["▁x"] * (MAX_SPAN + 5)
    s, e = np.zeros(len(long) + 1), np.zeros(len(long) + 1)
    _, spans = read_spans(s, e, 1, long, top=10_000)
    assert max(len(piece) // 2 for _, piece in spans) == MAX_SPAN


def test_a_claims_mass_is_what_it_says():
    spans = [(0.6, "▁1937."), (0.3, "▁in▁1937"), (0.1, "▁1933")]
    assert claim_mass("The bridge opened in 1937.", spans) == pytest.approx(0.9)
    assert claim_mass("1937", spans) == pytest.approx(0.6 + 0.3 * 4 / 6)
    assert claim_mass("It opened in 1936.", spans) == 0
    assert claim_mass("李秘书负责记录。", [(0.7, "李秘书"), (0.2, "王经理")]) == pytest.approx(0.7)


def test_fuse_maps_each_languages_cut_points_onto_the_shipped_thresholds():
    cal = {"w": 2.0, "refuse_below": 0.2, "support_from": 0.5}

    def mass_for(f: float, v: float) -> float:  # logit(mass) = f - w v
        return 1 / (1 + math.exp(-(f - 2.0 * v)))

    assert fuse(mass_for(-3.0, 0.5), 0.5, (-3.0, 1.0), cal) == pytest.approx(0.2, abs=1e-6)
    assert fuse(mass_for(1.0, 0.5), 0.5, (-3.0, 1.0), cal) == pytest.approx(0.5, abs=1e-6)
    assert fuse(mass_for(2.0, -0.5), -0.5, (-1.0, 2.0), cal) == pytest.approx(0.5, abs=1e-6)
    probs = [fuse(m, 0.3, (-1.0, 2.0), cal) for m in (0.01, 0.1, 0.5, 0.9, 0.99)]
    assert probs == sorted(probs) and 0 < probs[0] < probs[-1] < 1  # monotone in the mass
    assert fuse(None, -1.5, (-1.5, 0.0), cal) == pytest.approx(0.2, abs=1e-6)  # the verify logit alone


class _Head:
    """A stand-in verify head and reader (plumbing only: no quality is claimed here)."""

    id, folder = "head", Path("x")

    def __init__(self) -> None:
        self.read: list[str] = []
        self.calibration: dict = {"refuse_below": 0.1, "support_from": 0.3}

    def logits(self, pairs):
        return np.array([[0.0 if "1937" in a else -3.0, 0.0] for a, _ in pairs])

    def spans(self, question, texts):
        self.read += list(texts)
        return [(0.1, [(0.8, "▁五百元")]) for _ in texts]


def test_the_reading_verifier_fuses_where_it_has_cut_points_and_reads_alone_elsewhere():
    from desktop_kb.backends.reader_e5 import ReadingVerifier

    head, reader = _Head(), _Head()
    reader.calibration = {"w": 1.0, "refuse_below": 0.2, "support_from": 0.5, "by_lang": {"zh": [-2.0, 1.0]}}
    rv = ReadingVerifier(head, reader)  # type: ignore[arg-type]
    p_en = rv.verify("When did it open?", [("It opened in 1937.", "(B) It opened in 1937."), ("In 1933.", "(B) x")])
    assert reader.read == []  # English has no cut points here: the verify head alone, the reader not run
    lo, hi = math.log(0.1 / 0.9), math.log(0.3 / 0.7)
    want = [1 / (1 + math.exp(-(math.log(0.25) + (v - lo) * (math.log(1.0) - math.log(0.25)) / (hi - lo))))
            for v in (0.0, -3.0)]
    assert p_en == pytest.approx(want)
    right, wrong = rv.verify("住宿费每晚多少？", [("五百元。", "(手册) 每晚五百元。"), ("一百元。", "(手册) 每晚五百元。")])
    assert right > wrong  # the same verify logit: the reader's mass decides
    assert reader.read == ["(手册) 每晚五百元。"]  # one reading per evidence
    reader.calibration = {"w": 1.0}
    with pytest.raises(ModelError, match="calibration"):
        ReadingVerifier(head, reader)  # type: ignore[arg-type]


def test_a_damaged_reader_leaves_the_verifier_alone(tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnxruntime")
    from desktop_kb.cli.commands import _install_reader
    from desktop_kb.library import factory

    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / ce.WEIGHTS_FILE).write_bytes(b"not the weights")
    (folder / "manifest.json").write_text(json.dumps({"weights": {"sha256": "0" * 64}}))
    monkeypatch.setattr(rd, "shipped_reader_dir", lambda: folder)
    settings = Settings(data_dir=tmp_path / "data")
    _install_reader(settings)  # what `models install` runs: reported, not fatal
    err = capsys.readouterr().err
    assert "The reader was not built" in err and "reader weights are damaged" in err
    sentinel = object()
    monkeypatch.setattr(factory, "_cross_encoder", lambda s, role: sentinel)
    assert factory.build_verifier(settings) is sentinel  # the verify head reads alone
    built = rd.reader_build_dir(settings)  # a built folder damaged afterwards is not used either
    built.mkdir(parents=True)
    (built / "model.onnx").write_bytes(b"x")
    (built / "manifest.json").write_text(json.dumps({"format": 1, "files": {}}))
    assert factory.build_verifier(settings) is sentinel
    with pytest.raises(ModelError):
        rd.verify_reader(built)


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    pytest.importorskip("onnxruntime")
    from desktop_kb.backends.cross_encoder_e5 import E5CrossEncoder
    from desktop_kb.backends.reader_e5 import E5Reader, ReadingVerifier

    root = tmp_path_factory.mktemp("models")
    verifier = E5CrossEncoder(ce.build_cross_encoder(root / ce.CROSS_ENCODER_DIRNAME))
    reader = E5Reader(ce.build_cross_encoder(root / rd.READER_DIRNAME, weights=rd.shipped_reader_dir(), precision="fp32"))
    return ReadingVerifier(verifier, reader)


@needs_shipped
@pytest.mark.slow
def test_the_shipped_readers_onnx_build_matches_torch(shipped):
    torch = pytest.importorskip("torch")
    from desktop_kb.backends.reader_e5 import encode_reader
    from training.reader import build_model

    model = build_model(rd.shipped_reader_dir())  # the same stored (int8) weights, in PyTorch
    model.eval()
    tok = shipped.reader.tokenizer
    for question, text in [("谁负责记录会议？", "(会议) 会议由王经理主持，李秘书负责记录。"),
                           ("When did the bridge open?", "(Bridge) Construction began in 1933 and it opened in 1937.")]:
        row = encode_reader(tok, question, text)
        ids = torch.tensor([row.ids])
        allowed = torch.ones_like(ids, dtype=torch.bool)
        with torch.no_grad():
            start, end = (t[0].numpy() for t in model.spans(ids, torch.ones_like(ids), allowed))
        got = shipped.reader._session.run(["span_logits"], {"input_ids": ids.numpy(),
                                                            "attention_mask": np.ones_like(ids.numpy())})[0][0]
        assert np.abs(got[:, 0] - start).max() < 1e-2 and np.abs(got[:, 1] - end).max() < 1e-2


IDS = ["en-role", "en-date", "zh-role", "zh-amount"]


@needs_shipped
@pytest.mark.slow
@pytest.mark.parametrize(("question", "evidence", "right", "wrong"), FIXED, ids=IDS)
def test_the_shipped_reader_puts_more_mass_on_the_right_claim(shipped, question, evidence, right, wrong):
    """The four claims the verify head alone cannot rank (p right ≈ p wrong): the reader can."""
    spans = shipped.reader.spans(question, [evidence])[0][1]
    assert claim_mass(right, spans) > claim_mass(wrong, spans) + 0.05, spans[:5]


@needs_shipped
@pytest.mark.slow
@pytest.mark.parametrize(("question", "evidence", "right", "wrong"), FIXED[2:], ids=IDS[2:])
def test_the_shipped_reading_verifier_ranks_the_right_chinese_claim_first(shipped, question, evidence, right, wrong):
    p_right, p_wrong = shipped.verify(question, [(right, evidence), (wrong, evidence)])
    assert p_right > p_wrong, (p_right, p_wrong)


@needs_shipped
@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "not yet decided: at the thresholds calibrated on held-out training claims (97% of right claims "
    "stand) the wrong claim is still 'supported' in all four (p right / wrong 0.88/0.89, 1.00/1.00 — "
    "English is read by the verify head alone: 31 held-out right claims are too few to calibrate the "
    "reader on — 0.94/0.55, 0.95/0.93; refuse below 0.2, supported from 0.5). docs/history/meaning-check.md, "
    "session 22. Strict: a model that decides them fails this marker, which then goes."))
@pytest.mark.parametrize(("question", "evidence", "right", "wrong"), FIXED, ids=IDS)
def test_the_shipped_reader_and_verifier_decide_fixed_claims_both_ways(shipped, question, evidence, right, wrong):
    from desktop_kb.verify.graded import Thresholds

    t = Thresholds.of_model(shipped)
    p_right, p_wrong = shipped.verify(question, [(right, evidence), (wrong, evidence)])
    assert t is not None and t.verdict(p_right) == "supported" and t.verdict(p_wrong) == "unsupported"


def test_the_reader_folder_must_hold_a_span_head(tmp_path, monkeypatch):
    monkeypatch.setattr(rd, "verify_cross_encoder", lambda folder, what: {"heads": ["verify", "rerank"]})
    with pytest.raises(ModelError, match="no span head"):
        rd.verify_reader(tmp_path)
    monkeypatch.setattr(rd, "verify_cross_encoder", lambda folder, what: {"heads": ["verify", "rerank", "span"]})
    assert rd.verify_reader(tmp_path)["heads"][-1] == "span"
