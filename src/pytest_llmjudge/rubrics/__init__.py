"""Rubric kinds: how a judgment is asked for, and how the judge's replies become one outcome.

`base` holds the contract (the `Rubric` ABC, `Prompt`, `Reply`, `Outcome`) and the registry of
kinds by name; each kind is one module: `Score` (the default, 0-1), `PassFail` (verdict and
confidence -> table), `Likert` (integer scale, optionally weighted by token log-probabilities),
`Dimensions` (weighted per-dimension scores), `Checklist` (PASS/FAIL per constraint), `Questions`
(one call per question), `Template` (your own prompt) and `Pairwise` (both orders of a comparison).
Importing this package registers every kind.  `stored` decides a stored reply's score, the same
way for replay and for `llmjudge reparse`.
"""

from __future__ import annotations

from .base import (
    Outcome,
    Prompt,
    Reply,
    Rubric,
    RubricError,
    RubricParse,
    register_rubric,
    resolve_rubric,
    rubric_kinds,
)
from .checklist import Checklist
from .dimensions import DIMENSION_DESCRIPTIONS, DIMENSION_WEIGHTS, QUALITY_LABELS, Dimensions
from .likert import Likert, score_distribution
from .pairwise import Comparison, OrderResult, Pairwise, comparison_from
from .passfail import PASS_FAIL_SCORES, PassFail
from .questions import Questions
from .score import Score
from .stored import read_reply, rebuild_stored, score_stored
from .template import Template

__all__ = [
    "DIMENSION_DESCRIPTIONS",
    "DIMENSION_WEIGHTS",
    "PASS_FAIL_SCORES",
    "QUALITY_LABELS",
    "Checklist",
    "Comparison",
    "Dimensions",
    "Likert",
    "OrderResult",
    "Outcome",
    "Pairwise",
    "PassFail",
    "Prompt",
    "Questions",
    "Reply",
    "Rubric",
    "RubricError",
    "RubricParse",
    "Score",
    "Template",
    "comparison_from",
    "read_reply",
    "rebuild_stored",
    "register_rubric",
    "resolve_rubric",
    "rubric_kinds",
    "score_distribution",
    "score_stored",
]
