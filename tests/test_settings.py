from __future__ import annotations

import dataclasses
import json

import pytest

from desktop_kb.errors import ConfigError, FilterError
from desktop_kb.settings import SETTINGS_VERSION, Settings, default_data_dir, load_settings, save_settings
from desktop_kb.store.filters import parse_filters


def test_defaults_and_round_trip(tmp_path):
    s = load_settings(tmp_path)
    assert s.data_dir == tmp_path.resolve() and s.chunk.size == 800 and s.chunk.overlap == 120
    assert s.query.recall == 20 and s.query.top_k == 5 and s.query.rrf_k == 60
    s2 = s.replace(query=s.query.__class__(recall=40, top_k=8))
    save_settings(s2)
    raw = json.loads((tmp_path / "settings.json").read_text())
    assert raw["version"] == SETTINGS_VERSION
    assert load_settings(tmp_path).query.recall == 40


def test_env_and_explicit_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DESKTOP_KB_DATA_DIR", str(tmp_path / "env"))
    assert default_data_dir() == (tmp_path / "env").resolve()
    assert default_data_dir(tmp_path / "cli") == (tmp_path / "cli").resolve()


def test_partial_and_nested_values_merge_with_defaults(tmp_path):
    (tmp_path / "settings.json").write_text(json.dumps(
        {"version": 1, "models": {"llm": {"path": "/x.gguf"}, "threads": 1}, "unknown": 5}))
    s = load_settings(tmp_path)
    assert s.models.llm.path == "/x.gguf" and s.models.llm.backend == "llama_cpp" and s.models.threads == 1


@pytest.mark.parametrize("bad", [
    {"chunk": {"size": "big"}}, {"chunk": {"size": 50}}, {"query": {"top_k": -1}},
    {"query": {"recall": 2, "top_k": 5}}, {"language": "fr"}, {"version": 99}, [1, 2],
])
def test_bad_settings_are_clear_config_errors(tmp_path, bad):
    (tmp_path / "settings.json").write_text(json.dumps(bad))
    with pytest.raises(ConfigError):
        load_settings(tmp_path)


def test_corrupt_settings_file(tmp_path):
    (tmp_path / "settings.json").write_text("{not json")
    with pytest.raises(ConfigError) as e:
        load_settings(tmp_path)
    assert "settings" in e.value.message.lower()


def test_filters_parse_and_reject_hostile_values():
    f = parse_filters(["tag=a,b", "tag=c", "folder=/docs", "mtime_from=2024-01-01", "mtime_to=1800000000"])
    assert f.tags == ("a", "b", "c") and f.folders == ("/docs",)
    assert f.mtime_from == 1704067200 and f.mtime_to == 1800000000
    for bad in (["nope"], ["color=red"], ["tag=\x00evil"], ["tag=" + "x" * 2000], ["mtime_from=yesterday"],
                ["mtime_from=2025-01-01", "mtime_to=2024-01-01"], ["tag=" + ",".join(["t"] * 300)],
                ["owner=\ud800"], ["mtime_from=999999999999"], ["mtime_to=-99999999999"]):
        with pytest.raises(FilterError):
            parse_filters(bad)
    for bad, field in ((["owner=\ud800"], "owner"), (["mtime_to=-99999999999"], "mtime_to"), (["tag="], "tag")):
        with pytest.raises(FilterError) as caught:
            parse_filters(bad)
        assert caught.value.param == field  # the local API names the field


def test_the_stores_own_filters_take_any_file_name():
    """Paths the ingest filters by are not user input: a newline or a long name is a file's real name."""
    from desktop_kb.protocols import SearchFilter
    from desktop_kb.store.filters import conditions

    odd = "/docs/new\nline\tname.txt", "/" + "d" * 2000 + ".txt"
    assert conditions(SearchFilter(paths=odd))[0].any_of == odd


def test_a_folder_filter_with_a_trailing_slash_names_the_folder_and_a_bom_is_read(tmp_path):
    assert parse_filters(["folder=/docs/", "path=/docs/a.md"]).folders == ("/docs",)
    assert parse_filters(["folder=/"]).folders == ("/",)
    (tmp_path / "settings.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"query": {"top_k": 7}}).encode())
    assert load_settings(tmp_path).query.top_k == 7  # saved by Windows Notepad: it was refused


def test_settings_is_frozen(tmp_path):
    s = Settings(data_dir=tmp_path)
    with pytest.raises(AttributeError):
        s.language = "zh"  # type: ignore[misc]


def test_version_1_file_types_gain_images_and_opendocument(tmp_path):
    from desktop_kb.settings import V1_EXTENSIONS

    (tmp_path / "settings.json").write_text(json.dumps({"version": 1, "extensions": list(V1_EXTENSIONS)}))
    s = load_settings(tmp_path)
    assert {".png", ".jpg", ".tiff", ".odt", ".ods", ".odp"} <= set(s.extensions)
    assert s.ingest.ocr == "auto"
    (tmp_path / "settings.json").write_text(json.dumps({"version": 1, "extensions": [".md"]}))
    assert load_settings(tmp_path).extensions == (".md",)  # a list the user chose is kept
    (tmp_path / "settings.json").write_text(json.dumps({"ingest": {"ocr": "sometimes"}}))
    with pytest.raises(ConfigError, match=r"ingest\.ocr"):
        load_settings(tmp_path)


def test_saved_settings_hold_only_what_differs_so_new_defaults_reach_the_user(tmp_path):
    from desktop_kb.settings import ModelSpec

    s = load_settings(tmp_path)
    llm = ModelSpec("my-model", "llama_cpp", "/models/my.gguf")
    save_settings(s.replace(query=dataclasses.replace(s.query, top_k=8), language="zh").with_model("llm", llm))
    raw = json.loads((tmp_path / "settings.json").read_text())
    assert raw == {"version": SETTINGS_VERSION, "language": "zh", "query": {"top_k": 8},
                   "models": {"llm": dataclasses.asdict(llm)}}  # a model is written whole
    back = load_settings(tmp_path)
    assert back.query.top_k == 8 and back.models.llm == llm and back.query.recall == s.query.recall
    save_settings(back.replace(language="en", query=s.query, models=s.models))
    assert json.loads((tmp_path / "settings.json").read_text()) == {"version": SETTINGS_VERSION}


def test_version_2_files_lose_the_old_calibrated_defaults_and_keep_choices(tmp_path):
    """A version-2 file held every value: the judge's old yes/no thresholds there are not choices."""
    old = dataclasses.asdict(Settings(data_dir=tmp_path).query) | {
        "judge_threshold": 0.0, "judge_threshold_cjk": -0.6, "judge_margin_missing_term_cjk": 0.0,
        "lead_passages": 5, "top_k": 7}
    (tmp_path / "settings.json").write_text(json.dumps({"version": 2, "query": old}))
    q = load_settings(tmp_path).query
    fresh = Settings(data_dir=tmp_path).query
    assert (q.judge_threshold, q.judge_threshold_cjk, q.judge_margin_missing_term_cjk, q.lead_passages) == (
        fresh.judge_threshold, fresh.judge_threshold_cjk, fresh.judge_margin_missing_term_cjk, fresh.lead_passages)
    assert q.judge_threshold != 0.0 and q.top_k == 7  # the user's own value stays
    (tmp_path / "settings.json").write_text(json.dumps({"version": 2, "query": {"judge_threshold": 1.2}}))
    assert load_settings(tmp_path).query.judge_threshold == 1.2  # not an old default: a choice
    (tmp_path / "settings.json").write_text(json.dumps({"version": 3, "query": {"judge_threshold": 0.0}}))
    assert load_settings(tmp_path).query.judge_threshold == 0.0  # written by this version: a choice


def test_models_folder_is_shared_by_data_folders(tmp_path, monkeypatch):
    monkeypatch.delenv("DESKTOP_KB_MODELS_DIR", raising=False)
    monkeypatch.setenv("DESKTOP_KB_DATA_DIR", str(tmp_path / "main-data"))
    one, two = Settings(data_dir=tmp_path / "one"), Settings(data_dir=tmp_path / "two")
    assert one.models_dir == two.models_dir == tmp_path / "main-data" / "models"
    (tmp_path / "two" / "models").mkdir(parents=True)
    (tmp_path / "two" / "models" / "old.gguf").write_bytes(b"x")
    assert two.models_dir == tmp_path / "two" / "models"  # an older install's own copy keeps working
    monkeypatch.setenv("DESKTOP_KB_MODELS_DIR", str(tmp_path / "elsewhere"))
    assert one.models_dir == tmp_path / "elsewhere"
    pinned = one.replace(models=dataclasses.replace(one.models, dir=str(tmp_path / "pinned")))
    assert pinned.models_dir == tmp_path / "pinned"


@pytest.mark.parametrize("query", [{"evidence_tokens": -1}, {"passage_tokens": 10}, {"section_tokens": 50},
                                   {"rewrite": "sometimes"}, {"fusion": "max"}, {"judge_threshold": 11},
                                   {"judge_margin_per_dense": -1}, {"judge_margin_per_dense": 1e9},
                                   {"judge_dense_reference": 2}])
def test_answer_speed_settings_are_checked(tmp_path, query):
    (tmp_path / "settings.json").write_text(json.dumps({"query": query}))
    with pytest.raises(ConfigError, match=r"query\." + next(iter(query))):
        load_settings(tmp_path)
