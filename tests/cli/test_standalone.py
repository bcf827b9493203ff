"""Judging from a command outside pytest (`pytest_llmjudge.standalone`): every `--judge-*` option on the
command line, settings resolved as pytest would resolve them, and a verdict file of the command's own."""

from __future__ import annotations

import argparse
import json
import os

import pytest

from pytest_llmjudge.settings import OPTIONS
from pytest_llmjudge.standalone import add_judge_options, command_context, judge_cli_values, load_settings


def test_every_judge_option_is_on_the_command_line():
    parser = argparse.ArgumentParser()
    add_judge_options(parser)
    args = parser.parse_args(["--judge-model=a,b", "--judge-prune", "--judge-samples", "3"])
    values = judge_cli_values(args)
    assert set(values) == {o.name for o in OPTIONS}
    assert values["model"] == "a,b" and values["prune"] is True and values["samples"] == "3"
    assert values["mode"] is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\njudge_model = "ini-model"\njudge_threshold = 0.7\n'),
        ("pytest.ini", "[pytest]\njudge_model = ini-model\njudge_threshold = 0.7\n"),
        ("tox.ini", "[pytest]\njudge_model = ini-model\njudge_threshold = 0.7\n"),
        ("setup.cfg", "[tool:pytest]\njudge_model = ini-model\njudge_threshold = 0.7\n"),
    ],
)
def test_settings_come_from_the_ini_file_pytest_would_use(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    config = load_settings({}, cwd=sub, environ={})
    assert config.rootdir == tmp_path.resolve() and config.inifile == tmp_path.resolve() / name
    assert config.settings.model == ("ini-model",) and config.settings.threshold == 0.7
    assert config.settings.sources["model"] == "ini" and config.settings.mode == "auto"


def test_command_line_beats_environment_beats_ini_and_ci_replays(tmp_path):
    (tmp_path / "tox.ini").write_text(
        "[pytest]\njudge_model = ini\njudge_samples = 2\naddopts = --judge-temperature=0.3\n"
    )
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\njudge_model = ignored\n")  # tox.ini comes first
    environ = {"LLMJUDGE_MODEL": "env", "LLMJUDGE_STORE": "verdicts", "GITHUB_ACTIONS": "true"}
    config = load_settings({"model": "cli", "mode": None}, cwd=tmp_path, environ=environ)
    settings = config.settings
    assert settings.model == ("cli",) and settings.samples == 2 and settings.temperature == 0.3
    assert settings.mode == "replay" and settings.mode_reason == "CI detected: GITHUB_ACTIONS is set"
    assert config.store_root == tmp_path.resolve() / "verdicts"
    assert load_settings({}, cwd=tmp_path, environ=environ).settings.model == ("env",)
    environ["PYTEST_ADDOPTS"] = "-o judge_samples=4 --judge-mode=refresh"
    settings = load_settings({}, cwd=tmp_path, environ=environ).settings
    assert (settings.mode, settings.samples) == ("refresh", 4)


def test_a_command_records_into_its_own_verdict_file(tmp_path):
    from pytest_llmjudge import Judge

    (tmp_path / "pytest.ini").write_text("[pytest]\njudge_store = stored\n")
    config = load_settings({"model": "m"}, cwd=tmp_path, environ={})

    def backend(messages):
        return json.dumps({"reasoning": "fine", "score": 0.75})

    with command_context("calibration", tmp_path / "data" / "set.jsonl", config) as session:
        verdict = Judge(runtime=session.runtime, context=session.context, backend=backend).score("out", "crit")
    assert verdict.score == 0.75 and verdict.source == "live"
    assert session.verdict_file == tmp_path.resolve() / "stored" / "calibration" / "set.json"
    document = json.loads(session.verdict_file.read_text())
    assert document["test"] == "calibration::data/set.jsonl" and len(document["verdicts"]) == 1


def test_settings_follow_pytest_own_reading_of_its_configuration(tmp_path, monkeypatch):
    # `-c FILE` and `--rootdir` in PYTEST_ADDOPTS are pytest's to interpret: a command reads them as a run does.
    (tmp_path / "pytest.ini").write_text("[pytest]\njudge_model = default-ini\n")
    (tmp_path / "ci.ini").write_text("[pytest]\njudge_model = ci-ini\njudge_threshold = 0.9\n")
    elsewhere = tmp_path / "root"
    elsewhere.mkdir()
    environ = {"PYTEST_ADDOPTS": f"-c {tmp_path / 'ci.ini'} --rootdir {elsewhere}"}
    config = load_settings({}, cwd=tmp_path, environ=environ)
    assert config.inifile == tmp_path.resolve() / "ci.ini"
    assert config.settings.model == ("ci-ini",) and config.settings.threshold == 0.9
    assert config.rootdir == elsewhere.resolve()
    assert config.pytest_cache_dir == elsewhere.resolve() / ".pytest_cache"


def test_under_tox_a_commands_local_cache_is_where_pytest_puts_its_cache(tmp_path, monkeypatch):
    # pytest's cache_dir defaults to $TOX_ENV_DIR/.pytest_cache under tox; the local verdict cache follows it.
    monkeypatch.setenv("TOX_ENV_DIR", str(tmp_path / "toxenv"))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    config = load_settings({}, cwd=tmp_path)
    assert config.cache_dir == tmp_path / "toxenv" / ".pytest_cache" / "d" / "llmjudge"


def test_no_test_sees_the_callers_tox_env_dir():
    # The suite runs under tox: with TOX_ENV_DIR every command a test runs shared one local cache, and a
    # qualification replayed another test's answers (CI failed so: 80 answers "cached", none asked).
    assert "TOX_ENV_DIR" not in os.environ
