"""Combine several outcomes of one judgment (samples of one model, or a panel of models).

Each outcome already went through its rubric; here they become one score with figures that say
how much the judges agreed: the spread of the scores and the share that agrees with the final
pass/fail.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

AGGREGATES = ("mean", "majority", "median", "min")


@dataclass(frozen=True)
class Combined:
    score: float
    agreement: float  # share of the outcomes whose pass/fail matches the combined one
    spread: float  # max - min of the scores


def combine_scores(scores: Sequence[float], threshold: float, method: str = "mean") -> Combined:
    """One score from several: mean, median, min, or majority (the mean of the winning side)."""
    if not scores:
        raise ValueError("nothing to combine")
    if method == "mean":
        score = statistics.fmean(scores)
    elif method == "median":
        score = statistics.median(scores)
    elif method == "min":
        score = min(scores)
    elif method == "majority":
        passing = [s for s in scores if s >= threshold]
        failing = [s for s in scores if s < threshold]
        # A tie goes to failing: a judgment must earn its pass.
        side = passing if len(passing) > len(failing) else failing
        score = statistics.fmean(side)
    else:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {method!r}")
    score = round(min(1.0, max(0.0, score)), 6)
    passed = score >= threshold
    agreement = sum((s >= threshold) == passed for s in scores) / len(scores)
    return Combined(score=score, agreement=round(agreement, 6), spread=round(max(scores) - min(scores), 6))


def undecided(scores: Sequence[float], combined: float, threshold: float, band: float) -> bool:
    """Is a judgment too close to call?  Both must hold:

    * the combined score lies within `band` of the threshold (inclusive), and
    * the samples disagree: at least one is on each side of the threshold.

    One sample, or samples that all agree, are never undecided: unanimity near the threshold is
    still a decision, and a band alone would turn every borderline single call into a failure.
    """
    if band <= 0 or len(scores) < 2:
        return False
    sides = {s >= threshold for s in scores}
    return len(sides) > 1 and abs(combined - threshold) <= band + 1e-9
