"""Calibration: how far the judge agrees with human labels.

`labels` reads labelled examples (JSONL, CSV or rows); `stats` computes the figures (accuracy,
Cohen's kappa with its interval, Spearman's rho, the best threshold, per-criteria figures and the
disagreements) from the human labels and the judge's scores.
"""

from __future__ import annotations

from .assertion import CalibrationFailed, assert_judge_agrees
from .examples import CalibrationError, LabelKind, LabelledExample, load_examples, parse_label
from .runner import ExampleError, run_calibration
from .stats import (
    CalibrationResult,
    Confusion,
    CriteriaFigures,
    Disagreement,
    Judged,
    Kappa,
    ThresholdChoice,
    average_ranks,
    best_threshold,
    calibrate,
    candidate_thresholds,
    cohen_kappa,
    confusion,
    spearman,
)

__all__ = [
    "CalibrationError",
    "CalibrationFailed",
    "CalibrationResult",
    "Confusion",
    "CriteriaFigures",
    "Disagreement",
    "ExampleError",
    "Judged",
    "Kappa",
    "LabelKind",
    "LabelledExample",
    "ThresholdChoice",
    "assert_judge_agrees",
    "average_ranks",
    "best_threshold",
    "calibrate",
    "candidate_thresholds",
    "cohen_kappa",
    "confusion",
    "load_examples",
    "parse_label",
    "run_calibration",
    "spearman",
]
