"""The two sides of a diff: every judgment stored at a git revision, and every one in the working tree.

Both sides are read through the store's one reader (`VerdictDocument.parse`), so a file at a revision is
checked exactly as a file on disk: bounded, parsed as JSON, never executed.  A side is the judgments
of each test, by the test's node id (the verdict file's path where it names none).

A judgment is what the verdict file's "outcomes" say it decided (see `store.outcomes`).  A file
written before outcomes were kept has only its entries: each judgment is then the entries that share
a case (several calls of one judgment) or one entry, its score the mean of their stored scores, with
no threshold (so no pass or fail): what its entries say, and no more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..errors import StoreError
from ..store.finder import VERDICTS_DIR, find_verdict_files, skipped_path, starts_like_verdict_file
from ..store.verdict_file import MAX_FILE_BYTES, VerdictDocument
from .git import GitError, Repository

__all__ = ["Judgment", "Side", "judgments_of", "revision_side", "worktree_side"]


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


Side = dict[str, list[Judgment]]  # test -> its judgments


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


def judgments_of(document: VerdictDocument, test: str) -> list[Judgment]:
    """The judgments one verdict file holds (see the module docstring)."""
    entries = document.entries
    outcomes = document.outcomes
    if outcomes:
        found = []
        for key, outcome in sorted(outcomes.items()):
            entry = entries.get(key, {})
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
                )
            )
        return found
    calls: dict[tuple[str, str], list[tuple[str, Mapping[str, Any]]]] = {}
    for key, entry in sorted(entries.items()):
        case = entry.get("case")
        rubric = str(entry.get("rubric") or "score")
        calls.setdefault((case if isinstance(case, str) else key, rubric), []).append((key, entry))
    found = []
    for (_, rubric), judged in calls.items():
        key, first = min(
            judged, key=lambda call: (_number(call[1].get("sample")) or 0, str(call[1].get("step")), call[0])
        )
        scores = [score for score in (_number(entry.get("score")) for _, entry in judged) if score is not None]
        found.append(
            Judgment(
                test=test,
                key=key,
                keys=frozenset(k for k, _ in judged),
                criteria=str(first.get("criteria", "")),
                rubric=rubric,
                score=math.fsum(scores) / len(scores) if scores else None,
                verdict=first.get("verdict") if len(judged) == 1 else None,
                output=_text(first.get("output")),
                reasoning=_text(first.get("reasoning")),
            )
        )
    return found


def _add(side: Side, document: VerdictDocument, where: str) -> None:
    test = document.test or where
    side.setdefault(test, []).extend(judgments_of(document, test))


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
