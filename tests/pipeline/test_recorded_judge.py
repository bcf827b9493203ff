"""Identity vs record: a verdict is found by what the test decides, and by who judged and how.  Where the
run does not configure the judge's side (a clone's plain `pytest`, CI), the recorded model and call
settings are adopted when exactly one recording matches; a setting the run does configure must match.
A miss reads the same in plain `pytest` and under CI, and counts once."""

from __future__ import annotations

import pytest

from helpers import JUDGED, MODEL
from helpers.openai_server import OpenAIServer
from pytest_llmjudge.options import OPTIONS

# What a recorder may have passed on the command line beside the model: each is the judge's.
JUDGE_FLAGS = [
    ["--judge-max-tokens=1024"],
    ["--judge-temperature=0.3"],
    ['--judge-params={"seed": 7}'],
    ["--judge-structured=off"],
    ["--judge-reasoning-effort=low"],
    ["--judge-instructions-in-user"],
    ["--judge-max-tokens=1024", "--judge-temperature=0.2", '--judge-params={"top_p": 0.9}'],
]


def test_the_flags_above_cover_every_judge_setting_of_the_option_table():
    named = {flag.removeprefix("--judge-").split("=")[0].replace("-", "_") for flags in JUDGE_FLAGS for flag in flags}
    assert named == {o.name for o in OPTIONS if o.keyed == "judge"} - {"model"}


@pytest.fixture
def server():
    with OpenAIServer() as running:
        yield running


def _record(pytester: pytest.Pytester, server: OpenAIServer, *flags: str) -> None:
    live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
    pytester.runpytest(*live, *flags, "--judge-mode=auto", "-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize("flags", JUDGE_FLAGS, ids=" ".join)
def test_what_was_recorded_with_judge_flags_replays_with_none_configured(pytester, server, monkeypatch, flags):
    pytester.makepyfile(test_refund=JUDGED)
    _record(pytester, server, *flags)
    server.stop()  # nothing may be asked again
    plain = pytester.runpytest("-p", "no:cacheprovider")  # a teammate's clone: auto mode, nothing configured
    plain.assert_outcomes(passed=1)
    plain.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live*"])
    monkeypatch.setenv("CI", "true")
    replayed = pytester.runpytest("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live*"])


def test_the_model_configured_and_the_call_settings_recorded_replays(pytester, server, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    _record(pytester, server, "--judge-max-tokens=1024", "--judge-temperature=0.3")
    server.stop()
    monkeypatch.setenv("CI", "true")
    pytester.runpytest(f"--judge-model={MODEL}", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_setting_that_is_configured_must_match_and_the_miss_names_it(pytester, server, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    _record(pytester, server, "--judge-max-tokens=1024")
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("--judge-max-tokens=512", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*ReplayMiss: no stored verdict*", "*which differs in max tokens (--judge-max-tokens)*"]
    )


def test_several_recordings_that_match_are_an_error_naming_the_option_that_picks_one(pytester, server, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    _record(pytester, server, "--judge-max-tokens=1024")
    _record(pytester, server, "--judge-max-tokens=2048")
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*JudgeError: this judgment was recorded by several judges*--judge-max-tokens*"])
    assert "1024" in result.stdout.str() and "2048" in result.stdout.str()
    monkeypatch.delenv("CI")
    pytester.runpytest("--judge-max-tokens=2048", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_several_judge_models_that_recorded_it_are_an_error_naming_the_option(pytester, server, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    _record(pytester, server)
    live = [f"--judge-api-base={server.base_url}", "--judge-model=openai/other-judge", "--judge-mode=auto"]
    pytester.runpytest(*live, "-p", "no:cacheprovider").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*JudgeError: this judgment was recorded by several judges*(--judge-model):",
            f"*- model {MODEL}",
            "*- model openai/other-judge",
            "*pick one: pass --judge-model=... (or judge_model in the ini file)",
        ]
    )


@pytest.mark.parametrize("ci", [False, True], ids=["plain pytest", "CI=true"])
def test_a_miss_reads_the_same_in_plain_pytest_and_under_ci_and_counts_once(pytester, server, monkeypatch, ci):
    pytester.makepyfile(test_refund=JUDGED)
    _record(pytester, server, "--judge-max-tokens=1024")
    pytester.makepyfile(test_refund=JUDGED.replace("30 days.", "thirty days."))  # the app answers otherwise
    if ci:
        monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ReplayMiss: no stored verdict for this judgment*",
            "*nearest stored: key *, which differs in output, messages_sha256",
            # as recorded: the recorded model and its settings, not a placeholder (issue 37)
            f"*record it with a reachable judge: pytest 'test_refund.py::test_refund' --judge-mode=auto "
            f"--judge-model={MODEL} --judge-max-tokens=1024  (then commit the verdict file)",
            "*(verdict files do not record the api base: add --judge-api-base=URL if the judge is served at a URL*",
            "llmjudge: 1 judged, 0 replayed, 0 live, 0 below threshold, 0 unparseable, 1 missing*",
        ]
    )
    assert server.request_count == 1, "a miss never calls out"


PLAIN_KIND = """
from pytest_llmjudge import assert_judged
from pytest_llmjudge.rubrics import Prompt, Rubric


class Plain(Rubric):  # a kind of your own that declares no reply schema: structured output keys nothing
    name = "plain_for_test"

    def prompts(self, case):
        return [Prompt(({"role": "user", "content": f"Score 0-1: {case.output}"},))]


def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says the window", rubric=Plain(), threshold=0.7)
"""


def test_a_configured_setting_a_rubric_does_not_use_does_not_stop_the_recorded_ones(pytester, server, monkeypatch):
    pytester.makepyfile(test_refund=PLAIN_KIND)
    _record(pytester, server, "--judge-max-tokens=1024")
    server.stop()
    monkeypatch.setenv("CI", "true")
    # The ini sets structured output (the team's choice); this kind asks for no schema, so it keys nothing.
    pytester.makeini("[pytest]\njudge_structured = on\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
