"""The decision on each gated group, made where every test's report arrives: the session of a plain run,
the controller of an xdist run.  Pure: the cases' outcomes (`CaseRecord`, riding on the tests' reports)
and the tests' outcomes in, one `GateResult` per group out, the same whichever worker ran which case.

A case counts when its test passed: a judgment failure no longer fails a gated test alone, so a test that
failed did so on its own (a crash in the app, a replay miss) and fails the run anyway; a skipped test is
not a case of this run.  A test that made no judgment is named and not counted; a group with no judged
case fails its gate (a gate that has nothing to decide on never passes silently).

- `pass_rate=R`: k of n counted cases passed; the gate passes when k / n >= R.  With `confidence=C` it
  passes when the lower bound of the Wilson score interval of k / n at level C is >= R: the rate is then
  above R with that confidence (one-sided at (1 + C) / 2), not only in this draw of the cases.
- `mean_score=S`: the mean of the counted cases' scores (each case's mean over its judgments); with
  `confidence=C`, the lower bound of its Student-t interval at level C (`stats.mean_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ..stats import Interval, mean_interval, wilson
from .repeat import CaseRecord

SHOWN_CONFIDENCE = 0.95  # the interval a gate without confidence= shows beside its estimate


class CaseRow(NamedTuple):
    """One case of a group as its decision saw it."""

    nodeid: str
    status: str  # "passed", "failed", "no judgment" (not counted), or the test's outcome: "failed on its own", ...
    score: float | None  # the mean of its judgments' scores
    failures: tuple[str, ...]  # why a failed case failed: its judgment failures' (or runs') texts


# A counted case's status; any other is not counted.
PASSED, FAILED, NO_JUDGMENT = "passed", "failed", "no judgment"


@dataclass(frozen=True)
class GateResult:
    """One group's decision: its cases, its rate (and mean score) with their intervals, and why it failed."""

    group: str
    gate: Mapping[str, float]  # pass_rate, mean_score, confidence: those set
    rows: tuple[CaseRow, ...]  # every case of the group that reported, in node id order
    rate: Interval  # Wilson, at the gate's confidence (else SHOWN_CONFIDENCE)
    mean: Interval | None  # the mean score's Student-t interval, for a mean_score gate
    partial: bool  # part of the group did not run here (-k, -m, a shard): the gate saw the part that did
    reasons: tuple[str, ...] = ()  # what failed: "no cases", "pass_rate", "mean_score"; empty: it passed

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def confidence(self) -> float | None:
        return self.gate.get("confidence")

    @property
    def cases(self) -> int:
        """Judged cases counted."""
        return sum(row.status in (PASSED, FAILED) for row in self.rows)

    @property
    def passed_cases(self) -> int:
        return sum(row.status == PASSED for row in self.rows)

    def with_status(self, *statuses: str) -> list[CaseRow]:
        return [row for row in self.rows if row.status in statuses]

    @property
    def not_counted(self) -> list[CaseRow]:
        """Cases whose test made no judgment, failed on its own or did not pass otherwise (skipped, xfailed)."""
        return [row for row in self.rows if row.status not in (PASSED, FAILED)]


def decide(
    cases: Mapping[str, CaseRecord], outcomes: Mapping[str, str], not_run: Collection[str] = ()
) -> list[GateResult]:
    """Every group's decision, groups and cases in node id order (the same in any xdist run).

    `cases`: each gated test's case by its node id as pytest has it (a case's own `nodeid` is redacted,
    for showing); `outcomes`: each test's outcome by node id (its worst phase's); `not_run`: node ids
    collected and not run here, which make a group `partial` where they fall in it."""
    groups: dict[str, list[tuple[str, CaseRecord]]] = {}
    for nodeid, case in cases.items():
        groups.setdefault(str(case.get("group", "")), []).append((nodeid, case))
    return [_decide(group, groups[group], outcomes, not_run) for group in sorted(groups)]


def _decide(
    group: str, cases: list[tuple[str, CaseRecord]], outcomes: Mapping[str, str], not_run: Collection[str]
) -> GateResult:
    rows = []
    for nodeid, case in sorted(cases, key=lambda pair: pair[0]):
        outcome = outcomes.get(nodeid, "unknown")
        score = case.get("score")
        if outcome != "passed":  # failed on its own (the judgments' failures do not fail a gated test), skipped
            status = f"{outcome} (not counted)" if outcome != "failed" else "failed on its own (not counted)"
        elif not case.get("judged"):
            status = NO_JUDGMENT
        else:
            status = PASSED if case.get("passed") else FAILED
        failures = tuple(str(t) for t in case.get("failures") or ()) if status == FAILED else ()
        shown = str(case.get("nodeid", nodeid))
        rows.append(CaseRow(shown, status, float(score) if isinstance(score, (int, float)) else None, failures))
    gate = dict(cases[0][1].get("gate") or {})
    counted = [row for row in rows if row.status in (PASSED, FAILED)]
    n, k = len(counted), sum(row.status == PASSED for row in counted)
    confidence = gate.get("confidence")
    rate = wilson(k, n, confidence or SHOWN_CONFIDENCE)
    scores = [row.score for row in counted if row.score is not None]
    mean = mean_interval(scores, confidence or SHOWN_CONFIDENCE) if "mean_score" in gate else None
    reasons = []
    if not n:
        reasons.append("no cases")
    else:
        pass_rate = gate.get("pass_rate")
        if pass_rate is not None and (rate.low if confidence else k / n) < pass_rate - 1e-12:
            reasons.append("pass_rate")
        mean_score = gate.get("mean_score")
        if (
            mean is not None
            and mean_score is not None
            and (not scores or (mean.low if confidence else mean.estimate) < mean_score - 1e-12)
        ):
            reasons.append("mean_score")
    return GateResult(
        group=group,
        gate=gate,
        rows=tuple(rows),
        rate=rate,
        mean=mean,
        partial=any(_in_group(nodeid, group) for nodeid in not_run),
        reasons=tuple(reasons),
    )


def _in_group(nodeid: str, group: str) -> bool:
    """Whether a node id falls under a group's node (its module, class, or function's parametrized cases)."""
    if not group:
        return False
    if nodeid.startswith(group + "::") or nodeid.startswith(group + "["):
        return True
    return "::" not in group and not group.endswith(".py") and nodeid.startswith(group.rstrip("/") + "/")


def cases_needed(pass_rate: float, n: int, confidence: float) -> int | None:
    """The fewest passing cases of `n` that clear `pass_rate` at `confidence` (the Wilson lower bound), or
    None where even n of n do not: what a gate's failure says it would have taken."""
    for k in range(max(0, math.floor(pass_rate * n)), n + 1):
        if wilson(k, n, confidence).low >= pass_rate - 1e-12:
            return k
    return None
