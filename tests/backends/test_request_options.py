"""The request options (--judge-max-tokens, --judge-reasoning-effort, --judge-params,
--judge-instructions-in-user), sampling temperature, and what a judgment says it sent.

Each runs the plugin for real inside pytester against the local OpenAI-shaped servers, through the
real LiteLLM client, and reads what reached the server from the server's own record; keys are read
from the verdict files the runs write.
"""

from __future__ import annotations

import json

import pytest

from helpers import FAKE_CONFTEST, MODEL
from helpers.verdicts import entries_by_key, verdict_files

OUTPUT = "Returns are accepted within 30 days. SCORE=0.9"
CRITERIA = "Says returns are accepted within 30 days"
JUDGED = f"""
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged({OUTPUT!r}, {CRITERIA!r}, threshold=0.5)
"""


def judge_with_fake(pytester: pytest.Pytester, *args: str, source: str = JUDGED) -> dict[str, dict]:
    """Judge `source` in auto mode with the fake judge; the stored entries (the verdict files are cleared first)."""
    for path in verdict_files(pytester.path):
        path.unlink()
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_judged=source)
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *args).assert_outcomes(passed=1)
    return entries_by_key(pytester.path)


# -- options: values and bad values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, ini, env, message",
    [
        (["--judge-max-tokens=0"], "", {}, "--judge-max-tokens must be a whole number >= 1, got '0'"),
        ([], "judge_max_tokens = lots", {}, "judge_max_tokens must be a whole number >= 1, got 'lots'"),
        (["--judge-reasoning-effort=extreme"], "", {}, "--judge-reasoning-effort must be one of minimal, low, medium"),
        ([], "", {"LLMJUDGE_REASONING_EFFORT": "max"}, "LLMJUDGE_REASONING_EFFORT must be one of minimal"),
        (["--judge-params={seed: 7}"], "", {}, "--judge-params must be a JSON object"),
        (["--judge-params=[1, 2]"], "", {}, "--judge-params must be a JSON object (name: value), got '[1, 2]'"),
        ([], 'judge_params = {"temperature": 1}', {}, "judge_params may not set 'temperature'"),
        ([], "", {"LLMJUDGE_PARAMS": '{"api_key": "x"}'}, "LLMJUDGE_PARAMS may not set 'api_key'"),
        ([], "", {"LLMJUDGE_INSTRUCTIONS_IN_USER": "maybe"}, "LLMJUDGE_INSTRUCTIONS_IN_USER must be true or false"),
    ],
)
def test_bad_values_are_usage_errors_naming_the_place(pytester, monkeypatch, args, ini, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_judged=JUDGED)
    result = pytester.runpytest("--judge-mode=auto", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_bad_params_in_the_marker_name_the_marker(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(
        test_judged=f"""
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge(params={{"stream": True}})
def test_refund():
    assert_judged({OUTPUT!r}, {CRITERIA!r})
"""
    )
    result = pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.judge(params=...): --judge-params may not set 'stream'*"])


# -- keys: unchanged when unset, changed by each option when set -----------------------------------------------


def test_default_key_is_unchanged_and_each_option_changes_it(pytester):
    (default,) = judge_with_fake(pytester)
    # Pinned: computed before the request options existed (key version 2).
    assert default == "9dc61c933d3e56f10c60610b8f22574ff09f5b865496b1390c1c05bd581879e1"
    keys = {default}
    for args in (
        ["--judge-max-tokens=300"],
        ["--judge-reasoning-effort=low"],
        ['--judge-params={"seed": 7}'],
        ['--judge-params={"seed": 8}'],
        ["--judge-instructions-in-user"],
    ):
        (key,) = judge_with_fake(pytester, *args)
        assert key not in keys, args
        keys.add(key)
    # The key holds values, not where they came from: the default temperature given explicitly keeps it.
    (explicit,) = judge_with_fake(pytester, "--judge-temperature=0")
    assert explicit == default


def test_the_verdict_file_entry_names_the_options_when_set(pytester):
    (entry,) = judge_with_fake(
        pytester, "--judge-max-tokens=300", '--judge-params={"seed": 7}', "--judge-instructions-in-user"
    ).values()
    assert entry["max_tokens"] == 300 and entry["extra_params"] == {"seed": 7}
    assert entry["instructions_in_user"] is True and "reasoning_effort" not in entry
    (plain,) = judge_with_fake(pytester).values()
    assert not {"max_tokens", "reasoning_effort", "extra_params", "instructions_in_user"} & plain.keys()


def test_marker_sets_the_options(pytester):
    source = f"""
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge(max_tokens=200, reasoning_effort="high", params={{"seed": 3}}, instructions_in_user=True)
def test_refund():
    assert_judged({OUTPUT!r}, {CRITERIA!r})
"""
    (entry,) = judge_with_fake(pytester, source=source).values()
    assert (entry["max_tokens"], entry["reasoning_effort"], entry["extra_params"]) == (200, "high", {"seed": 3})
    assert entry["instructions_in_user"] is True


@pytest.mark.parametrize(
    "recorded, replayed, named",
    [
        (["--judge-max-tokens=300"], ["--judge-max-tokens=400"], "max tokens (--judge-max-tokens)"),
        ([], ["--judge-reasoning-effort=low"], "reasoning effort (--judge-reasoning-effort)"),
        (
            ['--judge-params={"seed": 7, "top_p": 1}'],
            ['--judge-params={"seed": 8, "top_p": 1}'],
            "request parameters seed (--judge-params)",
        ),
        ([], ["--judge-instructions-in-user"], "where the instructions go (--judge-instructions-in-user)"),
        (["--judge-temperature=0.2"], ["--judge-temperature=0.4"], "temperature (--judge-temperature)"),
    ],
)
def test_a_replay_miss_names_the_option_that_differs(pytester, recorded, replayed, named):
    judge_with_fake(pytester, *recorded)
    result = pytester.runpytest("--judge-mode=replay", "-p", "no:cacheprovider", *replayed)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*nearest stored: key *, which differs in {named}*"])


# -- what reaches the server ------------------------------------------------------------------------------------


def run_live(pytester: pytest.Pytester, model: str, api_base: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_judged=JUDGED)
    return pytester.runpytest(
        f"--judge-model={model}",
        f"--judge-api-base={api_base}",
        "--judge-mode=auto",
        "--judge-retries=0",
        "--judge-timeout=10",
        "-p",
        "no:cacheprovider",
        *args,
    )


def without_format(params: dict) -> dict:
    """Request parameters less the rubric's response_format (structured output has its own tests)."""
    return {k: v for k, v in params.items() if k != "response_format"}


@pytest.mark.parametrize("model", ["openai/o3-mini", "openai/gpt-5-mini"])
def test_reasoning_effort_reaches_a_reasoning_model(pytester, reasoner, model):
    result = run_live(pytester, model, reasoner.api_base, "--judge-reasoning-effort=low", "--judge-max-tokens=500")
    result.assert_outcomes(passed=1)
    body = reasoner.last.body
    assert body["reasoning_effort"] == "low" and body["max_completion_tokens"] == 500
    assert "temperature" not in body and "max_tokens" not in body
    bare = model.split("/")[1]
    # said once in the summary, and in the verdict file: configured, sent, and what was not sent and why
    assert result.stdout.str().count(f"llmjudge: temperature not sent: {bare} only takes its default") == 1
    (entry,) = entries_by_key(pytester.path).values()
    assert without_format(entry["params"]) == {"temperature": 0.0} and entry["reasoning_effort"] == "low"
    assert without_format(entry["sent"]) == {"reasoning_effort": "low", "max_completion_tokens": 500}
    assert entry["dropped"] == {"temperature": f"{bare} only takes its default"}


def test_reasoning_effort_is_dropped_with_a_note_where_not_taken(pytester, openai_server):
    result = run_live(pytester, "openai/gpt-4o-mini", openai_server.base_url, "--judge-reasoning-effort=low")
    result.assert_outcomes(passed=1)
    assert "reasoning_effort" not in openai_server.requests[-1]
    result.stdout.fnmatch_lines(["llmjudge: reasoning_effort not sent: gpt-4o-mini takes no reasoning_effort"])
    (entry,) = entries_by_key(pytester.path).values()
    assert entry["dropped"] == {"reasoning_effort": "gpt-4o-mini takes no reasoning_effort"}
    assert without_format(entry["sent"]) == {"temperature": 0.0}


def test_params_reach_the_server(pytester, openai_server):
    params = '--judge-params={"seed": 7, "frequency_penalty": 0.5, "user": "ci"}'
    run_live(pytester, "openai/gpt-4o-mini", openai_server.base_url, params, "--judge-max-tokens=300").assert_outcomes(
        passed=1
    )
    body = openai_server.requests[-1]
    assert (body["seed"], body["frequency_penalty"], body["user"]) == (7, 0.5, "ci")
    assert body["max_tokens"] == 300 and body["temperature"] == 0


def test_a_param_litellm_would_leave_out_silently_is_named(pytester, openai_server):
    # LiteLLM maps `user` to nothing for an OpenAI-compatible model it does not know.
    result = run_live(pytester, MODEL, openai_server.base_url, '--judge-params={"seed": 7, "user": "ci"}')
    result.assert_outcomes(passed=1)
    assert "user" not in openai_server.requests[-1] and openai_server.requests[-1]["seed"] == 7
    result.stdout.fnmatch_lines(["llmjudge: user not sent: LiteLLM sends no user to judge-test"])


def test_instructions_in_user_sends_no_system_message(pytester, openai_server):
    run_live(pytester, MODEL, openai_server.base_url, "--judge-instructions-in-user").assert_outcomes(passed=1)
    messages = openai_server.requests[-1]["messages"]
    assert [m["role"] for m in messages] == ["user"]
    assert "impartial evaluator" in messages[0]["content"] and OUTPUT in messages[0]["content"]


def test_the_record_says_what_was_sent(pytester, openai_server):
    report = pytester.path / "report.json"
    run_live(
        pytester, MODEL, openai_server.base_url, f"--judge-report={report}", "--judge-max-tokens=300"
    ).assert_outcomes(passed=1)
    (record,) = json.loads(report.read_text())["judgments"]
    assert {m: without_format(s) for m, s in record["sent"].items()} == {MODEL: {"temperature": 0.0, "max_tokens": 300}}
    assert "dropped" not in record


# -- samples: independent by default, a warning where they cannot vary ---------------------------------------

SAMPLED = f"""
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge(samples=3)
def test_refund():
    assert_judged({OUTPUT!r}, {CRITERIA!r}, threshold=0.5)
"""


def test_samples_without_a_temperature_are_drawn_at_one(pytester, openai_server):
    pytester.makepyfile(test_judged=SAMPLED)
    result = pytester.runpytest(
        f"--judge-model={MODEL}",
        f"--judge-api-base={openai_server.base_url}",
        "--judge-mode=auto",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1)
    assert [r["temperature"] for r in openai_server.requests] == [1.0, 1.0, 1.0]
    entries = entries_by_key(pytester.path).values()
    assert sorted(e["sample"] for e in entries) == [0, 1, 2]
    assert all(without_format(e["params"]) == {"temperature": 1.0} for e in entries)
    assert "SamplesWarning" not in result.stdout.str()


@pytest.mark.parametrize(
    "args, marker",
    [
        (["--judge-temperature=0"], ""),
        ([], ", temperature=0"),
        (["--judge-temperature=0.0", "--judge-samples=2"], None),
    ],
    ids=["cli", "marker", "cli-samples"],
)
def test_samples_at_temperature_zero_warn_that_they_cannot_vary(pytester, args, marker):
    source = SAMPLED if marker is None else SAMPLED.replace("samples=3", f"samples=3{marker}")
    if marker is None:
        source = source.replace("@pytest.mark.judge(samples=3)\n", "")
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_judged=source)
    result = pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*SamplesWarning: llmjudge: samples=* at temperature 0 sends the same request*"])
    assert all(e["params"] == {"temperature": 0.0} for e in entries_by_key(pytester.path).values())
