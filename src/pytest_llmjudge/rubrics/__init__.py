"""Rubric kinds: how a judgment is asked for, and how the judge's replies become one outcome.

`base` holds the contract (the `Rubric` ABC, `Prompt`, `Reply`, `Outcome`) and the registry of
kinds by name; each kind is one module: `Score` (the default, 0-1), `PassFail` (verdict and
confidence -> table), `Likert` (integer scale, optionally weighted by token log-probabilities),
`Dimensions` (weighted per-dimension scores), `Checklist` (PASS/FAIL per constraint), `Questions`
(one call per question), `Template` (your own prompt), `Pairwise` (both orders of a comparison),
`PerTurn` (one call per assistant turn of a conversation) and `Trajectory` (an agent's tool calls);
`rag` holds the kinds that judge with the retrieved context (`Faithfulness` and its kin, some in two
steps: claims, then a ruling on each), `logic` the consistency and reasoning audits.
A kind's module loads on first need (a name imported from here, or the kind's name looked up in
the registry).  `parsed` holds `RubricParse`, what a structured kind's parse returns.  `stored`
decides a stored reply's score, the same way for replay and for `llmjudge reparse`.  `questions_file`
reads and writes the questions file that `Questions.from_file` loads and `llmjudge questions` writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..case import Case  # what `Rubric.prompts` is given: part of the contract a kind of your own meets
from ..lazy import lazy_exports
from .base import (
    Outcome,
    Prompt,
    Reply,
    Rubric,
    RubricError,
    register_rubric,
    resolve_rubric,
    rubric_kinds,
)
from .stored import read_reply, rebuild_stored, score_stored

# public name -> the kind's module that defines it: imported on first use (PEP 562), so a suite judging
# with the default kind does not load every kind (the registry loads a built-in kind by name as well)
_LAZY = {
    "Checklist": "checklist",
    "DIMENSION_DESCRIPTIONS": "dimensions",
    "DIMENSION_WEIGHTS": "dimensions",
    "QUALITY_LABELS": "dimensions",
    "Dimensions": "dimensions",
    "Likert": "likert",
    "score_distribution": "likert",
    "Comparison": "pairwise",
    "OrderResult": "pairwise",
    "Pairwise": "pairwise",
    "comparison_from": "pairwise",
    "PASS_FAIL_SCORES": "passfail",
    "PassFail": "passfail",
    "Questions": "questions",
    "RubricParse": "parsed",
    "Score": "score",
    "Template": "template",
    "PER_TURN_AGGREGATES": "per_turn",
    "PerTurn": "per_turn",
    "Trajectory": "trajectory",
    "AnswerRelevancy": "rag",
    "ContextPrecision": "rag",
    "ContextRecall": "rag",
    "Faithfulness": "rag",
    "LogicConsistency": "logic",
    "ReasoningValidity": "logic",
}

if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first access
    from .checklist import Checklist
    from .dimensions import DIMENSION_DESCRIPTIONS, DIMENSION_WEIGHTS, QUALITY_LABELS, Dimensions
    from .likert import Likert, score_distribution
    from .logic import LogicConsistency, ReasoningValidity
    from .pairwise import Comparison, OrderResult, Pairwise, comparison_from
    from .parsed import RubricParse
    from .passfail import PASS_FAIL_SCORES, PassFail
    from .per_turn import PER_TURN_AGGREGATES, PerTurn
    from .questions import Questions
    from .rag import AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness
    from .score import Score
    from .template import Template
    from .trajectory import Trajectory

__all__ = [
    "DIMENSION_DESCRIPTIONS",
    "DIMENSION_WEIGHTS",
    "PASS_FAIL_SCORES",
    "PER_TURN_AGGREGATES",
    "QUALITY_LABELS",
    "AnswerRelevancy",
    "Case",
    "Checklist",
    "Comparison",
    "ContextPrecision",
    "ContextRecall",
    "Dimensions",
    "Faithfulness",
    "Likert",
    "LogicConsistency",
    "OrderResult",
    "Outcome",
    "Pairwise",
    "PassFail",
    "PerTurn",
    "Prompt",
    "Questions",
    "ReasoningValidity",
    "Reply",
    "Rubric",
    "RubricError",
    "RubricParse",
    "Score",
    "Template",
    "Trajectory",
    "comparison_from",
    "read_reply",
    "rebuild_stored",
    "register_rubric",
    "resolve_rubric",
    "rubric_kinds",
    "score_distribution",
    "score_stored",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
