"""What changed between two sides: each judgment paired with its other side, and pass rates per test and group.

Tests pair by their verdict file: the same path on both sides (the test id decides the path, so a file
whose recorded id changed, as when the rootdir moved, still pairs); of the rest, the same recorded test
id, where exactly one file on each side has it (a file moved elsewhere).  What is left is a test added or
removed whole.

Judgments pair, per test (a changed output changes a judgment's key, so the key alone cannot pair it):

1. the same key on both sides is the same judgment (its output, criteria and judge unchanged);
2. of the rest, judgments of the same criteria, rubric, run and position (the order the run made its
   judgments of that criteria and rubric in) pair, where exactly one on each side has them;
3. of the rest, judgments of the same criteria, rubric and run pair where exactly one is left on each side
   (a file written before outcomes were kept knows no position).

What is left is added (after only) or removed (before only).  A paired judgment went from pass to fail
("regressed") or back ("improved") where both sides have a threshold; else it "changed" (another output,
score, threshold or verdict; where a side was read from entries alone, another output or score) or is
"unchanged".  Where a side was read from entries alone, a judgment whose calls (keys and replies) are
the same on both sides is unchanged: nothing was judged again, only its decision recorded (or dropped).

Pass rates, per test and per gated group (the `group` of a judgment's outcome): passed / judgments with a
threshold on each side, each with its Wilson interval, and the exact McNemar test on the paired flips
(`stats.mcnemar_exact`): whether the flips are more than noise at p < 0.05.

A regression, for `--fail-on regression`: a judgment outside any gated group went from pass to fail, or a
group's pass rate dropped significantly (more pass-to-fail than fail-to-pass flips, p < 0.05).  A judgment
inside a gated group is decided by its group's gate, so its flip alone is not one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from ..stats import Interval, McNemar, mcnemar_exact, wilson
from .sides import Judgment, Side, StoredTest

__all__ = ["ALPHA", "Change", "DiffResult", "Rate", "compare"]

ALPHA = 0.05  # a change in a pass rate is more than noise when the exact McNemar p is below this

Status = Literal["regressed", "improved", "changed", "unchanged", "added", "removed"]
# How a report orders the kinds of change: what needs a reviewer first.
STATUS_ORDER: tuple[Status, ...] = ("regressed", "improved", "changed", "added", "removed", "unchanged")


@dataclass(frozen=True)
class Change:
    """One judgment of one test, before and after (None: absent on that side)."""

    test: str
    before: Judgment | None
    after: Judgment | None

    @property
    def status(self) -> Status:
        before, after = self.before, self.after
        if before is None:
            return "added"
        if after is None:
            return "removed"
        if before.passed is not None and after.passed is not None and before.passed != after.passed:
            return "improved" if after.passed else "regressed"
        entries_only = before.position is None or after.position is None  # a side knows its entries only
        if entries_only and before.calls and before.calls == after.calls:  # the same calls, the same replies
            return "unchanged"
        same = bool(before.keys & after.keys) and _same_number(before.score, after.score)
        if before.position is not None and after.position is not None:  # both sides know what was decided
            same = same and (
                _same_number(before.threshold, after.threshold)
                and before.passed == after.passed
                and before.verdict == after.verdict
            )
        return "unchanged" if same else "changed"

    @property
    def now_recorded(self) -> bool:
        """Unchanged, and its decision recorded only after (the base's file was written before outcomes were)."""
        before, after = self.before, self.after
        return (
            before is not None
            and after is not None
            and before.position is None
            and after.position is not None
            and self.status == "unchanged"
        )

    @property
    def judgment(self) -> Judgment:
        """The side that describes it: after, else before."""
        found = self.after or self.before
        assert found is not None
        return found

    @property
    def group(self) -> str | None:
        return self.judgment.group


def _same_number(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-9)


@dataclass(frozen=True)
class Rate:
    """The pass rate of a test or a gated group on each side, and the paired test on its flips."""

    name: str
    before: Interval
    after: Interval
    before_counts: tuple[int, int]  # passed, judgments with a threshold
    after_counts: tuple[int, int]
    flips: McNemar  # worse: pass to fail, better: fail to pass

    @property
    def significant(self) -> bool:
        return self.flips.significant(ALPHA)

    @property
    def dropped(self) -> bool:
        """The rate dropped by more than noise: more flips to fail than to pass, p below `ALPHA`."""
        return self.significant and self.flips.worse > self.flips.better


def _rate(name: str, changes: Sequence[Change]) -> Rate:
    def counts(side: Iterable[Judgment | None]) -> tuple[int, int]:
        decided = [j.passed for j in side if j is not None and j.passed is not None]
        return sum(decided), len(decided)

    before = counts(c.before for c in changes)
    after = counts(c.after for c in changes)
    statuses = [c.status for c in changes]
    flips = mcnemar_exact(statuses.count("regressed"), statuses.count("improved"))
    return Rate(name, wilson(*before), wilson(*after), before, after, flips)


@dataclass
class DiffResult:
    """Every judgment's change, and the rates of the tests that changed and of every gated group."""

    base: str  # how the base side is named (the revision as given, or how it was chosen)
    base_commit: str
    changes: list[Change] = field(default_factory=list)
    tests: list[Rate] = field(default_factory=list)
    groups: list[Rate] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(c.status == status for c in self.changes)

    @property
    def now_recorded(self) -> int:
        """Unchanged judgments whose decision the base did not record (see `Change.now_recorded`)."""
        return sum(c.now_recorded for c in self.changes)

    @property
    def changed(self) -> list[Change]:
        """Every change but the unchanged, in the order a reviewer reads them."""
        moved = [c for c in self.changes if c.status != "unchanged"]
        return sorted(moved, key=lambda c: (STATUS_ORDER.index(c.status), c.test, _order(c.judgment)))

    def regressions(self) -> list[str]:
        """What `--fail-on regression` fails on, one line each (see the module docstring)."""
        found = [
            f"{c.test}: {c.judgment.criteria!r} went from pass to fail"
            for c in self.changes
            if c.status == "regressed" and c.group is None
        ]
        found += [
            f"group {g.name}: pass rate dropped from {g.before.estimate:.0%} to {g.after.estimate:.0%} "
            f"(exact McNemar p = {g.flips.p_value:.3g})"
            for g in self.groups
            if g.dropped
        ]
        return found


def _order(judgment: Judgment) -> tuple[str, str, int, int]:
    return (judgment.criteria, judgment.rubric, judgment.run, judgment.position or 0)


def compare(before: Side, after: Side, *, base: str, base_commit: str) -> DiffResult:
    """Pair every test's judgments of the two sides, and compute the rates (see the module docstring)."""
    result = DiffResult(base, base_commit)
    for old, new in pair_tests(before, after):
        test = _newer((old, new)).test
        judged = pair(old.judgments if old else [], new.judgments if new else [])
        changes = [Change(test, b, a) for b, a in judged]
        result.changes.extend(changes)
        if any(c.status != "unchanged" for c in changes):
            result.tests.append(_rate(test, changes))
    grouped: dict[str, list[Change]] = {}
    for change in result.changes:
        for side in (change.before, change.after):
            if side is not None and side.group is not None:
                grouped.setdefault(side.group, [])
                if change not in grouped[side.group]:
                    grouped[side.group].append(change)
    result.groups = [_rate(name, changes) for name, changes in sorted(grouped.items())]
    return result


def pair_tests(before: Side, after: Side) -> list[tuple[StoredTest | None, StoredTest | None]]:
    """Each verdict file of one side with its other side's (see the module docstring), by test id and path."""
    pairs: list[tuple[StoredTest | None, StoredTest | None]] = [
        (stored, after[path]) for path, stored in before.items() if path in after
    ]
    left = [stored for path, stored in before.items() if path not in after]
    right = [stored for path, stored in after.items() if path not in before]
    left, right = _pair_unique(left, right, lambda stored: stored.test, pairs)
    pairs += [(stored, None) for stored in left] + [(None, stored) for stored in right]
    return sorted(pairs, key=lambda p: (_newer(p).test, _newer(p).path))


def _newer(files: tuple[StoredTest | None, StoredTest | None]) -> StoredTest:
    """The side of a pair of verdict files that names the test: after, else before."""
    found = files[1] or files[0]
    assert found is not None
    return found


def pair(before: Sequence[Judgment], after: Sequence[Judgment]) -> list[tuple[Judgment | None, Judgment | None]]:
    """Each judgment of one test with its other side (see the module docstring), in a stable order."""
    pairs: list[tuple[Judgment | None, Judgment | None]] = []
    by_key: dict[str, int] = {}
    for index, judgment in enumerate(after):
        for key in judgment.keys:
            by_key.setdefault(key, index)
    taken: set[int] = set()
    left: list[Judgment] = []
    for judgment in before:
        found = next((by_key[k] for k in sorted(judgment.keys) if k in by_key and by_key[k] not in taken), None)
        if found is None:
            left.append(judgment)
        else:
            taken.add(found)
            pairs.append((judgment, after[found]))
    right = [j for i, j in enumerate(after) if i not in taken]
    for by in (_signature, _equals):
        left, right = _pair_unique(left, right, by, pairs)
    pairs += [(j, None) for j in left] + [(None, j) for j in right]
    return sorted(pairs, key=lambda p: _order(p[1] or p[0]))  # type: ignore[arg-type]


def _signature(judgment: Judgment) -> Hashable:
    return (judgment.criteria, judgment.rubric, judgment.run, judgment.position)


def _equals(judgment: Judgment) -> Hashable:
    return (judgment.criteria, judgment.rubric, judgment.run)


Paired = TypeVar("Paired", Judgment, StoredTest)


def _pair_unique(
    left: list[Paired],
    right: list[Paired],
    by: Callable[[Paired], Hashable],
    pairs: list[tuple[Paired | None, Paired | None]],
) -> tuple[list[Paired], list[Paired]]:
    """Pair what `by` names alike where exactly one on each side has it; return what is left on each side."""
    lefts: dict[Hashable, list[Paired]] = {}
    rights: dict[Hashable, list[Paired]] = {}
    for judgment in left:
        lefts.setdefault(by(judgment), []).append(judgment)
    for judgment in right:
        rights.setdefault(by(judgment), []).append(judgment)
    paired: set[int] = set()
    for name, ones in lefts.items():
        others = rights.get(name, [])
        if len(ones) == 1 and len(others) == 1:
            pairs.append((ones[0], others[0]))
            paired.update((id(ones[0]), id(others[0])))
    return [j for j in left if id(j) not in paired], [j for j in right if id(j) not in paired]
