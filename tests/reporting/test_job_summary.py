"""The run's Markdown job summary: GitHub's (GITHUB_STEP_SUMMARY) and --judge-summary=PATH, written once."""

from __future__ import annotations

import pytest

from helpers import CANARY_KEY, FAKE_CONFTEST
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


GATED = f"""
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge(pass_rate=0.9)
@pytest.mark.parametrize("n", range(10))
def test_answer(n):
    score = 0.2 if n in (3, 7) else 0.9
    assert_judged(f"Answer {{n}}. SCORE={{score}}", "Is right and never says {CANARY_KEY}", threshold=0.7)

@pytest.mark.judge(pass_rate=0.5, confidence=0.95)
class TestTone:
    @pytest.mark.parametrize("n", range(4))
    def test_polite(self, n):
        assert_judged(f"Polite {{n}}. SCORE=0.9", "Is polite", threshold=0.7)
"""


def gates_section(text: str) -> list[str]:
    """The summary's gates section, up to the next section."""
    lines = text.splitlines()
    start = lines.index("### Gates (1 failed of 2)")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("### ")), len(lines))
    return lines[start:end]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["sequential", "xdist"])
def test_the_gates_are_in_the_summary_with_their_rates_and_failed_cases(pytester, workers):
    """Given a gated group of 10 cases of which 8 pass (pass_rate=0.9: it fails) and a class gated at 0.5
    with confidence 0.95 (it passes), the summary's gates section names each group with its rate and
    interval, its gate and its decision, and the failed cases with the judge's reasoning, redacted; the
    same under -n 2."""
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_gated=GATED)
    path = pytester.path / "summary.md"
    result = pytester.runpytest_subprocess(
        *workers, "--judge-mode=auto", "-p", "no:cacheprovider", "-p", "no:randomly", f"--judge-summary={path}"
    )
    assert result.ret == 1, result.stdout.str()
    section = gates_section(path.read_text())
    assert section[:6] == [
        "### Gates (1 failed of 2)",
        "",
        "| Group | Decision | Cases | Gate |",
        "|---|---|---|---|",
        "| `test_gated.py::TestTone` | passed | 4 of 4 cases passed: 100.0% (95% Wilson interval 51.0% to 100.0%) | "
        "pass\\_rate=0.5, confidence=0.95: Wilson lower bound 51.0% &gt;= 50.0% |",
        "| `test_gated.py::test_answer` | **failed** | 8 of 10 cases passed: 80.0% (95% Wilson interval 49.0% to "
        "94.3%) | pass\\_rate=0.9: rate 80.0% &lt; 90.0% |",
    ]
    text = "\n".join(section)
    assert "<summary>Failed cases of test_gated.py::test_answer (2)</summary>" in text
    for case in ("test_gated.py::test_answer[3]", "test_gated.py::test_answer[7]"):
        assert f"{case}`:" in text
    assert text.count("reasoning: fake judge gave 0.2") == 2
    assert "criteria:  Is right and never says [redacted]" in text
    assert CANARY_KEY not in path.read_text()


def test_a_gate_with_nothing_judged_still_reaches_githubs_summary(pytester, monkeypatch):
    """Given a gated group whose cases judge nothing (the gate fails: no judged case), GitHub's summary gets
    the gate's row, though no judgment was made."""
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(
        test_empty="""
        import pytest

        @pytest.mark.judge(pass_rate=0.9)
        @pytest.mark.parametrize("n", range(2))
        def test_case(n):
            pass
        """
    )
    pytester.runpytest("-p", "no:cacheprovider", "--judge-mode=replay").assert_outcomes(passed=2, failed=1)
    text = summary.read_text()
    assert "### Gates (1 failed of 1)" in text
    assert (
        "| `test_empty.py::test_case` | **failed** | 0 of 0 cases passed | pass\\_rate=0.9: no judged case to decide on |"
        in text
    )
    assert (
        "- `test_empty.py::test_case`: not counted: test\\_empty.py::test\\_case\\[0\\] (it made no judgment)" in text
    )
