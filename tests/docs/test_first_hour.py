"""A newcomer's first hour: a clone replays with plain `pytest`, and the marker on a test beats the flags.

Each test drives pytest itself (pytester) with the real LiteLLM client against the local server.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import FAKE_CONFTEST, JUDGED, MODEL

# -- plain `pytest` after a clone replays, with no model and no CI variable ---------------------


def test_plain_pytest_replays_what_was_recorded_with_no_model_configured(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    # A teammate's clone: no --judge-model, no CI variable (auto mode, the local default).
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1, "replayed, not judged again"


def test_plain_pytest_replays_a_sample_and_a_marker_recorded_with_no_model(pytester, openai_server, live_args):
    pytester.makepyfile(
        test_refund="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(threshold=0.6)
        def test_marked():
            assert_judged("SCORE=0.7", "is good")

        def test_judge(judge):
            assert judge.score("SCORE=0.8", "is good").score == 0.8
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=2)
    pytester.runpytest().assert_outcomes(passed=2)
    assert openai_server.request_count == 2


def test_a_miss_with_no_model_in_auto_mode_says_how_to_configure_one(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    pytester.makepyfile(test_refund=JUDGED.replace("30 days.", "thirty days."))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ReplayMiss: no stored verdict for this judgment (mode replay: no judge model is configured, so only "
            "what is recorded can be judged: pass --judge-model=MODEL*LLMJUDGE_MODEL*",
            "*nearest stored: key *, which differs in output*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert openai_server.request_count == 1, "a miss with no model never calls out"


def test_a_clone_that_only_replays_says_which_mode_it_runs_in(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)  # plain assert_judged calls: no judge marker or fixture to tell
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["llmjudge: mode auto (default), no --judge-model: what is recorded replays*"])


# -- precedence: ini < environment < command line < marker < the call's own arguments ----------


MARKED = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge(threshold=0.85)
def test_marked():
    assert_judged("SCORE=0.9", "is good")

def test_plain():
    assert_judged("SCORE=0.9", "is good")

@pytest.mark.judge(threshold=0.95)
def test_argument():
    assert_judged("SCORE=0.9", "is good", threshold=0.8)
"""


def test_the_marker_on_a_test_beats_the_command_line(pytester, openai_server, live_args, monkeypatch):
    pytester.makepyfile(test_marked=MARKED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=3)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("--judge-threshold=0.95", "-rf")
    # The marker's 0.85 beats the command line's 0.95; the argument's 0.8 beats the marker's 0.95.
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_marked.py::test_plain*"])
    assert openai_server.request_count == 1


def test_the_marker_beats_the_command_line_for_every_marker_argument(pytester, openai_server, monkeypatch):
    # The marker names the judge model and api base; the command line names others that do not exist.
    pytester.makepyfile(
        test_marked=f"""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(model="{MODEL}", api_base="{openai_server.base_url}", temperature=0.0, samples=1)
        def test_marked():
            assert_judged("SCORE=0.9", "is good")
        """
    )
    bogus = ["--judge-model=openai/nobody", "--judge-api-base=http://127.0.0.1:9/v1", "--judge-retries=0"]
    result = pytester.runpytest(*bogus, "--judge-mode=auto", "--judge-temperature=0.7", "--judge-samples=3")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    assert openai_server.requests[0]["model"] == MODEL.removeprefix("openai/")
    assert openai_server.requests[0]["temperature"] == 0.0


# -- `llmjudge prune` says why the last run left nothing to prune from ---------------------------

FAILING = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days", threshold=0.7)

def test_broken():
    assert False
"""


def llmjudge(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_cli_prune_after_a_failed_first_run_gives_the_real_reason(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=FAILING)
    result = pytester.runpytest("--judge-mode=auto")
    result.assert_outcomes(passed=1, failed=1)
    dry = llmjudge(pytester.path, "prune", "--dry-run")
    assert dry.returncode == 2
    assert "run the whole test suite once" not in dry.stderr
    assert dry.stderr.strip() == (
        "llmjudge: error: nothing to prune from the last run: the run did not pass (exit status 1); "
        "prune needs a full, successful run"
    )


def test_cli_prune_after_a_failed_run_says_it_prunes_from_the_last_full_runs_manifest(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=FAILING.split("def test_broken")[0])
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1)
    pytester.makepyfile(test_bot=FAILING)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1, failed=1)
    dry = llmjudge(pytester.path, "prune", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "note: a later run wrote no manifest (the run did not pass (exit status 1);" in dry.stdout
    # A full, successful run afterwards: its manifest is the newest, and nothing is noted.
    pytester.makepyfile(test_bot=FAILING.split("def test_broken")[0])
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1)
    dry = llmjudge(pytester.path, "prune", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[-1] == "nothing to remove (1 stored verdicts in use)"
    assert "note:" not in dry.stdout


# -- the README's calibrate example works in a fresh clone ---------------------------------------

REPOSITORY = Path(__file__).resolve().parents[2]


def committed_examples(destination: Path) -> Path:
    """A copy of examples/ as git has it (what a clone holds: nothing ignored, nothing uncommitted)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "examples"], cwd=REPOSITORY, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0 or not listed.stdout:
        pytest.skip("not a git checkout: the committed examples cannot be listed")
    for name in filter(None, listed.stdout.split("\0")):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPOSITORY / name, target)
    return destination / "examples"


def test_the_readmes_calibrate_command_replays_in_a_fresh_clone(tmp_path, monkeypatch):
    examples = committed_examples(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("OPENAI_API_KEY")
    command = shutil.which("llmjudge", path=str(Path(sys.executable).parent)) or "llmjudge"
    done = subprocess.run(
        [command, "calibrate", "calibration_labels.jsonl", "--threshold", "0.7"],
        cwd=examples,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "calibration_labels.jsonl: 26 examples (pass/fail labels), threshold 0.70"
    assert lines[2] == "accuracy        0.62  (16 of 26 agree)"
    assert "Demo keyword judge: found ['returns', 'accepted', '30', 'days']" in done.stdout
