"""The run's Markdown job summary: GitHub's (GITHUB_STEP_SUMMARY) and --judge-summary=PATH, written once."""

from __future__ import annotations

import pytest

from helpers import CANARY_KEY
from helpers.openai_server import OpenAIServer, reply_json

BOT = f"""
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns close after 14 days.", "Says returns are accepted within 30 days", threshold=0.7)

def test_tone():
    assert_judged("Happy to help!", "Is polite and never says {CANARY_KEY}", threshold=0.7)
"""


def judge(request: dict) -> str:
    text = request["messages"][-1]["content"]
    if "14 days" in text:
        return reply_json(0.2, f"The answer says 14 days, not 30 ({CANARY_KEY}).")
    return reply_json(0.9, "Polite.")


@pytest.fixture
def server():
    with OpenAIServer(judge) as running:
        yield running


def args(server: OpenAIServer) -> list[str]:
    return ["--judge-model=openai/judge-test", f"--judge-api-base={server.base_url}", "--judge-retries=0"]


def test_a_run_with_github_step_summary_appends_the_failed_judgments_reasoning(pytester, server, monkeypatch):
    summary = pytester.path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_bot=BOT)
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *args(server)).assert_outcomes(passed=1, failed=1)
    text = summary.read_text()
    assert text.startswith("earlier step\n## LLM judge (pytest-llmjudge)\n")  # appended
    assert "2 judged, 0 replayed, 2 live, 1 below threshold, 0 unparseable, cost unknown" in text
    assert "| `test_bot.py::test_refund` | Says returns are accepted within 30 days | 0.20 | 0.70 |" in text
    assert "The answer says 14 days, not 30 ([redacted])." in text  # the reasoning, redacted
    assert CANARY_KEY not in text
    assert "test_tone" not in text  # it passed


def test_replay_misses_are_listed_with_the_command_that_records_them(pytester, server, monkeypatch):
    pytester.makepyfile(test_bot=BOT)
    path = pytester.path / "out" / "summary.md"
    path.parent.mkdir()
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--judge-summary={path}")
    result.assert_outcomes(failed=2)
    assert f"llmjudge: wrote job summary {path}" in result.stdout.lines
    text = path.read_text()
    assert "mode replay (CI detected: CI is set)" in text
    assert "### Replay misses (2)" in text
    assert (
        "```sh\npytest 'test_bot.py::test_refund' 'test_bot.py::test_tone' --judge-mode=auto --judge-model=MODEL\n```"
        in text
    )
    assert "no stored verdict for this judgment" in text


def test_no_summary_where_nothing_asks_for_one_or_nothing_was_judged(pytester, server, monkeypatch):
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not summary.exists()  # GitHub's summary gets a section only from a run that judged
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    pytester.makepyfile(test_bot=BOT)
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *args(server))
    assert not summary.exists() and not list(pytester.path.rglob("*.md"))


def test_under_xdist_the_controller_writes_it_once(pytester, server, monkeypatch):
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_bot=BOT)
    result = pytester.runpytest_subprocess("-n", "2", "--judge-mode=auto", "-p", "no:cacheprovider", *args(server))
    result.assert_outcomes(passed=1, failed=1)
    text = summary.read_text()
    assert text.count("## LLM judge (pytest-llmjudge)") == 1
    assert "The answer says 14 days, not 30 ([redacted])." in text
