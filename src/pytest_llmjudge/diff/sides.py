"""The two sides of a diff: every judgment stored at a git revision, and every one in the working tree.

Both sides are read through the store's one reader (`VerdictDocument.parse`), so a file at a revision is
checked exactly as a file on disk: bounded, parsed as JSON, never executed.  A side is its verdict files,
by their paths in the repository, each with the test id it records (its path where it names none) and
its judgments.

A judgment's calls are the entries of its file that share its case (the output, criteria, input, expected
and context), rubric and run: the calls of one judgment (samples, steps, both orders, a panel's judges),
whether the file stores the case once (`"cases"`) or whole in every entry, as files written before did.

A judgment is what the verdict file's "outcomes" say it decided (see `store.outcomes`), with the calls it
shares a case with (where two outcomes share one, each has its own call only).  A file written before
outcomes were kept has only its entries: each judgment is then its calls, its score the mean of their
stored scores, with no threshold (so no pass or fail): what its entries say, and no more.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ..errors import StoreError
from ..store.finder import VERDICTS_DIR, find_verdict_files, skipped_path, starts_like_verdict_file
from ..store.verdict_file import CASE_FIELDS, MAX_FILE_BYTES, VerdictDocument, case_id
from .git import GitError, Repository

__all__ = ["Judgment", "Side", "StoredTest", "judgments_of", "revision_side", "worktree_side"]


@dataclass(frozen=True)
class Judgment:
    """One judgment of one test on one side: what it decided, and the texts a reader compares."""

    test: str
    key: str  # its first call's key
    keys: frozenset[str]  # every key that stands for it (one, unless read from entries alone)
    criteria: str
    rubric: str
    score: float | None
    threshold: float | None = None
    passed: bool | None = None  # None: no threshold, so neither
    verdict: str | None = None
    run: int = 0
    group: str | None = None
    position: int | None = None  # None: read from a file with no outcomes
    output: str | None = None
    reasoning: str | None = None
    calls: frozenset[tuple[str, str]] = frozenset()  # (key, reply) of each of its calls: what was asked and said


@dataclass(frozen=True)
class StoredTest:
    """One verdict file of a side: where it is, the test it records, and that test's judgments."""

    path: str  # in the repository, as git names it
    test: str  # the test id the file records (its path where it names none)
    judgments: list[Judgment] = field(default_factory=list)


Side = dict[str, StoredTest]  # by the verdict file's path


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


Calls = dict[str, Mapping[str, Any]]  # key -> entry


def _by_judgment(entries: Mapping[str, Mapping[str, Any]]) -> list[Calls]:
    """The entries grouped into the calls of each judgment: those that share a case, a rubric and a run."""
    groups: dict[tuple[str, int, str], Calls] = {}
    # A file that stores a case once gives its entries the case's very objects: each case is hashed once.
    hashed: dict[tuple[tuple[str, int], ...], str] = {}
    for key, entry in sorted(entries.items()):
        case = {name: entry[name] for name in CASE_FIELDS if name in entry}
        same = tuple((name, id(value)) for name, value in case.items())
        if same not in hashed:
            hashed[same] = case_id(case)
        rubric = str(entry.get("rubric") or "score")
        groups.setdefault((rubric, _whole(entry.get("run")), hashed[same]), {})[key] = entry
    return list(groups.values())


def _calls(group: Mapping[str, Mapping[str, Any]]) -> frozenset[tuple[str, str]]:
    return frozenset((key, str(entry.get("reply", ""))) for key, entry in group.items())


def judgments_of(document: VerdictDocument, test: str) -> list[Judgment]:
    """The judgments one verdict file holds (see the module docstring)."""
    entries = document.entries
    outcomes = document.outcomes
    groups = _by_judgment(entries)
    if outcomes:
        group_of = {key: index for index, group in enumerate(groups) for key in group}
        decided = Counter(group_of[key] for key in outcomes if key in group_of)
        found = []
        for key, outcome in sorted(outcomes.items()):
            entry = entries.get(key, {})
            index = group_of.get(key)
            shared = index is not None and decided[index] == 1
            calls = groups[index] if index is not None and shared else {key: entry} if entry else {}
            found.append(
                Judgment(
                    test=test,
                    key=key,
                    keys=frozenset((key,)),
                    criteria=str(outcome.get("criteria", "")),
                    rubric=str(outcome.get("rubric", "")),
                    score=_number(outcome.get("score")),
                    threshold=_number(outcome.get("threshold")),
                    passed=outcome.get("passed") if "threshold" in outcome else None,
                    verdict=outcome.get("verdict"),
                    run=int(outcome.get("run") or 0),
                    group=outcome.get("group"),
                    position=int(outcome.get("position") or 0),
                    output=_text(entry.get("output")),
                    reasoning=_text(entry.get("reasoning")),
                    calls=_calls(calls),
                )
            )
        return found
    found = []
    for judged in groups:
        key, first = min(
            judged.items(), key=lambda call: (_number(call[1].get("sample")) or 0, str(call[1].get("step")), call[0])
        )
        scores = [score for score in (_number(entry.get("score")) for entry in judged.values()) if score is not None]
        found.append(
            Judgment(
                test=test,
                key=key,
                keys=frozenset(judged),
                criteria=str(first.get("criteria", "")),
                rubric=str(first.get("rubric") or "score"),
                score=math.fsum(scores) / len(scores) if scores else None,
                verdict=first.get("verdict") if len(judged) == 1 else None,
                run=_whole(first.get("run")),
                output=_text(first.get("output")),
                reasoning=_text(first.get("reasoning")),
                calls=_calls(judged),
            )
        )
    return found


def _add(side: Side, document: VerdictDocument, where: str) -> None:
    test = document.test or where
    side[where] = StoredTest(where, test, judgments_of(document, test))


def worktree_side(repo: Repository, paths: Sequence[str]) -> Side:
    """Every judgment in the verdict files under `paths` (repository paths; none: the whole repository) on disk."""
    side: Side = {}
    roots = [repo.root / path for path in paths] if paths else [repo.root]
    present = [root for root in roots if root.exists()]  # a path gone from the work tree: removed there
    try:
        for path in find_verdict_files(present) if present else []:
            _add(side, VerdictDocument.read(path), path.relative_to(repo.root).as_posix())
    except FileNotFoundError as exc:  # removed while being read
        raise StoreError(f"{exc.filename}: no such file or directory") from None
    return side


def revision_side(repo: Repository, commit: str, label: str, paths: Sequence[str]) -> Side:
    """Every judgment in the verdict files under `paths` at `commit` (named `label` in errors), read in bulk.

    A file is taken as the working tree's walk takes it: any `*.json` inside a `judge_verdicts` folder, and
    elsewhere a JSON file that starts as a verdict file does, outside the folders a walk skips (a committed
    virtual environment or cache, known by its `pyvenv.cfg` or `CACHEDIR.TAG`); a file named is taken as
    given.  A path named that is neither in the working tree nor at `commit` is a GitError."""
    listed = repo.files(commit, paths)
    for path in paths:
        if not (repo.root / path).exists() and not any(_under(blob.path, path) for blob in listed):
            raise GitError(f"{path}: no such file or directory, in the working tree or at {label}")
    skipped = {str(PurePosixPath(b.path).parent) for b in listed if PurePosixPath(b.path).name in _MARKERS}
    wanted = []
    for blob in listed:
        parts = PurePosixPath(blob.path).parts
        named = blob.path in paths
        if not named and (skipped_path(parts) or any(_under(blob.path, folder) for folder in skipped)):
            continue
        sure = named or VERDICTS_DIR in parts[:-1]  # a verdict file by where it is, not by its first bytes
        if blob.mode == "120000" or blob.size > MAX_FILE_BYTES:
            if sure:
                why = (
                    "a symbolic link"
                    if blob.mode == "120000"
                    else f"{blob.size} bytes, over the limit of {MAX_FILE_BYTES}"
                )
                raise StoreError(f"{label}:{blob.path}: refused to read the verdict file: {why}")
            continue
        wanted.append((blob, sure))
    side: Side = {}
    for (blob, sure), data in zip(wanted, repo.read([blob for blob, _ in wanted]), strict=True):
        if sure or starts_like_verdict_file(data):
            _add(side, VerdictDocument.parse(f"{label}:{blob.path}", data), blob.path)
    return side


_MARKERS = ("pyvenv.cfg", "CACHEDIR.TAG")  # what marks a folder every walk skips


def _under(path: str, folder: str) -> bool:
    return folder in ("", ".") or path == folder or path.startswith(folder.rstrip("/") + "/")
