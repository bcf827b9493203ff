"""How far a judge agrees with human labels: pure functions over (human label, judge score) pairs.

The judge passes an example when `score >= threshold`, as in a judged assertion.  Pass is the
positive class of the confusion matrix.  Pass/fail labels give accuracy and Cohen's kappa; score
labels give Spearman's rho, and are also read as pass/fail at the same threshold (a human score
`>= threshold` is a pass) so that both kinds get a confusion matrix, kappa and a best threshold.
Nothing here reads files or calls a judge; `calibrate` gathers every figure into one result.  The
confusion table and kappa are the project's one definition in `..stats`, re-exported here.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import StatisticsError, correlation
from typing import Any

from ..stats import Confusion, Kappa, cohen_kappa

__all__ = [
    "CalibrationResult",
    "Confusion",
    "CriteriaFigures",
    "Disagreement",
    "Judged",
    "Kappa",
    "average_ranks",
    "best_threshold",
    "calibrate",
    "candidate_thresholds",
    "cohen_kappa",
    "confusion",
    "spearman",
]


def _check_score(score: float, name: str = "judge score") -> float:
    # A judge score outside [0, 1] is a bug upstream; figures computed from it would mislead.
    if isinstance(score, bool) or not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {score!r}")
    return float(score)


def _finite(value: float) -> float:
    # NaN compares unequal to itself and would corrupt the ranks silently.
    if isinstance(value, bool) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value!r}")
    return float(value)


def confusion(pairs: Sequence[tuple[bool, float]], threshold: float) -> Confusion:
    """Count (human passed, judge score) pairs; the judge passes when `score >= threshold`."""
    cells = Counter((bool(human), _check_score(score) >= threshold) for human, score in pairs)  # (human, judge)
    return Confusion(tp=cells[True, True], fp=cells[False, True], tn=cells[False, False], fn=cells[True, False])


def candidate_thresholds(scores: Sequence[float], configured: float | None = None) -> list[float]:
    """Every threshold that gives a different split of `scores`: 0, 1, and the midpoints between
    consecutive distinct scores; plus `configured`, so that it wins a tie it is part of.  Sorted."""
    distinct = sorted({_check_score(s) for s in scores})
    candidates = {0.0, 1.0}
    candidates.update((a + b) / 2.0 for a, b in itertools.pairwise(distinct))
    if configured is not None:
        candidates.add(float(configured))
    return sorted(candidates)


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold that maximizes accuracy, and that accuracy."""

    threshold: float
    accuracy: float


def best_threshold(pairs: Sequence[tuple[bool, float]], configured: float) -> ThresholdChoice | None:
    """The threshold among `candidate_thresholds` with the highest accuracy; None when there are no pairs.

    Ties go to the candidate closest to `configured` (the configured threshold itself when it is
    as good as any: no advice to move a threshold that is already best), then to the lower one.
    """
    if not pairs:
        return None
    tried = [(confusion(pairs, t).accuracy or 0.0, t) for t in candidate_thresholds([s for _, s in pairs], configured)]
    accuracy, threshold = min(tried, key=lambda tried: (-tried[0], abs(tried[1] - configured), tried[1]))
    return ThresholdChoice(threshold=threshold, accuracy=accuracy)


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks of `values`, tied values sharing the mean of the ranks they span."""
    ranks = [0.0] * len(values)
    start = 0  # the ranks before this run of ties
    for _, run in itertools.groupby(sorted(range(len(values)), key=values.__getitem__), key=values.__getitem__):
        tied = list(run)
        for index in tied:
            ranks[index] = start + (len(tied) + 1) / 2.0  # mean of the ranks start+1 .. start+len(tied)
        start += len(tied)
    return ranks


def spearman(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Spearman's rho: Pearson's correlation of the average ranks (exact with ties, unlike
    1 - 6 sum d^2 / (n (n^2 - 1))).  None with fewer than 2 pairs or when either side is constant."""
    if len(pairs) < 2:
        return None
    try:
        rho = correlation(average_ranks([_finite(x) for x, _ in pairs]), average_ranks([_finite(y) for _, y in pairs]))
    except StatisticsError:  # a constant side
        return None
    # Clamp: rounding can push a perfect correlation a hair past 1.
    return max(-1.0, min(1.0, rho))


@dataclass(frozen=True)
class Judged:
    """One labelled example and the judge's score for it (the input of `calibrate`).

    `label` is a bool for pass/fail labels and a float in [0, 1] for score labels.
    """

    id: str
    criteria: str
    label: bool | float
    score: float
    reasoning: str | None = None


@dataclass(frozen=True)
class Disagreement:
    """An example where the judge's decision differs from the human's.  `gap` = |label - score|."""

    id: str
    criteria: str
    label: bool | float
    score: float
    gap: float
    reasoning: str | None = None

    def to_json(self) -> dict[str, Any]:
        label = ("pass" if self.label else "fail") if isinstance(self.label, bool) else self.label
        return {**asdict(self), "label": label}


@dataclass(frozen=True)
class CriteriaFigures:
    """The figures of the examples that share one criteria text."""

    criteria: str
    n: int
    confusion: Confusion
    accuracy: float | None
    kappa: Kappa
    spearman: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "criteria": self.criteria,
            "n": self.n,
            "accuracy": self.accuracy,
            "kappa": self.kappa.value,
            "kappa_ci": list(self.kappa.ci) if self.kappa.ci else None,
            "confusion": asdict(self.confusion),
            "spearman": self.spearman,
        }


@dataclass(frozen=True)
class CalibrationResult:
    """Every figure of one calibration run.  `kind` is "pass/fail", "score", or None when n = 0."""

    n: int
    kind: str | None
    threshold: float
    confusion: Confusion
    accuracy: float | None
    kappa: Kappa
    best_threshold: float | None
    accuracy_at_best: float | None
    spearman: float | None
    per_criteria: tuple[CriteriaFigures, ...]
    disagreements: tuple[Disagreement, ...]

    def to_json(self) -> dict[str, Any]:
        """The figures as one JSON-ready dict (json.dumps it as is)."""
        return {
            "n": self.n,
            "kind": self.kind,
            "threshold": self.threshold,
            "accuracy": self.accuracy,
            "kappa": self.kappa.value,
            "kappa_se": self.kappa.se,
            "kappa_ci": list(self.kappa.ci) if self.kappa.ci else None,
            "kappa_note": self.kappa.note,
            "confusion": asdict(self.confusion),
            "best_threshold": self.best_threshold,
            "accuracy_at_best": self.accuracy_at_best,
            "spearman": self.spearman,
            "per_criteria": [figures.to_json() for figures in self.per_criteria],
            "disagreements": [item.to_json() for item in self.disagreements],
        }


def calibrate(items: Sequence[Judged], threshold: float) -> CalibrationResult:
    """Every figure for judged, labelled examples at the configured `threshold`.

    Disagreements are the examples whose pass/fail decisions differ (judge `score >= threshold`,
    human pass or score `>= threshold`), worst first: largest |label - score| (a pass label counts
    as 1, a fail as 0), then input order.  Raises ValueError on mixed label kinds or a bad score.
    """
    threshold = _check_score(threshold, "threshold")
    kinds = {"pass/fail" if isinstance(item.label, bool) else "score" for item in items}
    if len(kinds) > 1:
        raise ValueError("labels mix pass/fail and scores; calibrate one kind at a time")
    kind = kinds.pop() if kinds else None
    # A score label is a pass at the same bar the judge's score must clear.
    humans = [item.label if isinstance(item.label, bool) else item.label >= threshold for item in items]
    pairs = [(human, _check_score(item.score)) for human, item in zip(humans, items, strict=True)]
    table = confusion(pairs, threshold)
    best = best_threshold(pairs, threshold)
    rho = spearman([(float(item.label), item.score) for item in items]) if kind == "score" else None

    groups: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(item.criteria, []).append(index)
    per_criteria = []
    for text, indexes in groups.items():  # in order of first appearance, as in the labels file
        group_table = confusion([pairs[i] for i in indexes], threshold)
        group_rho = spearman([(float(items[i].label), items[i].score) for i in indexes]) if kind == "score" else None
        per_criteria.append(
            CriteriaFigures(
                criteria=text,
                n=len(indexes),
                confusion=group_table,
                accuracy=group_table.accuracy,
                kappa=cohen_kappa(group_table),
                spearman=group_rho,
            )
        )

    wrong = [
        Disagreement(
            id=item.id,
            criteria=item.criteria,
            label=item.label,
            score=item.score,
            gap=abs(float(item.label) - item.score),
            reasoning=item.reasoning,
        )
        for item, (human, score) in zip(items, pairs, strict=True)
        if human != (score >= threshold)
    ]
    wrong.sort(key=lambda d: -d.gap)  # stable: equal gaps keep input order

    return CalibrationResult(
        n=len(items),
        kind=kind,
        threshold=threshold,
        confusion=table,
        accuracy=table.accuracy,
        kappa=cohen_kappa(table),
        best_threshold=best.threshold if best else None,
        accuracy_at_best=best.accuracy if best else None,
        spearman=rho,
        per_criteria=tuple(per_criteria),
        disagreements=tuple(wrong),
    )
