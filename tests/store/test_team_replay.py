"""Replay as a team uses it: shards, cassettes, concurrent recorders, CI without judge settings.

Each test drives pytest itself (pytester) with the real LiteLLM client against the local server,
and, where the scenario names one, with the real third-party plugin (pytest-shard, pytest-recording
with vcrpy, pytest-rerunfailures, anyio with trio).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from helpers import JUDGED, MODEL
from helpers.verdicts import verdict_files

# -- 1. prune never removes a verdict of a test that was collected and did not run ---------------


def test_a_shard_prunes_nothing_of_the_other_shards(pytester, openai_server, live_args):
    """Given eight judged tests recorded in full, when one pytest-shard shard runs with
    --judge-prune, then a full replay still finds every verdict."""
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.parametrize("n", range(8))
        def test_answer(n):
            assert_judged(f"Returns within 30 days, case {n}. SCORE=0.9", "Says returns are accepted within 30 days")
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=8)
    assert len(verdict_files(pytester.path)) == 8

    shard = pytester.runpytest(*live_args, "--judge-mode=replay", "--num-shards=2", "--shard-id=0", "--judge-prune")
    assert shard.ret == 0
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=8)
    assert len(verdict_files(pytester.path)) == 8


def test_a_pytest_split_group_prunes_nothing_of_the_other_group(pytester, openai_server, live_args):
    """Given eight judged tests recorded in full, when one pytest-split group runs with --judge-prune
    (pytest-split deselects the other group), then a full replay still finds every verdict."""
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.parametrize("n", range(8))
        def test_answer(n):
            assert_judged(f"Returns within 30 days, case {n}. SCORE=0.9", "Says returns are accepted within 30 days")
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=8)
    group = pytester.runpytest(*live_args, "--judge-mode=replay", "--splits=2", "--group=1", "--judge-prune")
    assert group.ret == 0
    pytester.runpytest(*live_args, "--judge-mode=replay").assert_outcomes(passed=8)
    assert len(verdict_files(pytester.path)) == 8


def test_an_inherited_test_keeps_its_verdict_file_through_prune(pytester, openai_server, live_args):
    """Given a test class inherited from a base class in another module, prune keeps its file."""
    pytester.makepyfile(
        contract="""
        from pytest_llmjudge import assert_judged

        class BotContract:
            def test_refund(self):
                assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
        """,
        test_bot_a="""
        from contract import BotContract
        from pytest_llmjudge import assert_judged

        class TestBotA(BotContract):
            pass

        def test_own():
            assert_judged("Returns within 30 days. SCORE=0.8", "Says returns are accepted within 30 days")
        """,
    )
    pytester.syspathinsert()
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=2)
    before = verdict_files(pytester.path)
    assert len(before) == 2
    pytester.runpytest(*live_args, "--judge-mode=replay", "--judge-prune").assert_outcomes(passed=2)
    assert all(path.exists() for path in before), "prune deleted the verdict file of an inherited test"
    pytester.runpytest(*live_args, "--judge-mode=replay").assert_outcomes(passed=2)


# -- 2. the judge's calls never go into, or come out of, the user's HTTP cassettes ---------------

VCR_TEST = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.vcr
def test_with_cassette():
    assert_judged("Returns within 30 days. SCORE={score}", "Says returns are accepted within 30 days", threshold=0.7)
"""


def test_judge_calls_are_not_recorded_or_answered_by_cassettes(pytester, openai_server, live_args):
    pytest.importorskip("pytest_recording")
    pytester.makepyfile(test_vcr=VCR_TEST.format(score="0.9"))
    pytester.runpytest(*live_args, "--judge-mode=auto", "--record-mode=once").assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    for cassette in pytester.path.rglob("cassettes/**/*.yaml"):
        text = cassette.read_text()
        assert "chat/completions" not in text, "the judge's request went into the user's cassette"

    # The output changed: the judge must really be asked, not answered from a cassette.
    pytester.makepyfile(test_vcr=VCR_TEST.format(score="0.2"))
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--record-mode=none")
    result.assert_outcomes(failed=1)
    assert openai_server.request_count == 2, "the judge itself answered"
    result.stdout.fnmatch_lines(["*judged 0.20 < threshold 0.70*"])


# -- 3. two recorders at once lose nothing --------------------------------------------------------


def test_two_recorders_with_different_models_keep_both_entries(pytester, openai_server):
    openai_server.latency_s = 0.5  # both processes read the files before either writes
    for n in range(4):
        pytester.makepyfile(**{f"test_m{n}": JUDGED.replace("SCORE=0.9", f"SCORE=0.9 module {n}")})
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--judge-mode=auto",
                "--judge-retries=0",
                f"--judge-model=openai/judge-{name}",
                f"--judge-api-base={openai_server.base_url}",
            ],
            cwd=pytester.path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for name in ("a", "b")
    ]
    outputs = [p.communicate(timeout=300)[0].decode() for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert openai_server.request_count == 8
    files = verdict_files(pytester.path)
    assert len(files) == 4
    for path in files:
        models = sorted(e["model"] for e in json.loads(path.read_text())["verdicts"].values())
        assert models == ["openai/judge-a", "openai/judge-b"], f"{path.name} lost an entry: {models}"


# -- 4. secrets in the judged output are not committed ---------------------------------------------


def test_a_key_shaped_string_in_the_output_is_redacted_in_the_verdict_file(pytester, openai_server, live_args):
    secret = "sk-proj-" + "Zq8" * 12
    pytester.makepyfile(
        f"""
        from pytest_llmjudge import assert_judged

        def test_leaky():
            assert_judged("Use the key {secret} to log in. SCORE=0.9", "Explains how to log in")
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    (path,) = verdict_files(pytester.path)
    assert secret not in path.read_text()
    pytester.runpytest(*live_args, "--judge-mode=replay").assert_outcomes(passed=1)


# -- 5. pytest's cache directory is made by pytest ----------------------------------------------


def test_the_cache_directory_gets_pytests_gitignore(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    assert not (pytester.path / ".pytest_cache").exists()
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert (pytester.path / ".pytest_cache" / ".gitignore").is_file()
    assert (pytester.path / ".pytest_cache" / "CACHEDIR.TAG").is_file()


# -- 6. CI replays with no judge configuration ----------------------------------------------------


def test_ci_replays_without_being_told_the_model(pytester, openai_server, live_args, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1


def test_ci_without_a_model_names_the_choices_when_several_models_recorded(pytester, openai_server, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    for name in ("a", "b"):
        args = [f"--judge-model=openai/judge-{name}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=0"]
        pytester.runpytest(*args, "--judge-mode=auto").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*recorded by several judges*(--judge-model):", "*openai/judge-a", "*openai/judge-b"])


# -- 7. transport is not identity ------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["http://localhost:{port}/v1", "http://127.0.0.1:{port}/v1/"])
def test_another_spelling_of_the_api_base_replays(pytester, openai_server, live_args, spelling):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    port = openai_server.base_url.split(":")[2].split("/")[0]
    result = pytester.runpytest(
        f"--judge-model={MODEL}", f"--judge-api-base={spelling.format(port=port)}", "--judge-mode=replay"
    )
    result.assert_outcomes(passed=1)


# -- 8. a verdict is found wherever it was stored ---------------------------------------------------

SESSION_FIXTURE = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.fixture(scope="session")
def judged_answer():
    return assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
"""


def test_a_session_fixtures_judgment_replays_for_any_test(pytester, openai_server, live_args):
    pytester.makeconftest(SESSION_FIXTURE)
    for name in ("a", "b", "c"):
        pytester.makepyfile(**{f"test_{name}": "def test_it(judged_answer):\n    assert judged_answer.score > 0.5\n"})
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=3)
    assert openai_server.request_count == 1
    pytester.runpytest(*live_args, "--judge-mode=replay", "test_b.py").assert_outcomes(passed=1)
    pytester.runpytest(*live_args, "--judge-mode=replay", "-n", "2", "-p", "xdist").assert_outcomes(passed=3)
    assert openai_server.request_count == 1


def test_a_renamed_test_finds_its_verdict_and_auto_migrates_it(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    pytester.makepyfile(test_refund=JUDGED.replace("def test_refund", "def test_refund_renamed"))
    pytester.runpytest(*live_args, "--judge-mode=replay").assert_outcomes(passed=1)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    assert any("test_refund_renamed" in p.name for p in verdict_files(pytester.path)), (
        "auto copies it to the new test's file"
    )


def test_a_relative_store_resolves_against_the_rootdir(pytester, openai_server, live_args, monkeypatch):
    pytester.makeini("[pytest]\n")
    tests = pytester.mkdir("tests")
    (tests / "test_refund.py").write_text(JUDGED)
    monkeypatch.setenv("LLMJUDGE_STORE", "verdicts")
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    monkeypatch.chdir(tests)
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=1)


# -- 9. same value, same key -------------------------------------------------------------------------


def test_an_output_holding_a_set_replays_in_another_process(pytester, openai_server, live_args, monkeypatch):
    pytester.makepyfile(
        """
        from pytest_llmjudge import assert_judged

        def test_tags():
            assert_judged({"tags": {"refund", "shoes", "policy", "days", "SCORE=0.9"}}, "Lists the tags")
        """
    )
    monkeypatch.setenv("PYTHONHASHSEED", "1")
    pytester.runpytest_subprocess(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    for seed in ("2", "3", "4"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        pytester.runpytest_subprocess(*live_args, "--judge-mode=replay").assert_outcomes(passed=1)
    assert openai_server.request_count == 1


# -- 10. every kind of test can store ------------------------------------------------------------


def test_a_text_doctest_records_and_replays(pytester, openai_server, live_args):
    pytester.maketxtfile(
        guide="""
        >>> from pytest_llmjudge import assert_judged
        >>> assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days").passed
        True
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto", "--doctest-glob=*.txt").assert_outcomes(passed=1)
    assert len(verdict_files(pytester.path)) == 1
    pytester.runpytest(*live_args, "--judge-mode=replay", "--doctest-glob=*.txt").assert_outcomes(passed=1)
    assert openai_server.request_count == 1


def test_a_subprocess_of_a_test_records_and_replays_into_the_tests_file(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        import subprocess, sys

        def test_cli_tool():
            code = (
                "from pytest_llmjudge import assert_judged; "
                "assert_judged('Returns within 30 days. SCORE=0.9', 'Says returns are accepted within 30 days')"
            )
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert len(verdict_files(pytester.path)) == 1
    pytester.runpytest(*live_args, "--judge-mode=replay").assert_outcomes(passed=1)
    assert openai_server.request_count == 1


def test_prune_keeps_the_verdict_a_tests_subprocess_used(pytester, openai_server, live_args):
    # Given a verdict that only a test's subprocess judges with (the test itself never judges),
    pytester.makepyfile(
        """
        import subprocess, sys

        def test_cli_tool():
            code = "from pytest_llmjudge import assert_judged; assert_judged('Ships in 2 days. SCORE=0.9', 'Says when')"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    (recorded,) = verdict_files(pytester.path)
    stored = json.loads(recorded.read_text())["verdicts"]
    # when a full replay prunes what no test used,
    pytester.runpytest(*live_args, "--judge-mode=replay", "--judge-prune").assert_outcomes(passed=1)
    # then the subprocess's verdict is kept: the keys it used were handed back to its test.
    assert verdict_files(pytester.path) == [recorded]
    assert json.loads(recorded.read_text())["verdicts"] == stored
    assert openai_server.request_count == 1


# -- 11. reruns are counted once per attempt ------------------------------------------------------


def test_reruns_count_each_attempts_judgments_once(pytester, openai_server, live_args):
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(
        """
        from pathlib import Path
        from pytest_llmjudge import assert_judged

        def test_flaky(tmp_path_factory):
            assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
            marker = Path(__file__).with_name("attempted")
            if not marker.exists():
                marker.write_text("1")
                raise AssertionError("first attempt fails")
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--reruns=2", "--junitxml=out.xml")
    result.assert_outcomes(passed=1)
    assert result.parseoutcomes().get("rerun") == 1  # assert_outcomes takes no `rerun` in pytest 9
    result.stdout.fnmatch_lines(["llmjudge: 2 judged, *"])
    xml = (pytester.path / "out.xml").read_text()
    assert xml.count('name="llmjudge.score"') == 1, "one attempt's properties on the passing case"


# -- 13. a read-only store keeps the paid verdict ------------------------------------------------


def test_an_unwritable_store_says_so_and_keeps_the_verdict_in_the_cache(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    (pytester.path / "blocked").write_text("a file where the store directory should be")
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--judge-store=blocked")
    assert "Traceback" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*blocked*"])
    assert openai_server.request_count == 1
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == 1, "the paid verdict was kept in the local cache"


# -- 14. anyio's trio backend ---------------------------------------------------------------------


def test_async_judging_under_trio(pytester, openai_server, live_args):
    pytest.importorskip("trio")
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged_async

        @pytest.fixture(params=["asyncio", "trio"])
        def anyio_backend(request):
            return request.param

        @pytest.mark.anyio
        async def test_async(judge, anyio_backend):
            # Each backend judges its own output, so each makes a live call.
            await assert_judged_async(f"Within 30 days ({anyio_backend}). SCORE=0.9", "Says returns are accepted within 30 days")
            verdict = await judge.ascore(f"Within 30 days ({anyio_backend}). SCORE=0.8", "Says returns are accepted within 30 days")
            assert verdict.score == pytest.approx(0.8)
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "-p", "anyio")
    result.assert_outcomes(passed=2)
    assert openai_server.request_count == 4


# -- 15. reports say what happened ----------------------------------------------------------------


def test_rubric_error_is_importable_from_the_package():
    from pytest_llmjudge import JudgeError, RubricError

    assert issubclass(RubricError, JudgeError)


def test_unknown_cost_reads_as_unknown(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=1)
    assert "$0.0000" not in result.stdout.str()
    result.stdout.fnmatch_lines(["llmjudge: *cost unknown*"])


# -- 17. verdict files get the usual permissions ----------------------------------------------------


def test_verdict_files_are_written_with_the_umask(pytester, openai_server, live_args):
    old = os.umask(0o022)
    try:
        pytester.makepyfile(test_refund=JUDGED)
        pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    finally:
        os.umask(old)
    (path,) = verdict_files(pytester.path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
