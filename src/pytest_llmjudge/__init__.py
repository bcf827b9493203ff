"""pytest-llmjudge: judged assertions on the output of LLM applications, in plain pytest.

    from pytest_llmjudge import assert_judged

    def test_refund_answer(bot):
        assert_judged(bot.ask("Can I return shoes?"), "Says returns are accepted within 30 days")

Names are imported on first use (PEP 562): pytest imports this package for its entry point in
every session, and a suite that never judges must not pay for the judge pipeline's imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it
_LAZY = {
    "BackendError": "errors",
    "BudgetExceeded": "errors",
    "JudgeError": "errors",
    "JudgmentFailed": "errors",
    "ReplayMiss": "errors",
    "StoreError": "errors",
    "VerdictParseError": "errors",
    "assert_judged": "assertions",
    "assert_judged_async": "assertions",
    "Judge": "judge",
    "Sample": "verdict",
    "Verdict": "verdict",
    "ParsedVerdict": "parsing.funnel",
    "Answer": "parsing.answers",
    "parse_verdict": "parsing",
    "assert_better": "assertions",
    "Comparison": "rubrics.pairwise",
    "Pairwise": "rubrics.pairwise",
    "Checklist": "rubrics.checklist",
    "Dimensions": "rubrics.dimensions",
    "Likert": "rubrics.likert",
    "PassFail": "rubrics.passfail",
    "Questions": "rubrics.questions",
    "Score": "rubrics.score",
    "Template": "rubrics.template",
    "RubricError": "rubrics.base",
    "assert_judge_agrees": "calibration.assertion",
    "assert_judge_qualified": "qualification.assertion",
    "QualificationFailed": "qualification.assertion",
    "generate_questions": "assessment.generator",
    "agenerate": "generation",
    "generate": "generation",
    "generate_batch": "generation",
    "generate_variations": "generation",
    "PerTurn": "rubrics.per_turn",
    "Trajectory": "rubrics.trajectory",
    "TrajectoryMismatch": "trajectory",
    "assert_trajectory": "trajectory",
    "asimulate": "simulation",
    "simulate": "simulation",
    "AnswerRelevancy": "rubrics.rag",
    "ContextPrecision": "rubrics.rag",
    "ContextRecall": "rubrics.rag",
    "Faithfulness": "rubrics.rag",
    "LogicConsistency": "rubrics.logic",
    "ReasoningValidity": "rubrics.logic",
}

if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first access
    from .assertions import assert_better, assert_judged, assert_judged_async
    from .assessment.generator import generate_questions
    from .calibration.assertion import assert_judge_agrees
    from .errors import (
        BackendError,
        BudgetExceeded,
        JudgeError,
        JudgmentFailed,
        ReplayMiss,
        StoreError,
        VerdictParseError,
    )
    from .generation import agenerate, generate, generate_batch, generate_variations
    from .judge import Judge
    from .parsing.answers import Answer
    from .parsing.funnel import ParsedVerdict, parse_verdict
    from .qualification.assertion import QualificationFailed, assert_judge_qualified
    from .rubrics.base import RubricError
    from .rubrics.checklist import Checklist
    from .rubrics.dimensions import Dimensions
    from .rubrics.likert import Likert
    from .rubrics.logic import LogicConsistency, ReasoningValidity
    from .rubrics.pairwise import Comparison, Pairwise
    from .rubrics.passfail import PassFail
    from .rubrics.per_turn import PerTurn
    from .rubrics.questions import Questions
    from .rubrics.rag import AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness
    from .rubrics.score import Score
    from .rubrics.template import Template
    from .rubrics.trajectory import Trajectory
    from .simulation import asimulate, simulate
    from .trajectory import TrajectoryMismatch, assert_trajectory
    from .verdict import Sample, Verdict

__all__ = [
    "Answer",
    "AnswerRelevancy",
    "BackendError",
    "BudgetExceeded",
    "Checklist",
    "Comparison",
    "ContextPrecision",
    "ContextRecall",
    "Dimensions",
    "Faithfulness",
    "Judge",
    "JudgeError",
    "JudgmentFailed",
    "Likert",
    "LogicConsistency",
    "Pairwise",
    "ParsedVerdict",
    "PassFail",
    "PerTurn",
    "QualificationFailed",
    "Questions",
    "ReasoningValidity",
    "ReplayMiss",
    "RubricError",
    "Sample",
    "Score",
    "StoreError",
    "Template",
    "Trajectory",
    "TrajectoryMismatch",
    "Verdict",
    "VerdictParseError",
    "agenerate",
    "asimulate",
    "assert_better",
    "assert_judge_agrees",
    "assert_judge_qualified",
    "assert_judged",
    "assert_judged_async",
    "assert_trajectory",
    "generate",
    "generate_batch",
    "generate_questions",
    "generate_variations",
    "parse_verdict",
    "simulate",
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Not kept in globals: a name follows its module if an in-process pytest run imports that anew.
    return getattr(importlib.import_module(f".{module_name}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
