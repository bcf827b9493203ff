"""The RAG kinds' rulings asked in batches (the default) or one call per item (`batch=1`).

Through the public API, with a stand-in judge that gives an item the same ruling whichever way it is
asked (a callable backend, and the local server through the real LiteLLM client): the scores and
details of both forms are the same; a batched reply is read item by item; a long list is split,
never cut; the context goes once into each call.  Recording and replaying batched judgments through
pytest is in test_rag.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer
from helpers.rag_judge import rag_backend, rag_judge
from helpers.runtime import own_judges
from pytest_llmjudge import (
    AnswerRelevancy,
    ContextPrecision,
    ContextRecall,
    Faithfulness,
    Judge,
    RubricError,
    VerdictParseError,
)
from pytest_llmjudge.rubrics import Rubric

QUESTION = "How long do refunds take, and can I return worn shoes?"
# Some sentences the context supports word for word, some it does not; some address the question, some not.
ANSWER = (
    "Refunds take 5 days from the day the parcel arrives. Worn shoes cannot be returned. "
    "Unworn shoes can be returned within 30 days. Our founder likes sailing on weekends. "
    "Refunds go back to the original payment method. Gift cards never expire."
)
REFERENCE = "Refunds take 5 days from the day the parcel arrives. Worn shoes cannot be returned. Socks are final sale."
CONTEXT = [
    "Our shop was founded in 2009 in Lyon.",
    "Refunds take 5 days from the day the parcel arrives at our warehouse.",
    "Shoes can be returned within 30 days if unworn; worn shoes cannot be returned.",
    "Refunds go back to the original payment method.",
    "We also sell socks and laces.",
]
KINDS = [Faithfulness, AnswerRelevancy, ContextRecall, ContextPrecision]


def judged(judge: Judge, rubric: Rubric) -> Any:
    return judge.score(ANSWER, "Grounded", rubric=rubric, input=QUESTION, expected=REFERENCE, context=CONTEXT)


@pytest.fixture
def backend_judge() -> Iterator[Judge]:
    with own_judges(mode="live") as make:
        yield make(backend=rag_backend)


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(rag_judge) as fresh:
        yield fresh


@pytest.fixture
def server_judge(server: OpenAIServer) -> Iterator[Judge]:
    with own_judges(mode="live", model=MODEL, api_base=server.base_url, structured="on", retries=0) as make:
        yield make()


def same_judgment(judge: Judge, kind: type[Rubric]) -> None:
    """Per item, batched by default, and batched in calls of two: one score, one reasoning, one set of details."""
    per_item, batched, in_twos = (judged(judge, kind(batch=b)) for b in (1, None, 2))  # type: ignore[call-arg]
    assert 0.0 < per_item.score < 1.0  # some rulings yes, some no: the comparison can tell them apart
    for other in (batched, in_twos):
        assert (other.score, other.reasoning, other.details) == (per_item.score, per_item.reasoning, per_item.details)
    steps = 0 if kind is ContextPrecision else 1  # the claims step
    items = len(CONTEXT) if kind is ContextPrecision else per_item.details["total"]
    assert len(per_item.keys) == steps + items
    assert len(batched.keys) == steps + 1
    assert len(in_twos.keys) == steps + -(-items // 2)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_batched_and_per_item_give_the_same_score_and_details_with_a_backend_of_your_own(backend_judge, kind):
    same_judgment(backend_judge, kind)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_batched_and_per_item_give_the_same_score_and_details_through_litellm(server_judge, server, kind):
    same_judgment(server_judge, kind)
    assert {r["response_format"]["type"] for r in server.requests} == {"json_schema"}


def test_the_scores_are_those_of_the_rulings(backend_judge):
    scores = {kind.__name__: judged(backend_judge, kind()).score for kind in KINDS}
    assert scores == {
        "Faithfulness": round(4 / 6, 6),  # the founder's sailing and the gift cards are not in the context
        "AnswerRelevancy": round(4 / 6, 6),  # the sailing and the gift cards share no word with the question
        "ContextRecall": round(2 / 3, 6),  # socks are in the context, "final sale" is not
        "ContextPrecision": round((1 / 2 + 2 / 3 + 3 / 4) / 3, 6),  # relevant at ranks 2, 3 and 4
    }


# -- one call, every item, once ---------------------------------------------------------------------


def recording(judge: Callable[[list[dict[str, Any]]], str]) -> tuple[list[list[dict[str, Any]]], Any]:
    """A backend that answers as `judge` and keeps every call's messages."""
    calls: list[list[dict[str, Any]]] = []

    def backend(messages: list[dict[str, Any]]) -> str:
        calls.append(messages)
        return judge(messages)

    return calls, backend


@pytest.mark.parametrize("kind", [Faithfulness, ContextRecall], ids=lambda k: k.__name__)
def test_the_context_goes_once_into_each_call_that_rules_on_claims(kind):
    calls, backend = recording(rag_backend)
    with own_judges(mode="live") as make:
        judged(make(backend=backend), kind())
    claims, rulings = calls
    assert "<context-" not in claims[1]["content"]  # listing the claims needs no context
    user = rulings[1]["content"]
    assert user.count("<context-") == 1 and user.count(CONTEXT[1]) == 1
    assert len(re.findall(r"^Claim \d+:$", user, re.M)) == len(json.loads(rag_backend(claims))["claims"])


def test_a_list_longer_than_a_batch_is_split_into_even_calls_and_none_is_cut():
    days = [5, *range(11, 20)]
    output = " ".join(f"Refunds take {n} days." for n in days)  # ten claims
    calls, backend = recording(rag_backend)
    with own_judges(mode="live") as make:
        verdict = make(backend=backend).score(output, "Grounded", rubric=Faithfulness(batch=4), context=CONTEXT)
    ruled = [re.findall(r"^Claim (\d+):$", c[1]["content"], re.M) for c in calls[1:]]
    assert [len(r) for r in ruled] == [3, 3, 4]  # the fewest calls of at most 4, as even as can be
    assert all(r == [str(i) for i in range(1, len(r) + 1)] for r in ruled)  # numbered from 1 in each call
    assert [c["claim"] for c in verdict.details["claims"]] == [f"Refunds take {n} days" for n in days]
    assert verdict.details["total"] == 10 and verdict.score == 0.1  # only "5 days" is in the context


# -- a batched reply read item by item --------------------------------------------------------------


def answering(results: list[dict[str, Any]]) -> Callable[[list[dict[str, Any]]], str]:
    """A judge listing the output's sentences as claims, then giving `results` as the rulings."""

    def reply(messages: list[dict[str, Any]]) -> str:
        if '"claims"' in messages[0]["content"]:
            return rag_backend(messages)
        return json.dumps({"results": results})

    return reply


TWO_CLAIMS = "Refunds take 5 days. Gift cards never expire."


def ruled_by(results: list[dict[str, Any]]) -> Any:
    with own_judges(mode="live") as make:
        return make(backend=answering(results)).score(TWO_CLAIMS, "Grounded", rubric=Faithfulness(), context=CONTEXT)


def ruling(i: Any, verdict: str = "yes", **more: Any) -> dict[str, Any]:
    return {"id": i, "reasoning": f"on claim {i}", "verdict": verdict, **more}


@pytest.mark.parametrize(
    "results, message",
    [
        ([ruling(1)], "gives no yes/no for claim(s) 2"),  # a ruling missing
        ([ruling(1), ruling(2), ruling(2, "no")], "gives both yes and no for claim 2"),  # doubled, disagreeing
        ([ruling(1), ruling(2), ruling(3)], "rules on claim 3, but 2 were asked"),  # an item not asked
        ([ruling(1), {"id": 2, "reasoning": "r", "score": 1.0}], "gives no yes/no for claim(s) 2"),  # no verdict
        ([], "the reply has no list of results"),
        # one ruling whose fields disagree: read by its first field, it passed a claim the judge said no to
        (
            [ruling(1), ruling(2, "no", passed=True)],
            "ruling on claim 2 says both yes and no (verdict: 'no', passed: True)",
        ),
        (
            [ruling(1), ruling(2, "yes", result="FAIL")],
            "ruling on claim 2 says both yes and no (verdict: 'yes', result: 'FAIL')",
        ),
    ],
    ids=["missing", "doubled", "not-asked", "no-verdict", "empty", "fields-disagree", "result-disagrees"],
)
def test_a_batched_reply_that_lost_track_of_the_list_is_no_verdict(results, message):
    with pytest.raises(VerdictParseError, match=re.escape(message)) as info:
        ruled_by(results)
    assert str(info.value).startswith("Faithfulness: ")


def test_a_batched_reply_is_read_by_number_in_any_order_and_a_repeated_ruling_counts_once():
    verdict = ruled_by([ruling("2", "no", passed=False), ruling(1, passed="yes"), ruling(2, "no")])
    assert verdict.score == 0.5
    assert [(c["verdict"], c["reasoning"]) for c in verdict.details["claims"]] == [
        ("yes", "on claim 1"),
        ("no", "on claim 2"),
    ]


def test_an_unreadable_batched_reply_is_asked_again_once():
    calls, backend = recording(answering([ruling(1)]))
    with own_judges(mode="live") as make, pytest.raises(VerdictParseError):
        make(backend=backend).score(TWO_CLAIMS, "Grounded", rubric=Faithfulness(), context=CONTEXT)
    assert len(calls) == 3  # the claims, the rulings, the rulings asked again


# -- the option ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [0, -1, 2.5, "4", True])
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_a_bad_batch_is_a_rubric_error_naming_the_argument(kind, batch):
    with pytest.raises(RubricError, match=rf"{kind.__name__}\(batch=\.\.\.\) must be a whole number of at least 1"):
        kind(batch=batch)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_only_the_default_replays_what_was_recorded_per_item(kind):
    (earlier,) = kind().recorded_forms()
    assert earlier.describe() == kind(batch=1).describe() == {"name": kind.name, "version": 1}
    assert kind().describe() == {"name": kind.name, "version": 1, "batch": 16}
    assert kind(batch=16).recorded_forms() == [] and kind(batch=1).recorded_forms() == []
    assert repr(kind()) == f"{kind.__name__}(batch=16)" and repr(earlier) == f"{kind.__name__}(batch=1)"
