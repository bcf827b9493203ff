"""`llmjudge diff`: a git repository built here, commits of verdicts recorded by real pytest runs against the
local judge server (LiteLLM over HTTP), then the diff through its real entry points and through `main`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import MODEL
from helpers.git_repo import GitRepo
from helpers.openai_server import OpenAIServer, score_from_prompt
from helpers.rag_judge import rag_judge
from pytest_llmjudge.cli import main

BOT = """
from pytest_llmjudge import assert_judged

REFUND = {refund!r}
TONE = {tone!r}

def test_refund():
    assert_judged(REFUND, "Says returns are accepted within 30 days", threshold=0.7)

def test_tone():
    assert_judged(TONE, "Is polite", threshold=0.7)

def test_steady():
    assert_judged("Steady answer. SCORE=0.8", "Answers steadily", threshold=0.7)
"""

PASSING_REFUND = "Returns are accepted within 30 days. SCORE=0.9"
FAILING_REFUND = "Returns close after 14 days. SCORE=0.2"
RUDE = "Whatever. SCORE=0.3"
POLITE = "Happy to help! SCORE=0.9"


def record(pytester: pytest.Pytester, live_args: list[str], refund: str, tone: str) -> None:
    """Write the test module with these outputs and record it (auto mode) against the local judge."""
    pytester.makepyfile(test_bot=BOT.format(refund=refund, tone=tone))
    result = pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *live_args)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 3, result.stdout.str()


@pytest.fixture
def repo(pytester: pytest.Pytester, live_args: list[str]) -> GitRepo:
    """Commit 1: recorded verdicts (refund passes, tone fails); commit 2: both outputs changed and recorded
    again (refund now fails, tone now passes)."""
    repository = GitRepo(pytester.path)
    (pytester.path / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    record(pytester, live_args, PASSING_REFUND, RUDE)
    repository.commit("recorded")
    record(pytester, live_args, FAILING_REFUND, POLITE)
    repository.commit("two outputs changed, recorded again")
    return repository


def llmjudge(repo: GitRepo, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real entry point, `python -m pytest_llmjudge`, in the repository."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge", *args],
        cwd=repo.path,
        env=env or repo.env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_diff_names_both_flips_in_every_format_and_fails_on_the_regression(repo):
    text = llmjudge(repo, "diff", "HEAD~1")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("llmjudge diff: verdicts at HEAD~1 (") and lines[0].endswith("-> the working tree")
    assert lines[1].startswith("2 judgments changed in 2 tests: 1 regressed (pass to fail), 1 improved (fail to pass)")
    assert lines[1].endswith("; 1 unchanged")
    assert "REGRESSED  test_bot.py::test_refund  0.90 pass -> 0.20 fail (threshold 0.70)" in lines, text.stdout
    assert "IMPROVED   test_bot.py::test_tone  0.30 fail -> 0.90 pass (threshold 0.70)" in lines
    assert f"    -{PASSING_REFUND}" in lines and f"    +{FAILING_REFUND}" in lines  # the output's diff
    assert "  reasoning: fake judge: found SCORE=0.9 in the output" in lines

    markdown = llmjudge(repo, "diff", "HEAD~1", "--format", "markdown").stdout
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert rows[0] == "| | Test | Criteria | Before | After |"
    assert (
        "| **regressed** | `test_bot.py::test_refund` | Says returns are accepted within 30 days | 0.90 pass | "
        "0.20 fail (threshold 0.70) |"
    ) in rows
    assert "| **improved** | `test_bot.py::test_tone` | Is polite | 0.30 fail | 0.90 pass (threshold 0.70) |" in rows

    document = json.loads(llmjudge(repo, "diff", "HEAD~1", "--format", "json").stdout)
    assert document["counts"] == {
        "regressed": 1, "improved": 1, "changed": 0, "added": 0, "removed": 0, "unchanged": 1,
    }  # fmt: skip
    flips = {j["test"]: (j["status"], j["before"]["passed"], j["after"]["passed"]) for j in document["judgments"]}
    assert flips == {
        "test_bot.py::test_refund": ("regressed", True, False),
        "test_bot.py::test_tone": ("improved", False, True),
    }
    assert document["base"]["commit"] == repo.git("rev-parse", "HEAD~1")
    assert document["regressions"] == [
        "test_bot.py::test_refund: 'Says returns are accepted within 30 days' went from pass to fail"
    ]

    failed = llmjudge(repo, "diff", "HEAD~1", "--fail-on", "regression")
    assert failed.returncode == 1, failed.stdout
    assert "regressions: 1" in failed.stdout.splitlines()


def test_a_change_that_only_improves_exits_0_with_fail_on(repo, pytester, live_args):
    record(pytester, live_args, PASSING_REFUND, POLITE)  # the refund answer fixed: only an improvement
    repo.commit("refund fixed")
    result = llmjudge(repo, "diff", "HEAD~1", "--fail-on", "regression", "--format", "markdown")
    assert result.returncode == 0, result.stdout
    assert "| **improved** | `test_bot.py::test_refund` |" in result.stdout
    assert "No regression." in result.stdout.splitlines()


def test_the_console_script_and_main_give_the_same_diff(repo, monkeypatch, capsys):
    capsys.readouterr()  # what the recording runs printed
    expected = llmjudge(repo, "diff", "HEAD~1", "--format", "json").stdout
    script = Path(sys.executable).with_name("llmjudge")
    if script.exists():
        done = subprocess.run([str(script), "diff", "HEAD~1", "--format", "json"], cwd=repo.path, env=repo.env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.stdout == expected
    monkeypatch.chdir(repo.path)
    assert main(["diff", "HEAD~1", "--format", "json"]) == 0
    assert capsys.readouterr().out == expected
    assert main(["diff", "HEAD~1", "--fail-on", "regression"]) == 1


def test_the_default_base_is_the_merge_base_with_the_default_branch(repo, pytester, live_args, monkeypatch, capsys):
    repo.git("checkout", "-q", "-b", "feature")
    record(pytester, live_args, PASSING_REFUND, POLITE)  # uncommitted: the working tree against main's tip
    capsys.readouterr()  # what the recording run printed
    monkeypatch.chdir(repo.path)
    assert main(["diff", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["base"] == {"revision": "the merge base of HEAD with main", "commit": repo.git("rev-parse", "main")}
    assert [(j["test"], j["status"]) for j in document["judgments"]] == [("test_bot.py::test_refund", "improved")]


def test_a_path_limits_the_diff_to_the_verdict_files_under_it(repo, monkeypatch, capsys):
    capsys.readouterr()
    monkeypatch.chdir(repo.path)
    assert main(["diff", "HEAD~1", "judge_verdicts/test_bot/test_tone.json", "--fail-on", "regression"]) == 0
    out = capsys.readouterr().out
    assert "IMPROVED   test_bot.py::test_tone" in out and "test_refund" not in out


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["diff", "no-such-revision"], "unknown revision 'no-such-revision'"),
        (["diff", "HEAD~5"], "unknown revision 'HEAD~5'"),
        (["diff", "HEAD", "notes.json"], "notes.json: not a verdict file"),
        (["diff", "HEAD", "missing/"], "missing: no such file or directory"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_it(repo, args, named):
    (repo.path / "notes.json").write_text('{"not": "a verdict file"}')
    result = llmjudge(repo, *args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("llmjudge: error: ") and named in line, line


def test_outside_a_repository_and_without_git_exit_2(tmp_path, repo):
    outside = tmp_path / "plain"
    outside.mkdir()
    env = {**repo.env, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "pytest_llmjudge", "diff"], cwd=outside, env=env,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert f"{outside} is not in a git repository" in line

    no_git = {**repo.env, "PATH": str(tmp_path / "empty")}  # no git on it
    result = subprocess.run([sys.executable, "-m", "pytest_llmjudge", "diff"], cwd=repo.path, env=no_git,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "git is not installed" in line


def test_a_malformed_verdict_file_at_the_revision_exits_2_naming_it(repo):
    path = repo.path / "judge_verdicts" / "test_bot" / "test_steady.json"
    path.write_text('{"format": 1, "verdicts": {"x": 1}}')
    repo.commit("a broken verdict file")
    result = llmjudge(repo, "diff", "HEAD")  # the revision's copy is read through the store's reader
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "HEAD:judge_verdicts/test_bot/test_steady.json: " in line and "not a verdict key" in line


def test_files_written_before_outcomes_diff_by_their_entries_scores(repo, pytester, live_args, monkeypatch, capsys):
    """A base whose verdict files have no "outcomes" (as written before they were kept): each judgment is its
    entry, with its stored score and no threshold, so the diff shows the score that moved, and no flip."""
    repo.git("checkout", "-q", "HEAD~1")
    for path in (repo.path / "judge_verdicts").rglob("*.json"):
        document = json.loads(path.read_text())
        del document["outcomes"]
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    old = repo.commit("as written before outcomes")
    repo.git("checkout", "-q", "main")
    capsys.readouterr()  # what the recording runs printed
    monkeypatch.chdir(repo.path)
    assert main(["diff", old, "--format", "json", "--fail-on", "regression"]) == 0  # no threshold, no flip
    document = json.loads(capsys.readouterr().out)
    moved = {j["test"]: (j["status"], j["before"]["score"], j["after"]["score"]) for j in document["judgments"]}
    assert moved == {"test_bot.py::test_refund": ("changed", 0.9, 0.2), "test_bot.py::test_tone": ("changed", 0.3, 0.9)}
    assert document["counts"]["unchanged"] == 1


LOOP = """
from pytest_llmjudge import assert_judged

ANSWERS = {answers!r}

def test_each_answer():
    for answer in ANSWERS:
        assert_judged(answer, "Is polite", threshold=0.5)
"""


def test_judgments_of_the_same_criteria_pair_by_their_position_in_the_test(pytester, live_args, monkeypatch, capsys):
    repo = GitRepo(pytester.path)
    answers = ["Hello. SCORE=0.9", "Hi there. SCORE=0.8", "Good day. SCORE=0.7"]
    pytester.makepyfile(test_loop=LOOP.format(answers=answers))
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *live_args).assert_outcomes(passed=1)
    repo.commit("three answers")
    answers[1] = "Go away. SCORE=0.1"  # the second answer changed: its key changed
    pytester.makepyfile(test_loop=LOOP.format(answers=answers))
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *live_args).assert_outcomes(failed=1)
    capsys.readouterr()  # what the recording runs printed
    monkeypatch.chdir(repo.path)
    assert main(["diff", "HEAD", "--format", "json", "--fail-on", "regression"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["counts"] == {
        "regressed": 1, "improved": 0, "changed": 0, "added": 0, "removed": 0, "unchanged": 2,
    }  # fmt: skip
    (regressed,) = document["judgments"]
    assert (regressed["before"]["score"], regressed["after"]["score"]) == (0.8, 0.1)
    assert regressed["output_diff"] == ["-Hi there. SCORE=0.8", "+Go away. SCORE=0.1"]


def test_the_diff_redacts_what_it_prints(repo, monkeypatch, capsys):
    """A secret of this environment that a stored text holds (there by hand: the store redacts what it writes)
    never reaches the output."""
    path = repo.path / "judge_verdicts" / "test_bot" / "test_tone.json"
    document = json.loads(path.read_text())
    for outcome in document["outcomes"].values():
        outcome["criteria"] = "Is polite to tok-9f8e7d6c5b4a3f2e1d0c"
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    monkeypatch.setenv("SERVICE_TOKEN", "tok-9f8e7d6c5b4a3f2e1d0c")
    capsys.readouterr()
    monkeypatch.chdir(repo.path)
    for form in ("text", "markdown", "json"):
        main(["diff", "HEAD~1", "--format", form])
        out = capsys.readouterr().out
        assert "tok-9f8e7d6c5b4a3f2e1d0c" not in out and "[redacted]" in out, form


def test_markdown_quotes_the_output_under_test_as_data(repo, pytester, live_args, monkeypatch, capsys):
    hostile = "<img src=x onerror=alert(1)> @octocat | ``` **bold** SCORE=0.1"
    record(pytester, live_args, hostile, POLITE)
    capsys.readouterr()  # what the recording run printed
    monkeypatch.chdir(repo.path)
    main(["diff", "HEAD~1", "--format", "markdown"])
    markdown = capsys.readouterr().out
    fence = "````diff"  # longer than the ``` the output holds: the output stays inside it, as code
    before, _, rest = markdown.partition(fence)
    block, _, after = rest.partition("\n````\n")
    assert f"+{hostile}" in block.splitlines()
    prose = before + after  # outside code, neither HTML nor a mention (a comment notifies whom it mentions)
    assert "<img" not in prose and "@octocat" not in prose


def test_git_is_read_in_bulk_one_process_per_side(repo, monkeypatch, capsys):
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(args, *rest, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(list(args))
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting)
    monkeypatch.chdir(repo.path)
    main(["diff", "HEAD~1"])
    capsys.readouterr()
    reads = [c for c in calls if c[:2] == ["git", "--literal-pathspecs"] and c[2] in ("ls-tree", "cat-file")]
    assert [c[2] for c in reads] == ["ls-tree", "cat-file"], calls
    assert len(calls) <= 4, calls  # and the two that find the repository and the revision


def test_unchanged_verdicts_diff_to_nothing(repo, monkeypatch, capsys):
    capsys.readouterr()
    monkeypatch.chdir(repo.path)
    assert main(["diff", "HEAD", "--fail-on", "regression"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "0 judgments changed in 0 tests: 0 regressed (pass to fail), 0 improved (fail to pass), " \
        "0 other changes, 0 added, 0 removed; 3 unchanged"  # fmt: skip
    assert os.environ.get("CI") is None  # nothing here depends on a CI variable of the caller's


UPGRADED = """
from pytest_llmjudge import Faithfulness, assert_judged

POLICY = ["Returns are accepted within 30 days of delivery.", "Refunds go back to the original payment method."]

def test_grounded():
    assert_judged("Returns are accepted within 30 days. Refunds are paid in cash at any store.",
                  "Answers from the return policy", context=POLICY, rubric=Faithfulness(), threshold=0.9)

def test_sampled():
    assert_judged("Kind words. SCORE=0.8", "Is kind", threshold=0.7, samples=3)

def test_rude():
    assert_judged("Whatever. SCORE=0.3", "Is polite", threshold=0.7)
"""
# What `rag_judge` answers a call that is no step of a RAG kind: those are scored by the SCORE=x they show.
NOT_RAG = json.dumps({"reasoning": "a plain judgment of the criteria", "score": 1.0})


def rag_or_score(request: dict) -> str:
    reply = rag_judge(request)
    return score_from_prompt(request) if reply == NOT_RAG else reply


def as_written_before_outcomes(root: Path) -> None:
    """Every verdict file as an earlier version wrote it: no "outcomes", and each entry with its case whole."""
    for path in (root / "judge_verdicts").rglob("*.json"):
        document = json.loads(path.read_text())
        del document["outcomes"]
        cases = document.pop("cases", {})
        for key, entry in document["verdicts"].items():
            named = entry.pop("case", None)
            document["verdicts"][key] = {**cases.get(named, {}), **entry}
        path.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def test_outcomes_added_to_files_written_before_them_change_no_judgment(pytester, monkeypatch, capsys):
    """Given verdict files as written before outcomes were kept (a claims-based RAG judgment of two steps, a
    judgment of three samples, a plain one), committed, and an auto run that replays them all and adds their
    outcomes, the diff finds no judgment changed: each one's calls, keys and replies, are the same."""
    repo = GitRepo(pytester.path)
    (pytester.path / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    pytester.makepyfile(test_upgraded=UPGRADED)
    with OpenAIServer(rag_or_score) as server:
        args = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *args).assert_outcomes(passed=1, failed=2)
        as_written_before_outcomes(pytester.path)
        old = repo.commit("as written before outcomes")
        calls = server.request_count
        pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *args).assert_outcomes(passed=1, failed=2)
        assert server.request_count == calls, "nothing was judged again"
    changed = repo.git("diff", "--stat", old).splitlines()
    assert len(changed) == 4, changed  # the three files gained their outcomes
    capsys.readouterr()  # what the runs printed
    monkeypatch.chdir(repo.path)
    assert main(["diff", old, "--format", "json", "--fail-on", "regression"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["counts"] == {
        "regressed": 0, "improved": 0, "changed": 0, "added": 0, "removed": 0, "unchanged": 3,
    }  # fmt: skip
    assert document["judgments"] == [] and document["decisions_now_recorded"] == 3
    main(["diff", old])
    assert capsys.readouterr().out.splitlines()[1] == (
        "0 judgments changed in 0 tests: 0 regressed (pass to fail), 0 improved (fail to pass), 0 other changes, "
        "0 added, 0 removed; 3 unchanged (3 with their decision recorded only now)"
    )


def test_a_verdict_file_whose_recorded_test_id_changed_pairs_by_its_path(pytester, live_args, monkeypatch, capsys):
    """Given verdicts recorded from the repository's top (ids `app/test_bot.py::...`), then app/ made a rootdir
    of its own (ids `test_bot.py::...`) and one answer recorded again there, the diff pairs each test by its
    verdict file's path: one regression, the rest unchanged, nothing added or removed."""
    repo = GitRepo(pytester.path)
    (pytester.path / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    app = pytester.mkdir("app")
    (app / "test_bot.py").write_text(BOT.format(refund=PASSING_REFUND, tone=RUDE))
    pytester.runpytest("app", "--judge-mode=auto", "-p", "no:cacheprovider", *live_args).assert_outcomes(
        passed=2, failed=1
    )
    refund = app / "judge_verdicts" / "test_bot" / "test_refund.json"
    assert json.loads(refund.read_text())["test"] == "app/test_bot.py::test_refund"
    repo.commit("recorded from the top")
    (app / "pytest.ini").write_text("[pytest]\n")
    (app / "test_bot.py").write_text(BOT.format(refund=FAILING_REFUND, tone=RUDE))
    monkeypatch.chdir(app)
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *live_args).assert_outcomes(passed=1, failed=2)
    assert json.loads(refund.read_text())["test"] == "test_bot.py::test_refund"  # the same file, another id
    capsys.readouterr()
    monkeypatch.chdir(repo.path)
    assert main(["diff", "HEAD", "--format", "json", "--fail-on", "regression"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["counts"] == {
        "regressed": 1, "improved": 0, "changed": 0, "added": 0, "removed": 0, "unchanged": 2,
    }  # fmt: skip
    assert [(j["test"], j["status"]) for j in document["judgments"]] == [("test_bot.py::test_refund", "regressed")]


def test_a_verdict_file_moved_elsewhere_pairs_by_its_test_id(repo, monkeypatch, capsys):
    """Given a verdict file moved to another folder (its test id unchanged), its judgment pairs by the id."""
    moved = repo.path / "verdicts" / "test_tone.json"
    moved.parent.mkdir()
    (repo.path / "judge_verdicts" / "test_bot" / "test_tone.json").rename(moved)
    capsys.readouterr()
    monkeypatch.chdir(repo.path)
    assert main(["diff", "HEAD", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["unchanged"] == 3
