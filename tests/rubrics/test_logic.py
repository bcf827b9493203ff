"""LogicConsistency and ReasoningValidity: weighted dimensions, and what else each reads into the details."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import jsonschema
import pytest

from helpers.runtime import own_judges
from pytest_llmjudge import Judge, LogicConsistency, ReasoningValidity, VerdictParseError

CONSISTENCY = {
    "reasoning": "The dinner is vegetarian, then has pepperoni.",
    "scores": {"contradiction": 0.0, "causal": 1.0, "data": 0.5},
    "issues": [{"type": "contradiction", "description": "vegetarian eats meat", "evidence": "'pepperoni'"}],
}
VALIDITY = {
    "reasoning": "Attacks the person, not the data.",
    "scores": {"validity": 0.1},
    "valid": False,
    "fallacies": ["ad hominem"],
    "reasoning_type": "deductive",
}


@pytest.fixture
def replying() -> Iterator[Callable[[object], Judge]]:
    """`replying(reply)`: a Judge whose judge answers every call with `reply` (JSON-encoded)."""
    with own_judges(mode="live") as make:

        def judge_replying(reply: object) -> Judge:
            return make(backend=lambda messages: json.dumps(reply))

        yield judge_replying


def test_logic_consistency_weighs_contradiction_causal_and_data_and_keeps_the_issues(replying):
    verdict = replying(CONSISTENCY).score("He is vegetarian; he had pepperoni.", "c", rubric=LogicConsistency())
    assert verdict.score == round(0.5 * 0.0 + 0.3 * 1.0 + 0.2 * 0.5, 6)
    assert verdict.details["weights"] == {"contradiction": 0.5, "causal": 0.3, "data": 0.2}
    assert verdict.details["dimensions"] == CONSISTENCY["scores"]
    assert verdict.details["issues"] == CONSISTENCY["issues"]
    assert "  - contradiction: vegetarian eats meat ('pepperoni')" in verdict.notes
    jsonschema.validate(CONSISTENCY, LogicConsistency().reply_schema())


def test_reasoning_validity_says_whether_valid_the_fallacies_and_the_kind_of_reasoning(replying):
    verdict = replying(VALIDITY).score("Dr. Smith was divorced, so his data is wrong.", "c", rubric=ReasoningValidity())
    assert verdict.score == 0.1
    assert {k: verdict.details[k] for k in ("valid", "fallacies", "reasoning_type")} == {
        "valid": False,
        "fallacies": ["ad hominem"],
        "reasoning_type": "deductive",
    }
    assert verdict.notes == ("valid: no; fallacies: ad hominem; reasoning: deductive",)
    jsonschema.validate(VALIDITY, ReasoningValidity().reply_schema())


def test_a_reply_without_validity_counts_it_from_its_score(replying):
    verdict = replying({"reasoning": "sound", "scores": {"validity": 0.8}}).score("x", "c", rubric=ReasoningValidity())
    assert (verdict.details["valid"], verdict.details["fallacies"], verdict.details["reasoning_type"]) == (
        True,
        [],
        None,
    )


def test_a_reply_without_the_scores_is_a_parse_error_not_a_low_score(replying):
    with pytest.raises(VerdictParseError, match="no score for contradiction, causal, data"):
        replying({"reasoning": "fine", "issues": []}).score("x", "c", rubric=LogicConsistency())


def test_the_kinds_take_no_arguments_and_their_name_and_version_make_their_identity():
    assert LogicConsistency().describe() == {"name": "logic_consistency", "version": 1}
    assert ReasoningValidity().describe() == {"name": "reasoning_validity", "version": 1}
