"""The verdict-file merge driver (issue 12, item 18): unit tests on files, then real `git merge` runs."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_llmjudge
from pytest_llmjudge.errors import StoreError
from pytest_llmjudge.store.merge import (
    ATTRIBUTES_LINE,
    DRIVER_COMMAND,
    install,
    install_instructions,
    main,
    merge_verdict_files,
)
from pytest_llmjudge.store.verdict_file import VerdictDocument

TEST = "tests/test_bot.py::test_answer"


def key(n: int) -> str:
    """A verdict key; distinct keys differ in their first 12 digits, the prefix messages show."""
    return hashlib.sha256(str(n).encode()).hexdigest()


def entry(score: float, *, model: str = "judge-a", reply: str | None = None, reasoning: str = "fine") -> dict:
    if reply is None:
        reply = json.dumps({"reasoning": reasoning, "score": score})
    return {"model": model, "reply": reply, "score": score, "reasoning": reasoning, "rubric": "score", "sample": 0}


def write(path: Path, entries: dict[str, dict], test: str = TEST) -> Path:
    VerdictDocument(path, test, entries).write()
    return path


def sides(
    tmp_path: Path, base: dict | None, ours: dict, theirs: dict, *, test_theirs: str = TEST
) -> tuple[Path, Path, Path]:
    b = tmp_path / "base.json"
    if base is None:
        b.write_text("")  # git passes an empty ancestor for a file added on both branches
    else:
        write(b, base)
    return b, write(tmp_path / "ours.json", ours), write(tmp_path / "theirs.json", theirs, test_theirs)


def merged(path: Path) -> dict[str, dict]:
    return VerdictDocument.read(path).entries


# -- policy, on files ----------------------------------------------------------------------------


def test_entries_added_on_both_sides_are_united(tmp_path):
    base, ours, theirs = sides(
        tmp_path,
        {key(1): entry(0.5)},
        {key(1): entry(0.5), key(2): entry(0.7, model="a")},
        {key(1): entry(0.5), key(3): entry(0.9, model="b")},
    )
    result = merge_verdict_files(base, ours, theirs)
    assert result.clean and not result.notes
    assert merged(ours) == {key(1): entry(0.5), key(2): entry(0.7, model="a"), key(3): entry(0.9, model="b")}
    assert VerdictDocument.read(ours).test == TEST


def judgment(first: int, calls: int, context: list[str]) -> dict[str, dict]:
    """The entries of one judgment of several calls, all of one case, as the store keeps them in memory."""
    case = {"criteria": "Ranks well", "input": "Returns?", "output": "Within 30 days.", "context": context}
    named = hashlib.sha256(json.dumps(case, sort_keys=True).encode()).hexdigest()[:16]
    return {key(first + i): {**entry(1.0), **case, "prompt": f"passage {i + 1}", "case": named} for i in range(calls)}


def test_judgments_that_store_their_case_once_merge_by_key(tmp_path):
    ours_judgment = judgment(100, 3, ["Returns within 30 days.", "Refunds to the card."])
    theirs_judgment = judgment(200, 2, ["Shoes ship in 2 days."])
    base, ours, theirs = sides(tmp_path, {}, ours_judgment, theirs_judgment)
    assert merge_verdict_files(base, ours, theirs).clean
    assert merged(ours) == {**ours_judgment, **theirs_judgment}, "every entry reads whole"
    document = json.loads(ours.read_text())
    assert {case["context"][0] for case in document["cases"].values()} == {
        "Returns within 30 days.",
        "Shoes ship in 2 days.",
    }
    assert ours.read_text().count("Refunds to the card.") == 1, "each case once"


def test_empty_ancestor_is_an_empty_verdict_file(tmp_path):
    base, ours, theirs = sides(tmp_path, None, {key(2): entry(0.7)}, {key(3): entry(0.9), key(2): entry(0.7)})
    assert merge_verdict_files(base, ours, theirs).clean
    assert set(merged(ours)) == {key(2), key(3)}


def test_missing_files_are_empty_verdict_files(tmp_path):
    ours = write(tmp_path / "ours.json", {key(2): entry(0.7)})
    result = merge_verdict_files(tmp_path / "none-base.json", ours, tmp_path / "none-theirs.json")
    assert result.clean and set(merged(ours)) == {key(2)}


def test_deletion_on_one_side_unchanged_on_the_other_is_kept_deleted(tmp_path):
    base, ours, theirs = sides(
        tmp_path,
        {key(1): entry(0.5), key(2): entry(0.6)},
        {key(1): entry(0.5), key(2): entry(0.6)},
        {key(2): entry(0.6)},
    )
    assert merge_verdict_files(base, ours, theirs).clean
    assert set(merged(ours)) == {key(2)}
    # and the other way round: ours pruned it, theirs left it alone
    base, ours, theirs = sides(tmp_path, {key(1): entry(0.5)}, {}, {key(1): entry(0.5), key(4): entry(0.4)})
    assert merge_verdict_files(base, ours, theirs).clean
    assert set(merged(ours)) == {key(4)}


def test_deleted_on_both_sides_stays_deleted(tmp_path):
    base, ours, theirs = sides(tmp_path, {key(1): entry(0.5)}, {key(2): entry(0.6)}, {key(3): entry(0.7)})
    assert merge_verdict_files(base, ours, theirs).clean
    assert set(merged(ours)) == {key(2), key(3)}


def test_changed_on_one_side_deleted_on_the_other_keeps_the_change(tmp_path):
    changed = entry(0.8, reasoning="re-parsed")
    base, ours, theirs = sides(tmp_path, {key(1): entry(0.5)}, {}, {key(1): changed})
    result = merge_verdict_files(base, ours, theirs)
    assert result.clean and merged(ours) == {key(1): changed}
    assert any("deleted" in note and key(1)[:12] in note for note in result.notes)


def test_derived_fields_changed_on_one_side_take_that_side(tmp_path):
    reply = json.dumps({"reasoning": "ok", "score": 0.8})
    old, reparsed = entry(0.7, reply=reply), entry(0.8, reply=reply, reasoning="ok")
    for ours_entry, theirs_entry in ((old, reparsed), (reparsed, old)):
        base, ours, theirs = sides(tmp_path, {key(1): old}, {key(1): ours_entry}, {key(1): theirs_entry})
        result = merge_verdict_files(base, ours, theirs)
        assert result.clean and not result.notes
        assert merged(ours) == {key(1): reparsed}


def test_derived_fields_changed_on_both_sides_keep_ours_whole(tmp_path):
    reply = json.dumps({"reasoning": "ok", "score": 0.8})
    base_entry = entry(0.7, reply=reply)
    ours_entry = {**entry(0.8, reply=reply, reasoning="ours"), "verdict": "pass"}
    theirs_entry = {**entry(0.75, reply=reply, reasoning="theirs"), "confidence": 0.9}
    base, ours, theirs = sides(tmp_path, {key(1): base_entry}, {key(1): ours_entry}, {key(1): theirs_entry})
    result = merge_verdict_files(base, ours, theirs)
    assert result.clean
    assert merged(ours) == {key(1): ours_entry}  # whole, never a mix of the two parses
    assert any("kept ours" in note for note in result.notes)


def test_same_reply_added_on_both_sides_is_not_a_conflict(tmp_path):
    reply = json.dumps({"reasoning": "ok", "score": 0.8})
    base, ours, theirs = sides(tmp_path, None, {key(1): entry(0.8, reply=reply)}, {key(1): entry(0.75, reply=reply)})
    assert merge_verdict_files(base, ours, theirs).clean
    assert merged(ours)[key(1)]["score"] == 0.8


def test_reply_changed_on_one_side_wins_over_a_reparse_of_the_old_reply(tmp_path):
    old_reply = json.dumps({"reasoning": "old", "score": 0.5})
    base_entry = entry(0.5, reply=old_reply)
    reparsed_old = entry(0.55, reply=old_reply, reasoning="reparsed")
    rerecorded = entry(0.9, reasoning="new judge call")
    base, ours, theirs = sides(tmp_path, {key(1): base_entry}, {key(1): reparsed_old}, {key(1): rerecorded})
    assert merge_verdict_files(base, ours, theirs).clean
    assert merged(ours) == {key(1): rerecorded}


def test_test_name_differing_keeps_ours(tmp_path):
    base, ours, theirs = sides(
        tmp_path, {}, {key(1): entry(0.5)}, {key(2): entry(0.5)}, test_theirs="tests/old.py::test_x"
    )
    result = merge_verdict_files(base, ours, theirs)
    assert result.clean and VerdictDocument.read(ours).test == TEST
    assert set(merged(ours)) == {key(1), key(2)}


def test_different_replies_for_one_key_are_a_true_conflict(tmp_path, capsys):
    base, ours, theirs = sides(
        tmp_path,
        {key(9): entry(0.1)},
        {key(1): entry(0.5, reply="Score: 0.5\nbecause ours"), key(9): entry(0.1)},
        {key(1): entry(0.6, reply="Score: 0.6\nbecause theirs"), key(2): entry(0.3)},
    )
    before = ours.read_bytes()
    result = merge_verdict_files(base, ours, theirs)
    assert not result.clean and [c.key for c in result.conflicts] == [key(1)]
    assert ours.read_bytes() == before  # nothing written: %A stays as ours

    assert main([str(base), str(ours), str(theirs)]) == 1
    err = capsys.readouterr().err
    assert ours.read_bytes() == before
    assert TEST in err and key(1)[:12] in err and "CONFLICT" in err
    assert "Score: 0.5" in err and "Score: 0.6" in err
    assert "because" not in err  # the first line of each reply only


def test_main_merges_and_exits_0(tmp_path, capsys):
    base, ours, theirs = sides(tmp_path, None, {key(1): entry(0.5)}, {key(2): entry(0.5)})
    assert main([str(base), str(ours), str(theirs)]) == 0
    assert set(merged(ours)) == {key(1), key(2)}
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"format": 99, "test": TEST, "verdicts": {}}),
        json.dumps({"format": 1, "verdicts": {"x": {}}}),
        json.dumps([1, 2]),
    ],
)
def test_unreadable_input_exits_2_with_one_line(tmp_path, capsys, content):
    base, ours, theirs = sides(tmp_path, None, {key(1): entry(0.5)}, {key(2): entry(0.5)})
    theirs.write_text(content)
    before = ours.read_bytes()
    with pytest.raises(StoreError):
        merge_verdict_files(base, ours, theirs)
    assert main([str(base), str(ours), str(theirs)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("llmjudge merge: ") and err.count("\n") == 1 and "Traceback" not in err
    assert ours.read_bytes() == before


def test_merged_file_is_in_the_one_layout(tmp_path):
    base, ours, theirs = sides(tmp_path, None, {key(2): entry(0.5)}, {key(1): entry(0.5)})
    merge_verdict_files(base, ours, theirs)
    expected = tmp_path / "expected.json"
    write(expected, {key(1): entry(0.5), key(2): entry(0.5)})
    assert ours.read_text() == expected.read_text()


# -- installation --------------------------------------------------------------------------------


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo.parent),
        "GIT_TERMINAL_PROMPT": "0",
        "PYTHONPATH": os.pathsep.join(
            [str(Path(pytest_llmjudge.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]
        ),
    }
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    return subprocess.run(["git", *args], cwd=repo, env=env, text=True, capture_output=True, check=check)


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test")
    git(path, "config", "user.email", "test@example.invalid")
    git(path, "config", "commit.gpgsign", "false")
    return path


DRIVER = f"{sys.executable} -m pytest_llmjudge.store.merge %O %A %B"


def test_install_instructions_name_the_attributes_line_and_config():
    text = install_instructions(store="verdicts")
    assert ATTRIBUTES_LINE in text and "verdicts/**/*.json merge=llmjudge" in text
    assert f'git config merge.llmjudge.driver "{DRIVER_COMMAND}"' in text and "merge.llmjudge.name" in text


@needs_git
def test_install_is_idempotent(repo):
    (repo / ".gitattributes").write_text("*.png binary")  # no final newline
    assert install(repo, store="verdicts/") == [ATTRIBUTES_LINE, "verdicts/**/*.json merge=llmjudge"]
    assert install(repo, store="verdicts") == []
    assert install(repo) == []
    assert (
        repo / ".gitattributes"
    ).read_text() == f"*.png binary\n{ATTRIBUTES_LINE}\nverdicts/**/*.json merge=llmjudge\n"
    assert git(repo, "config", "merge.llmjudge.driver").stdout.strip() == DRIVER_COMMAND
    assert git(repo, "config", "merge.llmjudge.name").stdout.strip()
    assert (
        git(repo, "check-attr", "merge", "tests/judge_verdicts/test_bot/test_x.json")
        .stdout.strip()
        .endswith(": llmjudge")
    )
    assert git(repo, "check-attr", "merge", "judge_verdicts/m/t.json").stdout.strip().endswith(": llmjudge")
    assert git(repo, "check-attr", "merge", "verdicts/tests/test_bot/t.json").stdout.strip().endswith(": llmjudge")


# -- real git merges -----------------------------------------------------------------------------

FILES = [f"tests/judge_verdicts/test_bot/test_{n}.json" for n in range(3)]


def record(repo: Path, model: str, first_key: int, reply: str | None = None) -> None:
    """Add one verdict per file, as a run with another judge model would."""
    for i, name in enumerate(FILES):
        path = repo / name
        doc = VerdictDocument.read(path)
        doc.entries[key(first_key + i)] = entry(0.8, model=model, reply=reply)
        VerdictDocument(path, doc.test, doc.entries).write()


def model_matrix(repo: Path, *, theirs_reply: str | None = None, same_key: bool = False) -> None:
    for i, name in enumerate(FILES):
        write(repo / name, {key(100 + i): entry(0.5, model="judge-base")}, test=f"tests/test_bot.py::test_{i}")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base verdicts")
    git(repo, "checkout", "-qb", "model-b")
    record(repo, "judge-b", 200, reply=theirs_reply)
    git(repo, "commit", "-qam", "judge-b verdicts")
    git(repo, "checkout", "-q", "main")
    record(repo, "judge-a", 200 if same_key else 300)
    git(repo, "commit", "-qam", "judge-a verdicts")


@needs_git
@pytest.mark.slow
def test_git_merge_with_the_driver_unites_both_branches(repo):
    install(repo, command=DRIVER)
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "merge driver")
    model_matrix(repo)
    done = git(repo, "merge", "--no-edit", "model-b", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(repo, "status", "--porcelain").stdout == ""
    for i, name in enumerate(FILES):
        doc = VerdictDocument.read(repo / name)  # valid, and in the one layout
        assert doc.test == f"tests/test_bot.py::test_{i}"
        assert set(doc.entries) == {key(100 + i), key(200 + i), key(300 + i)}
        assert {e["model"] for e in doc.entries.values()} == {"judge-base", "judge-a", "judge-b"}


@needs_git
@pytest.mark.slow
def test_git_merge_reports_a_true_conflict_by_key(repo):
    install(repo, command=DRIVER)
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "merge driver")
    model_matrix(repo, same_key=True, theirs_reply="Score: 0.3 (theirs)")
    ours_text = (repo / FILES[0]).read_text()
    done = git(repo, "merge", "--no-edit", "model-b", check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "CONFLICT" in output and key(200)[:12] in output and "Score: 0.3 (theirs)" in output
    assert "tests/test_bot.py::test_0" in output
    assert set(git(repo, "diff", "--name-only", "--diff-filter=U").stdout.split()) == set(FILES)
    assert (repo / FILES[0]).read_text() == ours_text  # left as ours, still a valid verdict file
    VerdictDocument.read(repo / FILES[0])


@needs_git
def test_without_the_driver_git_conflicts_and_union_writes_invalid_json(repo, tmp_path):
    model_matrix(repo)
    done = git(repo, "merge", "--no-edit", "model-b", check=False)
    assert done.returncode != 0 and "CONFLICT" in done.stdout + done.stderr
    git(repo, "merge", "--abort")

    name = FILES[0]
    base, ours, theirs = (tmp_path / f"{side}.json" for side in ("base", "ours", "theirs"))
    base.write_text(git(repo, "show", f"main~1:{name}").stdout)
    ours.write_text(git(repo, "show", f"main:{name}").stdout)
    theirs.write_text(git(repo, "show", f"model-b:{name}").stdout)
    git(repo, "merge-file", "--union", str(ours), str(base), str(theirs))
    with pytest.raises(ValueError):
        json.loads(ours.read_text())
