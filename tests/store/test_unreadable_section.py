"""The "unreadable" section of a verdict file: judge replies that held no verdict, kept on record by a run that
counts them (a judge's qualification).  Read, written, merged and pruned like the other sections; a key is a
verdict or an unreadable reply, never both."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_llmjudge.errors import StoreError
from pytest_llmjudge.prune import apply_prune, plan_prune
from pytest_llmjudge.store.merge import merge_verdict_files
from pytest_llmjudge.store.verdict_file import VerdictDocument, VerdictFile

TEST = "qualification::GPTInst"


def key(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()


def verdict(winner: str = "A") -> dict:
    return {"model": "m", "reply": json.dumps({"reasoning": "r", "winner": winner}), "score": 1.0, "sample": 0}


def unreadable(text: str = "I cannot decide.") -> dict:
    return {"model": "m", "reply": text, "sample": 0}


def test_a_file_without_unreadable_replies_keeps_its_bytes(tmp_path):
    path = tmp_path / "v.json"
    VerdictFile(path, TEST).put(key(1), verdict())
    assert json.loads(path.read_text()) == {"format": 1, "test": TEST, "verdicts": {key(1): verdict()}}


def test_unreadable_replies_are_written_and_read_back_apart_from_the_verdicts(tmp_path):
    path = tmp_path / "v.json"
    stored = VerdictFile(path, TEST)
    stored.put(key(1), verdict())
    stored.put_many({key(2): unreadable()}, "unreadable")
    document = json.loads(path.read_text())
    assert document["unreadable"] == {key(2): unreadable()} and list(document["verdicts"]) == [key(1)]
    fresh = VerdictFile(path, TEST)
    assert fresh.get(key(2)) is None, "an unreadable reply never answers a judgment"
    assert fresh.get(key(2), "unreadable") == unreadable()
    assert fresh.holds_all([key(1), key(2)], lambda _: False), "both are the judge's answer on record"
    assert not fresh.holds_all([key(3)], lambda _: False)


@pytest.mark.parametrize(("first", "then"), [("verdict", "unreadable"), ("unreadable", "verdict")])
def test_a_key_is_a_verdict_or_an_unreadable_reply_never_both(tmp_path, first, then):
    path = tmp_path / "v.json"
    entries = {"verdict": verdict(), "unreadable": unreadable()}
    VerdictFile(path, TEST).put_many({key(1): entries[first]}, first)
    VerdictFile(path, TEST).put_many({key(1): entries[then]}, then)  # a refresh answered otherwise
    document = VerdictDocument.read(path)
    assert document.section(then) == {key(1): entries[then]}
    assert document.section(first) == {}, "the older answer is gone"


def test_a_malformed_unreadable_section_is_a_store_error(tmp_path):
    path = tmp_path / "v.json"
    path.write_text(json.dumps({"format": 1, "verdicts": {}, "unreadable": {"x": {"reply": "?"}}}))
    with pytest.raises(StoreError, match="'x' is not an unreadable reply's key"):
        VerdictDocument.read(path)
    path.write_text(json.dumps({"format": 1, "verdicts": {}, "unreadable": []}))
    with pytest.raises(StoreError, match="'unreadable' is not a JSON object"):
        VerdictDocument.read(path)


def write(path: Path, verdicts: dict, unreadable_replies: dict) -> Path:
    VerdictDocument(path, TEST, verdicts, unreadable=unreadable_replies).write()
    return path


def test_unreadable_replies_merge_by_key_and_a_verdict_wins_over_one(tmp_path):
    base = write(tmp_path / "base.json", {}, {})
    ours = write(tmp_path / "ours.json", {key(1): verdict()}, {key(2): unreadable("ours")})
    theirs = write(tmp_path / "theirs.json", {}, {key(1): unreadable("theirs"), key(3): unreadable("theirs too")})
    result = merge_verdict_files(base, ours, theirs)
    assert result.clean
    document = VerdictDocument.read(ours)
    assert document.entries == {key(1): verdict()}
    assert document.unreadable == {key(2): unreadable("ours"), key(3): unreadable("theirs too")}
    assert any("kept the verdict" in note for note in result.notes)


def test_prune_keeps_the_unreadable_replies_a_run_used_and_removes_the_others(tmp_path):
    folder = tmp_path / "judge_verdicts" / "test_x"
    folder.mkdir(parents=True)
    (tmp_path / "test_x.py").write_text("")
    path = write(folder / "test_a.json", {key(1): verdict()}, {key(2): unreadable(), key(3): unreadable()})
    manifest = {
        "rootdir": str(tmp_path),
        "written": path.stat().st_mtime + 60,
        "dirs": ["judge_verdicts/test_x"],
        "tests": {TEST: {"outcome": "passed", "used": [key(1), key(2)]}},
    }
    plan = plan_prune(manifest)
    assert [action.removed for action in plan.actions] == [[key(3)]]
    apply_prune(plan)
    document = VerdictDocument.read(path)
    assert set(document.entries) == {key(1)} and set(document.unreadable) == {key(2)}


# -- held writes: a run of many judgments into one file ---------------------------------------------------------


def case_entry(output: str, prompt: str) -> dict:
    return {
        **verdict(),
        "criteria": "Better follows the instruction",
        "output": output,
        "expected": "x",
        "prompt": prompt,
    }


def test_held_writes_land_a_few_at_a_time_and_share_their_case(tmp_path, monkeypatch):
    path = tmp_path / "v.json"
    writes = []
    real = VerdictDocument.write
    monkeypatch.setattr(VerdictDocument, "write", lambda self: (writes.append(len(self.entries)), real(self))[1])
    stored = VerdictFile(path, TEST)
    with stored.held(limit=4):
        for n in range(5):  # five judgments of one call each; the first two judge one case in its two orders
            output = "the same output" if n < 2 else f"output {n}"
            stored.put_many({key(n): case_entry(output, f"order {n}")})
        assert stored.get(key(4)) is not None, "a held entry is the file's at once"
        assert writes == [4], "four entries held, then written together"
        assert VerdictFile(path, TEST).get(key(4)) is None, "... the fifth is not on disk yet"
    assert writes == [4, 5]
    document = json.loads(path.read_text())
    assert len(document["cases"]) == 1, "the two entries of one case written together store it once"
    assert path.read_text().count("the same output") == 1
    assert VerdictDocument.read(path).entries == {key(n): stored.get(key(n)) for n in range(5)}


def test_held_writes_are_written_when_the_block_fails(tmp_path):
    path = tmp_path / "v.json"
    stored = VerdictFile(path, TEST)
    with pytest.raises(KeyboardInterrupt), stored.held():
        stored.put(key(1), verdict())
        raise KeyboardInterrupt
    assert set(VerdictDocument.read(path).entries) == {key(1)}
    stored.put(key(2), verdict())  # written through again once the block ended
    assert set(VerdictDocument.read(path).entries) == {key(1), key(2)}
