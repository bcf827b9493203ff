"""Combine several outcomes of one judgment (samples of one model, or a panel of models).

Each outcome already went through its rubric; here they become one score with figures that say
how much the judges agreed: the spread of the scores and the share that agrees with the final
pass/fail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

AGGREGATES = ("mean", "majority", "median", "min")


def combine_scores(scores: Sequence[float], threshold: float, method: str = "mean") -> float:
    """One score from several: mean, median, min, or majority (the mean of the winning side)."""
    if not scores:
        raise ValueError("nothing to combine")
    if method == "mean":
        score = math.fsum(scores) / len(scores)  # statistics.fmean, without importing statistics on every replay
    elif method == "median":
        import statistics

        score = statistics.median(scores)
    elif method == "min":
        score = min(scores)
    elif method == "majority":
        passing = [s for s in scores if s >= threshold]
        failing = [s for s in scores if s < threshold]
        # A tie goes to failing: a judgment must earn its pass.
        side = passing if len(passing) > len(failing) else failing
        score = math.fsum(side) / len(side)
    else:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {method!r}")
    return round(min(1.0, max(0.0, score)), 6)


@dataclass(frozen=True)
class Combined:
    """Every sample of every judge model, combined into one score."""

    score: float
    per_model: dict[str, float]  # each model's samples combined
    agreement: float | None  # share of all samples whose pass/fail matches the combined score (None: one sample)
    spread: float | None  # max - min of all sample scores (None: one sample)


def combine_panel(per_model: Mapping[str, Sequence[float]], threshold: float, method: str = "mean") -> Combined:
    """Each model's samples first, then the panel: a model judging five times outvotes no one."""
    everyone = [score for scores in per_model.values() for score in scores]
    if len(everyone) == 1:
        (model,) = per_model
        return Combined(round(everyone[0], 6), {model: everyone[0]}, None, None)
    model_scores = {model: combine_scores(scores, threshold, method) for model, scores in per_model.items()}
    combined = list(model_scores.values())
    score = combine_scores(combined, threshold, method) if len(combined) > 1 else combined[0]
    passed = score >= threshold
    agreement = round(sum((s >= threshold) == passed for s in everyone) / len(everyone), 6)
    return Combined(score, model_scores, agreement, round(max(everyone) - min(everyone), 6))


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
