"""The verdict file CLI (`python -m pytest_llmjudge`), on verdict files a real pytest run wrote, and `pytest --judge-prune`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import FAKE_CONFTEST
from helpers.verdicts import verdict_files

TESTS = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days", threshold=0.7)

def test_tone():
    assert_judged("Thanks for asking! SCORE=0.8", "Is polite")

def test_two_samples(judge):
    assert judge.score("Action items: a, b. SCORE=0.7", "Mentions every action item", samples=2).passed
"""

OTHER = """
from pytest_llmjudge import assert_judged

def test_other():
    assert_judged("Hello. SCORE=0.6", "Greets the user")
"""


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def documents(root: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in verdict_files(root)}


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=TESTS, test_other=OTHER)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=4)
    return pytester.path


def _one_entry(path: Path) -> tuple[str, dict, dict]:
    document = json.loads(path.read_text())
    ((key, entry),) = document["verdicts"].items()
    return key, entry, document


def test_stats_counts_per_model_and_module_and_finds_unparseable_replies(project):
    refund = project / "judge_verdicts" / "test_bot" / "test_refund.json"
    key, entry, document = _one_entry(refund)
    entry["reply"] = "I cannot decide."
    refund.write_text(json.dumps(document, indent=2, sort_keys=True))
    result = cli(project, "stats")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "5 stored verdicts in 4 verdict files (4 tests), 1 unparseable replies"
    assert "by model:" in lines and "  fake-judge  5" in lines
    assert "by test module:" in lines and "  test_bot.py    4" in lines and "  test_other.py  1" in lines
    assert any(line.startswith(f"  {refund.relative_to(project)}  key {key[:12]}  no score") for line in lines), lines
    # The same through the console script, on an explicit path.
    script = Path(sys.executable).with_name("llmjudge")
    if script.exists():
        other = subprocess.run(
            [str(script), "stats", "judge_verdicts/test_other"], cwd=project, capture_output=True, text=True
        )
        assert other.stdout.splitlines()[0] == "1 stored verdicts in 1 verdict files (1 tests), 0 unparseable replies"


def test_reparse_lists_changed_scores_and_write_updates_them(project):
    tone = project / "judge_verdicts" / "test_bot" / "test_tone.json"
    original = tone.read_text()
    key, entry, document = _one_entry(tone)
    entry["score"] = 0.1  # as if an older parser had misread the reply
    tone.write_text(json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n")

    result = cli(project, "reparse")
    assert result.returncode == 0
    assert f"key {key[:12]}  (test_bot.py::test_tone): score 0.10 -> 0.80" in result.stdout
    assert (
        result.stdout.splitlines()[-1]
        == "reparsed 5 stored replies: 1 scores changed, 0 unparseable; run with --write to update the stored scores"
    )
    assert cli(project, "reparse", "--check").returncode == 1
    assert json.loads(tone.read_text())["verdicts"][key]["score"] == 0.1, "no --write: nothing changes"

    result = cli(project, "reparse", "--write")
    assert result.stdout.splitlines()[-1].endswith("; updated 1 verdict file")
    assert tone.read_text() == original, "rewritten byte for byte as the plugin writes it"
    again = cli(project, "reparse", "--check")
    assert again.returncode == 0 and "0 scores changed" in again.stdout


def test_show_accepts_a_prefix_and_prints_the_whole_judgment(project):
    key, entry, _ = _one_entry(project / "judge_verdicts" / "test_bot" / "test_refund.json")
    result = cli(project, "show", key[:8])
    assert result.returncode == 0, result.stderr
    assert f"key:        {key}" in result.stdout
    assert "test:       test_bot.py::test_refund" in result.stdout
    assert "  Returns within 30 days. SCORE=0.9" in result.stdout and entry["reply"] in result.stdout
    assert "parsed now: 0.9 (same)" in result.stdout
    as_json = json.loads(cli(project, "show", key.upper()[:10], "--json").stdout)
    assert as_json["key"] == key and as_json["reply"] == entry["reply"]


def test_errors_are_one_line_with_exit_status_2(project):
    def check(result: subprocess.CompletedProcess, fragment: str) -> None:
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
        assert result.stderr.startswith("llmjudge: error: ") and fragment in result.stderr, result.stderr

    check(cli(project, "stats", "no/such/dir"), "no/such/dir: no such file or directory")
    check(cli(project, "show", "xyz!"), "'xyz!' is not a verdict key")
    check(cli(project, "show", "0123456789abcdef"), "no stored verdict has a key starting with 0123456789abcdef")

    folder = project / "judge_verdicts" / "test_bot"
    for name, prefix in (("test_ambiguous_a.json", "abcd1"), ("test_ambiguous_b.json", "abcd2")):
        key = prefix + "0" * 59
        document = {
            "format": 1,
            "test": f"test_bot.py::{name[:-5]}",
            "verdicts": {key: {"reply": '{"score": 1}', "score": 1.0}},
        }
        (folder / name).write_text(json.dumps(document))
    check(
        cli(project, "show", "abcd"),
        "key prefix abcd is ambiguous, 2 verdicts match: abcd100000000000 (test_bot.py::test_ambiguous_a); abcd200000000000",
    )

    (folder / "test_broken.json").write_text('{"format": 1, "test": "x", "verdicts": {')
    check(cli(project, "stats"), "test_broken.json: the verdict file is not valid JSON")
    (folder / "test_broken.json").write_text('{"format": 1, "test": "x", "verdicts": {"nothex": {"reply": "x"}}}')
    check(cli(project, "reparse"), "'nothex' is not a verdict key")
    check(cli(project, "prune", "--cache-dir", "nowhere"), "no used-keys manifest at nowhere")


def test_discovery_skips_venvs_and_tool_dirs_and_finds_store_shaped_files(project):
    source = project / "judge_verdicts" / "test_other" / "test_other.json"
    for folder in (".tox/py311/judge_verdicts/m", "node_modules/x/judge_verdicts/m", "env3/lib/judge_verdicts/m"):
        (project / folder).mkdir(parents=True)
        (project / folder / "copy.json").write_text(source.read_text())
    (project / "env3" / "pyvenv.cfg").write_text("home = /usr\n")
    (project / "store" / "tests").mkdir(parents=True)
    (project / "store" / "tests" / "t.json").write_text(source.read_text())  # as --judge-store writes them
    (project / "package.json").write_text('{"name": "not a verdict file"}')
    first = cli(project, "stats").stdout.splitlines()[0]
    assert first == "6 stored verdicts in 5 verdict files (4 tests), 0 unparseable replies"


def test_pytest_judge_prune_removes_unused_verdicts_after_a_full_successful_run(pytester, project):
    before = documents(project)
    assert sorted(before) == ["test_other.json", "test_refund.json", "test_tone.json", "test_two_samples.json"]
    # test_tone now judges a different output (new key), test_two_samples is gone, test_other skips.
    pytester.makepyfile(
        test_bot=TESTS.replace("Thanks for asking!", "Thank you for asking!").split("def test_two_samples")[0],
        test_other="import pytest\n"
        + OTHER.replace("def test_other", "@pytest.mark.skip(reason='later')\ndef test_other"),
    )
    refused = pytester.runpytest("--judge-mode=auto", "--judge-prune", "-k", "refund or tone")
    refused.stdout.fnmatch_lines(["llmjudge prune: nothing removed: -k/-m selected a subset of the tests"])
    assert len(documents(project)["test_tone.json"]["verdicts"]) == 2, "the new verdict was added, the old one kept"
    assert "test_two_samples.json" in documents(project)

    result = pytester.runpytest("--judge-mode=auto", "--judge-prune")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["llmjudge prune: removed 3 unused verdicts from 2 files (1 deleted); 3 kept"])
    after = documents(project)
    assert sorted(after) == ["test_other.json", "test_refund.json", "test_tone.json"]
    assert after["test_other.json"] == before["test_other.json"], "a skipped test keeps its verdicts"
    assert after["test_refund.json"] == before["test_refund.json"]
    (new_key,) = after["test_tone.json"]["verdicts"]
    assert new_key not in before["test_tone.json"]["verdicts"]
    assert "Thank you" in after["test_tone.json"]["verdicts"][new_key]["output"]
    pytester.runpytest("--judge-mode=replay").assert_outcomes(passed=2, skipped=1)


def test_pytest_judge_prune_refuses_after_failures_node_ids_and_in_live_mode(pytester, project):
    before = documents(project)
    pytester.makepyfile(test_bot=TESTS.split("def test_tone")[0] + "\ndef test_fails():\n    assert False\n")
    pytester.runpytest("--judge-mode=auto", "--judge-prune").stdout.fnmatch_lines(
        ["llmjudge prune: nothing removed: the run did not pass (exit status 1); prune needs a full, successful run"]
    )
    pytester.makepyfile(test_bot=TESTS.split("def test_tone")[0])
    pytester.runpytest("test_bot.py::test_refund", "--judge-prune").stdout.fnmatch_lines(
        ["llmjudge prune: nothing removed: node ids selected a subset of the tests"]
    )
    pytester.runpytest("--judge-mode=live", "--judge-prune").stdout.fnmatch_lines(
        ["llmjudge prune: nothing removed: live mode reads no stored verdicts"]
    )
    assert documents(project) == before


def test_cli_prune_reads_the_manifest_of_the_last_full_run(pytester, project):
    manifest = project / ".pytest_cache" / "v" / "llmjudge" / "used-keys"
    assert manifest.exists(), "the recording run was full and successful: it wrote the manifest"
    data = json.loads(manifest.read_text())
    assert data["tests"]["test_bot.py::test_refund"]["ledger"] == "judge_verdicts/test_bot/test_refund.json"
    assert len(data["tests"]["test_bot.py::test_two_samples"]["used"]) == 2

    pytester.makepyfile(test_bot=TESTS.split("def test_two_samples")[0])
    pytester.runpytest("--judge-mode=replay").assert_outcomes(passed=3)
    dry = cli(project, "prune", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (
        "would remove the whole file: " in dry.stdout
        and "test_two_samples.json (test_bot.py::test_two_samples: its test no longer exists)" in dry.stdout
    )
    assert dry.stdout.splitlines()[-1] == "would remove 2 unused verdicts from 1 file (1 deleted); 3 kept"
    assert "test_two_samples.json" in documents(project)

    sub = project / "judge_verdicts"
    done = subprocess.run([sys.executable, "-m", "pytest_llmjudge", "prune"], cwd=sub, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # found the manifest in a parent directory
    assert sorted(documents(project)) == ["test_other.json", "test_refund.json", "test_tone.json"]
    assert cli(project, "prune").stdout.splitlines()[-1] == "nothing to remove (3 stored verdicts in use)"


def test_cli_prune_combines_the_manifests_of_shards(pytester, project):
    """Given a suite run in three pytest-shard shards (one test each), each shard prunes nothing and
    leaves its own manifest; `llmjudge prune` given all removes what none used, and given one, nothing
    of the tests the other shards ran."""
    pytest.importorskip("pytest_shard")
    pytester.makepyfile(
        test_bot=TESTS.replace("Thanks for asking!", "Thank you for asking!").split("def test_two_samples")[0]
    )
    before = documents(project)
    for shard in ("0", "1", "2"):
        result = pytester.runpytest("--judge-mode=auto", "--num-shards=3", f"--shard-id={shard}", "--judge-prune")
        assert result.ret == 0
        result.stdout.fnmatch_lines(["llmjudge prune: nothing removed: * collected tests did not run*", "*--manifest*"])
    assert sum(len(doc["verdicts"]) for doc in documents(project).values()) == 6, "the shards pruned nothing"
    shards = project / ".pytest_cache" / "v" / "llmjudge" / "shards"
    manifests = sorted(shards.iterdir())
    assert len(manifests) == 3

    # One shard's manifest alone never touches the verdicts of the tests the other shard ran.
    one = json.loads(manifests[0].read_text())
    not_run = {name for name, test in one["tests"].items() if test["outcome"] == "not run"}
    assert not_run and "test_bot.py::test_two_samples" not in one["tests"]
    dry = cli(project, "prune", "--dry-run", "--manifest", str(manifests[0]))
    assert dry.returncode == 0, dry.stderr
    assert not any(f"({name}:" in dry.stdout for name in not_run), dry.stdout

    both = cli(project, "prune", *(arg for path in manifests for arg in ("--manifest", str(path))))
    assert both.returncode == 0, both.stderr
    assert "3 manifests combined" in both.stdout
    assert both.stdout.splitlines()[-1] == "removed 3 unused verdicts from 2 files (1 deleted); 3 kept"
    after = documents(project)
    assert sorted(after) == ["test_other.json", "test_refund.json", "test_tone.json"]
    assert after["test_refund.json"] == before["test_refund.json"]
    (new_key,) = after["test_tone.json"]["verdicts"]
    assert "Thank you" in after["test_tone.json"]["verdicts"][new_key]["output"]
    # A directory of manifests does the same; nothing is left to remove.
    assert (
        cli(project, "prune", "--manifest", str(shards)).stdout.splitlines()[-1]
        == "nothing to remove (3 stored verdicts in use)"
    )
    pytester.runpytest("--judge-mode=replay").assert_outcomes(passed=3)


def test_merge_driver_installs_and_merges_through_the_cli(tmp_path):
    """`llmjudge merge --install` sets up a repository; `llmjudge merge %O %A %B` unions by key."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    done = cli(repo, "merge", "--install")
    assert done.returncode == 0, done.stderr
    assert "judge_verdicts/**/*.json merge=llmjudge" in (repo / ".gitattributes").read_text()
    config = subprocess.run(["git", "config", "merge.llmjudge.driver"], cwd=repo, capture_output=True, text=True)
    assert config.stdout.strip() == "llmjudge merge %O %A %B"

    def verdict_file(path: Path, *digits: str) -> Path:
        verdicts = {d * 64: {"reply": f'{{"score": 0.{d}}}', "score": float(f"0.{d}")} for d in digits}
        path.write_text(json.dumps({"format": 1, "test": "t.py::test_x", "verdicts": verdicts}))
        return path

    base, ours, theirs = (
        verdict_file(tmp_path / "o", "1"),
        verdict_file(tmp_path / "a", "1", "2"),
        verdict_file(tmp_path / "b", "1", "3"),
    )
    done = cli(tmp_path, "merge", str(base), str(ours), str(theirs))
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(ours.read_text())["verdicts"]) == ["1" * 64, "2" * 64, "3" * 64]
    wrong = cli(tmp_path, "merge", str(base))
    assert wrong.returncode == 2 and "BASE OURS THEIRS" in wrong.stderr
