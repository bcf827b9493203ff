"""End to end through pytest itself (pytester) and the real LiteLLM client against the local server."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import CANARY_KEY, JUDGED, MODEL
from helpers.openai_server import Reply, reply_json
from helpers.verdicts import verdict_files


def read_checked_verdict_file(root: Path) -> dict:
    (path,) = verdict_files(root)
    return json.loads(path.read_text())


def test_auto_records_then_replay_uses_the_stored_verdict(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    document = read_checked_verdict_file(pytester.path)
    assert document["test"] == "test_refund.py::test_refund"
    (entry,) = document["verdicts"].values()
    assert entry["score"] == pytest.approx(0.9)
    assert entry["model"] == MODEL
    assert entry["criteria"] == "Says returns are accepted within 30 days"
    assert "SCORE=0.9" in entry["output"] and "SCORE=0.9" in entry["reply"]
    assert "threshold" not in entry and "cost_usd" not in entry and "latency_s" not in entry

    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1, "replay must not call the judge"
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live, 0 below threshold, 0 unparseable*"])


def test_auto_reuses_stored_verdict_without_calling_again(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live*"])


def test_local_cache_spares_a_call_when_the_verdict_file_is_gone(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    for path in verdict_files(pytester.path):
        path.unlink()
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 0 replayed, 1 cached, 0 live*"])
    assert len(verdict_files(pytester.path)) == 1, "a cache hit is written back to the committed verdict file"


def test_threshold_change_reuses_stored_verdicts(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    result = pytester.runpytest(*live_args, "--judge-mode=replay", "--judge-threshold=0.95")
    # The argument in the test (0.7) beats the command line: still passes, from the stored verdict.
    result.assert_outcomes(passed=1)
    pytester.makepyfile(test_refund=JUDGED.replace(", threshold=0.7", ""))
    result = pytester.runpytest(*live_args, "--judge-mode=replay", "--judge-threshold=0.95")
    result.assert_outcomes(failed=1)
    assert openai_server.request_count == 1


def test_replay_miss_names_test_key_nearest_entry_and_command(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    pytester.makepyfile(test_refund=JUDGED.replace("30 days. SCORE=0.9", "thirty days. SCORE=0.9"))
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(failed=1)
    assert openai_server.request_count == 1
    result.stdout.fnmatch_lines(
        [
            "*ReplayMiss: no stored verdict for this judgment (mode replay: --judge-mode)",
            "*test: test_refund.py::test_refund",
            "*key:  *",
            "*nearest stored: key *, which differs in output, messages_sha256",
            "*record it with a reachable judge: pytest 'test_refund.py::test_refund' --judge-mode=auto --judge-model=openai/judge-test*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["llmjudge: 1 judged, 0 replayed, 0 live, 0 below threshold, 0 unparseable, 1 missing*"]
    )


def test_ci_environment_defaults_to_replay_and_says_why(pytester, openai_server, live_args, monkeypatch):
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(
        """
        def test_uses_fixture(judge):
            judge.assert_judged("SCORE=0.9", "anything")
        """
    )
    result = pytester.runpytest(*live_args)
    result.assert_outcomes(failed=1)
    assert openai_server.request_count == 0, "CI must not call the judge"
    result.stdout.fnmatch_lines(["llmjudge: mode replay (CI detected: CI is set)*", "*ReplayMiss*"])


def test_ci_false_is_not_ci(pytester, openai_server, live_args, monkeypatch):
    monkeypatch.setenv("CI", "false")
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args).assert_outcomes(passed=1)
    assert openai_server.request_count == 1


def test_failure_shows_score_criteria_reasoning_and_no_plugin_traceback(pytester, openai_server, live_args):
    openai_server.enqueue(reply_json(0.2, "The answer says returns close after 14 days, contradicting the policy."))
    pytester.makepyfile(
        """
        from pytest_llmjudge import assert_judged

        def test_refund():
            answer = "Returns close after 14 days."
            assert_judged(answer, "Says returns are accepted within 30 days", threshold=0.7)
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*pytest_llmjudge.JudgmentFailed: judged 0.20 < threshold 0.70",
            "E*criteria:  Says returns are accepted within 30 days",
            "E*reasoning: The answer says returns close after 14 days, contradicting the policy.",
            f"E*judge:     {MODEL} (live, key *)",
        ]
    )
    out = result.stdout.str()
    assert "pytest_llmjudge/judge.py" not in out and "pytest_llmjudge/api.py" not in out
    # A low score is still a verdict: stored and replayed, failing the same way offline.
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"E*judge:     {MODEL} (replayed, key *)"])


def test_refresh_judges_again_and_rewrites_only_what_changed(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    (path,) = verdict_files(pytester.path)
    before = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    pytester.runpytest(*live_args, "--judge-mode=refresh").assert_outcomes(passed=1)
    assert openai_server.request_count == 2
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime, "an unchanged verdict changes no byte"

    openai_server.enqueue(reply_json(0.3, "Now the judge disagrees."))
    result = pytester.runpytest(*live_args, "--judge-mode=refresh")
    result.assert_outcomes(failed=1)
    (entry,) = json.loads(path.read_text())["verdicts"].values()
    assert entry["score"] == pytest.approx(0.3) and entry["reasoning"] == "Now the judge disagrees."
    result.stdout.fnmatch_lines(["llmjudge drift: test_refund.py::test_refund key *: 0.90 -> 0.30, pass/fail flipped"])


def test_live_mode_judges_and_stores_nothing(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*live_args, "--judge-mode=live", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert verdict_files(pytester.path) == []
    pytester.runpytest(*live_args, "--judge-mode=live").assert_outcomes(passed=1)
    assert openai_server.request_count == 2
    assert not (pytester.path / ".pytest_cache" / "d" / "llmjudge").exists()


def test_junit_xml_carries_each_verdict(pytester, openai_server, live_args):
    openai_server.enqueue(reply_json(0.8, "Clear & correct <ok>."))
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto", "--junitxml=out.xml").assert_outcomes(passed=1)
    tree = ET.parse(pytester.path / "out.xml")
    props = {p.get("name"): p.get("value") for p in tree.iter("property")}
    assert props["llmjudge.score"] == "0.8"
    assert props["llmjudge.threshold"] == "0.7"
    assert props["llmjudge.passed"] == "true"
    assert props["llmjudge.model"] == MODEL
    assert props["llmjudge.source"] == "live"
    assert props["llmjudge.reasoning"] == "Clear & correct <ok>."
    assert len(props["llmjudge.key"]) == 64


def test_summary_counts_and_is_absent_when_nothing_is_judged(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        from pytest_llmjudge import assert_judged

        def test_good():
            assert_judged("SCORE=0.9", "is good")

        def test_bad():
            assert_judged("SCORE=0.1", "is good")

        def test_plain():
            assert 1 + 1 == 2
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["llmjudge: 2 judged, 0 replayed, 2 live, 1 below threshold, 0 unparseable, cost unknown"]
    )

    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not [line for line in result.stdout.lines if line.startswith("llmjudge")]


def test_marker_overrides_per_test_class_and_module(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged

        pytestmark = pytest.mark.judge(threshold=0.95)

        def test_module_level():
            assert_judged("SCORE=0.9", "is good")          # 0.9 < 0.95: fails

        @pytest.mark.judge(threshold=0.5)
        class TestClass:
            def test_class_level(self):
                assert_judged("SCORE=0.6", "is good")      # 0.6 >= 0.5: passes

            @pytest.mark.judge(threshold=0.65)
            def test_function_level(self):
                assert_judged("SCORE=0.6", "is good")      # 0.6 < 0.65: fails
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*judged 0.90 < threshold 0.95*", "*judged 0.60 < threshold 0.65*"])


def test_precedence_marker_over_cli_over_env_over_ini(pytester, openai_server, live_args, monkeypatch):
    pytester.makeini("[pytest]\njudge_threshold = 0.1\n")
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged

        def test_plain():
            assert_judged("SCORE=0.5", "is good")

        @pytest.mark.judge(threshold=0.4)
        def test_marked():
            assert_judged("SCORE=0.5", "is good")
        """
    )
    # ini 0.1: both pass.
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=2)
    # env 0.6 beats ini: the plain test fails, the marker (0.4) beats env: the marked one passes.
    monkeypatch.setenv("LLMJUDGE_THRESHOLD", "0.6")
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1, failed=1)
    # CLI 0.55 beats env: the plain test fails; the marker (0.4) beats the CLI: the marked one passes.
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--judge-threshold=0.55", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED *::test_plain*"])
    assert openai_server.request_count == 1, "one prompt: judged once, replayed after"


@pytest.mark.parametrize(
    ("args", "env", "ini", "message"),
    [
        (["--judge-mode=bogus"], {}, "", "*--judge-mode must be one of auto, replay, refresh, live; got 'bogus'*"),
        (["--judge-threshold=1.5"], {}, "", "*--judge-threshold must be between 0 and 1, got '1.5'*"),
        (["--judge-retries=-1"], {}, "", "*--judge-retries must be a whole number >= 0*"),
        (["--judge-timeout=0"], {}, "", "*--judge-timeout must be > 0*"),
        ([], {"LLMJUDGE_THRESHOLD": "high"}, "", "*LLMJUDGE_THRESHOLD must be a number, got 'high'*"),
        ([], {}, "judge_mode = sometimes", "*judge_mode must be one of auto, replay, refresh, live*"),
        (["--judge-model=,"], {}, "", "*--judge-model must name a model*"),
    ],
)
def test_bad_option_values_are_usage_errors(pytester, monkeypatch, args, env, ini, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-llmjudge: " + message.lstrip("*")])


def test_bad_input_gets_clear_errors(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged

        def test_none_output():
            assert_judged(None, "is good")

        def test_empty_criteria():
            assert_judged("text", "   ")

        def test_threshold_out_of_range():
            assert_judged("text", "is good", threshold=1.5)

        def test_bytes_output():
            assert_judged(b"raw", "is good")

        @pytest.mark.judge(treshold=0.5)
        def test_unknown_marker_argument():
            assert_judged("text", "is good")
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(failed=4, errors=1)
    result.stdout.fnmatch_lines_random(
        [
            "E*pytest_llmjudge.JudgeError: output is None: pass the text to judge*",
            "E*pytest_llmjudge.JudgeError: criteria is empty*",
            "E*pytest_llmjudge.JudgeError: assert_judged(threshold=...): --judge-threshold must be between 0 and 1, got 1.5",
            "E*pytest_llmjudge.JudgeError: output is bytes: decode it to text before judging it",
            "*@pytest.mark.judge got unknown argument(s) treshold; it takes model, threshold, *",
        ]
    )
    assert openai_server.request_count == 0
    assert "Traceback" not in result.stdout.str()


def test_no_model_configured_names_the_option(pytester, openai_server):
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest("--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*pytest_llmjudge.ReplayMiss: no stored verdict for this judgment (mode replay: no judge model is "
            "configured, so only what is recorded can be judged: pass --judge-model=MODEL*",
            "E*no verdicts are stored for this test*",
        ]
    )


def test_non_string_outputs_are_judged_as_json_or_str(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        class Answer:
            def __str__(self):
                return "an Answer object SCORE=0.9"

        def test_dict(judge):
            verdict = judge.score({"tool": "refund", "days": 30, "note": "SCORE=0.9"}, "calls the refund tool")
            assert verdict.passed

        def test_object(judge):
            assert judge.score(Answer(), "is an answer").passed
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=2)
    user_messages = [r["messages"][-1]["content"] for r in openai_server.requests]
    assert any('"tool": "refund"' in m and '"days": 30' in m for m in user_messages)
    assert any("an Answer object SCORE=0.9" in m for m in user_messages)


def test_unparseable_reply_is_its_own_error_with_the_reply_in_a_section(pytester, openai_server, live_args):
    openai_server.enqueue("I cannot evaluate this without more context.")
    pytester.makepyfile(test_refund=JUDGED)
    # The reply as it came: asking again for the format is tested in test_structured_output.
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--judge-parse-retries=0")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "VerdictParseError" in out and "key " in out
    failure_line = next(line for line in out.splitlines() if line.startswith("E ") and "VerdictParseError" in line)
    assert "without more context" not in failure_line, "the reply is not in the exception message"
    result.stdout.fnmatch_lines(
        ["*llmjudge: unparseable judge reply (key *", "I cannot evaluate this without more context."]
    )
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 0 replayed, 0 live, 0 below threshold, 1 unparseable*"])
    assert verdict_files(pytester.path) == [], "an unparseable reply is never stored"


def test_reply_cut_off_at_max_tokens_is_a_parse_failure(pytester, openai_server, live_args):
    openai_server.enqueue(Reply(content='{"reasoning": "The answer covers', finish_reason="length"))
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*VerdictParseError: the judge's reply was cut off at max_tokens (finish_reason=length)*"]
    )
    assert verdict_files(pytester.path) == []


def test_custom_backend_fixture_names_the_judge(pytester):
    pytester.makeconftest(
        """
        import pytest

        class TeamJudge:
            name = "team-judge-v1"
            def __init__(self):
                self.calls = []
            def __call__(self, messages):
                self.calls.append(messages)
                return '{"reasoning": "team judge says fine", "score": 0.75}'

        @pytest.fixture(scope="session")
        def judge_backend():
            return TeamJudge()
        """
    )
    pytester.makepyfile(
        """
        def test_it(judge, judge_backend):
            verdict = judge.score("hello", "greets")
            assert verdict.score == 0.75 and verdict.model == "team-judge-v1"
            assert len(judge_backend.calls) == 1
            assert judge_backend.calls[0][0]["role"] == "system"
        """
    )
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1)
    (entry,) = read_checked_verdict_file(pytester.path)["verdicts"].values()
    assert entry["model"] == "team-judge-v1"


NAMED_JUDGE = """
def named(name):
    def judge(messages):
        return '{"reasoning": "judged by %s", "score": 0.8}' % name
    judge.name = name
    return judge
"""


def test_judge_backend_overrides_are_found_wherever_pytest_finds_fixtures(pytester, openai_server, live_args):
    # Given judge_backend overridden in a sub-folder's conftest, a module, a class and by direct
    # parametrization, and tests beside each of them that see the plugin's own (LiteLLM)
    pytester.makepyfile(named_judge=NAMED_JUDGE)
    pytester.mkpydir("sub")
    pytester.makepyfile(
        **{
            "sub/conftest.py": """
            import pytest
            from named_judge import named

            @pytest.fixture
            def judge_backend():
                return named("sub-judge")
            """,
            "sub/test_sub.py": """
            from pytest_llmjudge import assert_judged

            def test_sub():
                assert assert_judged("hi", "greets").model == "sub-judge"
            """,
            "test_default.py": f"""
            from pytest_llmjudge import assert_judged

            def test_default():
                assert assert_judged("hi SCORE=0.9", "greets").model == {MODEL!r}
            """,
            "test_module.py": """
            import pytest
            from pytest_llmjudge import assert_judged
            from named_judge import named

            @pytest.fixture(scope="module")
            def judge_backend():
                return named("module-judge")

            def test_module():
                assert assert_judged("hi", "greets").model == "module-judge"
            """,
            "test_class.py": f"""
            import pytest
            from pytest_llmjudge import assert_judged
            from named_judge import named

            class TestOwnJudge:
                @pytest.fixture
                def judge_backend(self):
                    return named("class-judge")

                def test_in_class(self):
                    assert assert_judged("hi", "greets").model == "class-judge"

            def test_beside_the_class():
                assert assert_judged("hello SCORE=0.9", "greets").model == {MODEL!r}
            """,
            "test_param.py": """
            import pytest
            from pytest_llmjudge import assert_judged
            from named_judge import named

            @pytest.mark.parametrize("judge_backend", [named("param-judge")])
            def test_param(judge_backend):
                assert assert_judged("hi", "greets").model == "param-judge"
            """,
        }
    )
    # When the suite judges (live, then replayed), each test gets the judge pytest would give it
    for mode in ("auto", "replay"):
        result = pytester.runpytest(*live_args, f"--judge-mode={mode}", "-p", "no:randomly")
        result.assert_outcomes(passed=6)
    assert openai_server.request_count == 2


def test_async_backend_and_async_test(pytester):
    pytester.makeconftest(
        """
        import asyncio, pytest

        async def slow_judge(messages):
            await asyncio.sleep(0.01)
            return '{"reasoning": "async judge", "score": 0.9}'
        slow_judge.name = "async-judge"

        @pytest.fixture(scope="session")
        def judge_backend():
            return slow_judge
        """
    )
    pytester.makepyfile(
        """
        import asyncio
        import pytest
        from pytest_llmjudge import assert_judged_async

        @pytest.mark.asyncio
        async def test_inside_a_running_loop():
            other = asyncio.create_task(asyncio.sleep(0.01))
            verdict = await assert_judged_async("hello", "greets", threshold=0.8)
            await other
            assert verdict.reasoning == "async judge"

        @pytest.mark.asyncio
        async def test_fixture_ascore(judge):
            verdicts = await asyncio.gather(judge.ascore("a", "c1"), judge.ascore("b", "c2"))
            assert [v.score for v in verdicts] == [0.9, 0.9]
        """
    )
    pytester.runpytest("--judge-mode=auto", "-p", "asyncio").assert_outcomes(passed=2)


def test_score_many_runs_calls_concurrently(pytester, openai_server, live_args):
    openai_server.latency_s = 0.3
    pytester.makepyfile(
        """
        def test_many(judge):
            verdicts = judge.score_many([(f"answer {i} SCORE=0.{i}", "is good") for i in range(1, 7)])
            assert [v.score for v in verdicts] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    # Overlapping requests at the server prove concurrency; wall time is for benchmarks/run_all.py.
    assert openai_server.max_in_flight > 1


def test_xdist_records_then_replays_with_a_correct_summary(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.parametrize("n", range(8))
        def test_many(n):
            assert_judged(f"answer {n} SCORE=0.{n + 1}", "is good", threshold=0.5)
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=4, failed=4)
    result.stdout.fnmatch_lines(["llmjudge: 8 judged, 0 replayed, 8 live, 4 below threshold, 0 unparseable*"])
    assert openai_server.request_count == 8
    assert len(verdict_files(pytester.path)) == 8
    result = pytester.runpytest(*live_args, "--judge-mode=replay", "-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=4, failed=4)
    result.stdout.fnmatch_lines(["llmjudge: 8 judged, 8 replayed, 0 live, 4 below threshold, 0 unparseable*"])
    assert openai_server.request_count == 8


def test_api_key_never_reaches_files_or_output(pytester, openai_server, live_args):
    openai_server.enqueue(Reply(status=401, error_message="Incorrect API key provided: {api_key}"))
    pytester.makepyfile(
        """
        from pytest_llmjudge import assert_judged

        def test_auth_error():
            assert_judged("SCORE=0.9", "is good")

        def test_recorded():
            assert_judged("other SCORE=0.9", "is good")
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--junitxml=out.xml")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*BackendError: AuthenticationError from openai/judge-test*Set OPENAI_API_KEY*"])
    assert openai_server.request_headers[0]["authorization"] == f"Bearer {CANARY_KEY}", "the key was really sent"
    everything = result.stdout.str() + result.stderr.str() + (pytester.path / "out.xml").read_text()
    for path in pytester.path.rglob("*"):
        if path.is_file():
            everything += path.read_bytes().decode("utf-8", "replace")
    assert CANARY_KEY not in everything


def test_a_test_hands_its_subprocesses_llmjudge_test_without_any_key(pytester, openai_server):
    """Given a test, while it runs LLMJUDGE_TEST names its node id, verdict file place and settings
    (the api base without credentials), never a key; after it, the variable is gone."""
    pytester.makepyfile(
        """
        import json, os
        from pathlib import Path

        def test_env():
            Path("seen.json").write_text(os.environ["LLMJUDGE_TEST"])

        def test_after():
            assert "LLMJUDGE_TEST" not in os.environ or json.loads(os.environ["LLMJUDGE_TEST"])["nodeid"].endswith("test_after")
        """
    )
    base = openai_server.base_url.replace("http://", "http://user:secret@")
    result = pytester.runpytest(f"--judge-model={MODEL}", f"--judge-api-base={base}", "--judge-mode=replay")
    result.assert_outcomes(passed=2)
    text = (pytester.path / "seen.json").read_text()
    seen = json.loads(text)
    assert seen["nodeid"] == "test_a_test_hands_its_subprocesses_llmjudge_test_without_any_key.py::test_env"
    assert seen["settings"]["mode"] == "replay" and seen["settings"]["model"] == [MODEL]
    assert seen["settings"]["api_base"] == openai_server.base_url
    assert CANARY_KEY not in text and "secret" not in text
    assert "LLMJUDGE_TEST" not in __import__("os").environ


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_cassettes_record_the_apps_calls_and_never_the_judges(pytester, openai_server, live_args, transport):
    """Given pytest-recording with the user's own before_record_request, under either transport
    LiteLLM uses, the app's request is recorded (through the user's filter) and the judge's is not."""
    pytest.importorskip("pytest_recording")
    httpx = pytest.importorskip("httpx")
    del httpx
    pytester.makeconftest(
        f"""
        import litellm, pytest

        litellm.disable_aiohttp_transport = {transport == "httpx"}

        def tag(request):
            request.headers["X-Seen-By-User-Filter"] = "yes"
            return request

        @pytest.fixture(scope="module")
        def vcr_config():
            return {{"before_record_request": tag, "filter_headers": ["authorization"]}}
        """
    )
    pytester.makepyfile(
        f"""
        import httpx, pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.vcr
        def test_app():
            models = httpx.get("{openai_server.base_url}/models").json()
            assert_judged(f"Returns within 30 days. SCORE=0.9 {{len(models)}}", "Says returns are accepted within 30 days")
        """
    )
    try:
        pytester.runpytest(*live_args, "--judge-mode=auto", "--record-mode=once").assert_outcomes(passed=1)
    finally:
        import litellm

        litellm.disable_aiohttp_transport = False
    (cassette,) = pytester.path.rglob("cassettes/**/*.yaml")
    text = cassette.read_text()
    assert "/models" in text and "X-Seen-By-User-Filter" in text, "the app's call went through the user's filter"
    assert "chat/completions" not in text, "the judge's call was recorded"
    assert openai_server.request_count == 1


def test_plain_vcrpy_users_wrap_their_filter_with_ignore_judge_requests():
    import threading

    from pytest_llmjudge.cassettes import JUDGE_THREAD_NAME, ignore_judge_requests

    before = ignore_judge_requests(lambda request: request + " filtered")
    assert before("app request") == "app request filtered"
    seen = []
    judge = threading.Thread(target=lambda: seen.append(before("judge request")), name=JUDGE_THREAD_NAME)
    judge.start()
    judge.join()
    assert seen == [None], "None lets vcrpy send the judge's request unrecorded"
    assert ignore_judge_requests()("app request") == "app request"


VISITS = """
import pathlib

def pytest_collect_file(file_path, parent):
    with open(pathlib.Path(__file__).parent / "visited.txt", "a") as handle:
        handle.write(str(file_path) + "\\n")
"""


@pytest.mark.parametrize("store", [None, "stored/verdicts"])
def test_collection_does_not_walk_the_verdict_files(pytester, openai_server, live_args, store):
    # Given a suite whose verdicts were recorded (beside the module, or under --judge-store inside the tree)
    pytester.makepyfile(test_refund=JUDGED)
    store_args = [f"--judge-store={store}"] if store else []
    pytester.runpytest(*live_args, *store_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert verdict_files(pytester.path) or list((pytester.path / "stored").rglob("*.json"))
    # When it is collected again, with a conftest that notes every file pytest offers to plugins
    pytester.makeconftest(VISITS)
    result = pytester.runpytest(*live_args, *store_args, "--judge-mode=replay")
    # Then the test replays, and pytest never walked into the verdict files (one visit per file each run)
    result.assert_outcomes(passed=1)
    visited = (pytester.path / "visited.txt").read_text().splitlines()
    assert any(v.endswith("test_refund.py") for v in visited)
    assert not [v for v in visited if v.endswith(".json")], visited
