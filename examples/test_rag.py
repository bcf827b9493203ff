"""A RAG answer judged with the context it was retrieved for: grounding, relevance and retrieval.

The support bot answers from a small knowledge base; `retrieve` stands in for its retriever.  The
RAG rubric kinds judge in steps (the claims of the answer, then one call ruling on all of them
against the context), and every step's verdict is stored in `judge_verdicts/`, so all of it replays
offline.
"""

import re

import pytest
from support_bot import answer

from pytest_llmjudge import AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness, assert_judged

KNOWLEDGE = [
    "Returns are accepted within 30 days of delivery.",
    "Refunds go back to the original payment method.",
    "Shoes ship free on orders over 50 euros.",
]
QUESTION = "Can I return shoes after 20 days?"


def retrieve(question: str, k: int = 3) -> list[str]:
    """The k passages sharing the most words with the question, best first (a stand-in retriever)."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    return sorted(KNOWLEDGE, key=lambda p: -len(words & set(re.findall(r"[a-z]+", p.lower()))))[:k]


def test_the_answer_is_grounded_in_what_was_retrieved():
    context = retrieve(QUESTION)
    assert_judged(
        answer(QUESTION), "Answers from the return policy", rubric=Faithfulness(), context=context, threshold=0.9
    )


def test_the_answer_addresses_the_question():
    assert_judged(answer(QUESTION), "Answers the question", rubric=AnswerRelevancy(), input=QUESTION, threshold=0.7)


def test_retrieval_ranks_the_relevant_passages_first(judge):
    verdict = judge.score(
        "-", "The return policy comes first", rubric=ContextPrecision(), input=QUESTION, context=retrieve(QUESTION)
    )
    assert verdict.score >= 0.8, verdict.reasoning


def test_retrieval_holds_what_a_correct_answer_needs():
    reference = "Returns are accepted within 30 days. The refund goes to the original payment method."
    assert_judged(
        "-",
        "The context holds the answer",
        rubric=ContextRecall(),
        expected=reference,
        context=retrieve(QUESTION),
        threshold=1.0,
    )


@pytest.mark.xfail(strict=True, reason="fails on purpose: an answer with a claim its context does not support")
def test_an_invented_claim_is_named_in_the_failure():
    invented = "Returns are accepted within 30 days. Refunds are paid in cash at any store."
    assert_judged(
        invented, "Answers from the return policy", rubric=Faithfulness(), context=retrieve(QUESTION), threshold=0.9
    )
