"""The per-item RAG forms ask exactly as they did before rulings were batched: their keys are pinned.

Recordings made before the batched default replay because the per-item form (`batch=1`, and the
earlier form the default falls back on) sends the same messages with the same rubric identity.
The keys below are literals: `judged` run on this module's case and judge with the code before that
change (commit de54894, where `Faithfulness()` and the others asked per item) printed them.  A
change that moves any of them breaks every per-item recording: it must not happen silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer
from helpers.runtime import own_judges
from pytest_llmjudge import AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness, Judge
from pytest_llmjudge.rubrics import Rubric

QUESTION = "How long do refunds take, and where does the money go?"
ANSWER = "Refunds take 5 days. The money goes back to the card. Our founder likes sailing."
REFERENCE = "Refunds take 5 days. The money goes back to the original payment method."
CONTEXT = (
    "Refunds take 5 days from the day the parcel arrives.",
    "The money goes back to the original payment method.",
)


def _fenced(text: str, name: str) -> str:
    found = re.search(rf"<{name}-([0-9a-f]+)>\n(.*?)\n</{name}-\1>", text, re.S)
    return found.group(2) if found else ""


def fixed_judge(messages: list[dict]) -> str:
    """The same reply to the same messages: the claims are the fenced text's sentences, every ruling yes."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if '"claims"' in system:
        text = _fenced(user, "output") or _fenced(user, "expected")
        return json.dumps({"claims": [s.strip() for s in text.split(".") if s.strip()]})
    if '"results"' in system:  # a batched call: every numbered item
        numbers = re.findall(r"^(?:Claim|Statement|Passage) (\d+):$", user, re.M)
        return json.dumps({"results": [{"id": int(n), "reasoning": "fixed", "verdict": "yes"} for n in numbers]})
    return json.dumps({"reasoning": "fixed", "verdict": "yes"})


fixed_judge.name = "fixed-judge"  # type: ignore[attr-defined]  # a custom backend is keyed by its name


def judged(judge: Judge, rubric: Rubric) -> tuple[str, ...]:
    verdict = judge.score(ANSWER, "Grounded", rubric=rubric, input=QUESTION, expected=REFERENCE, context=CONTEXT)
    return verdict.keys


def server_judge(request: dict) -> str:
    return fixed_judge(request["messages"])


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(server_judge) as fresh:
        yield fresh


# What a callable backend's judgment keys (no reply schema is sent to a backend of your own).
BACKEND_KEYS = {
    "faithfulness": (
        "54df9e73223182face73186dc8d5a0d803b6a8c6c4fea7344a14bb2312040af5",
        "c6a6b16cd64a4cfb83c884a202ca6c65ab68c9aba510d7d2d27a70cb6c50f73f",
        "32def7655e90589e60b44f9c079381a090bfa62cd532413c0208bd5962d9b0f5",
        "101196a35ec6a39de3db46f05fd03f21cc7a86120166dd75051dcc1dc833db94",
    ),
    "answer_relevancy": (
        "92f0e444cd44081021881ad43e413843ee01bb279105bfb36920ca372e8f3698",
        "c6febc1736f246497c50eca85fb5925b8c5b2c8d4e747a854b62ec5f2daf2087",
        "a9de4b89384aa3a9d8a8bdf98a69230297812ae1d6241e9e350e7a5347d7b1b1",
        "421f12579ece0871f584c2068c721d6e3db7c5c312dcafb616e647be9b3c8d13",
    ),
    "context_recall": (
        "25986984890f42f332e8e5659a93bf77531cb315ecbc65285fbca2f2229f4908",
        "fcf9cd678f10966e847d6e11b940de2bfc7143bf5a1eed3bc2476d7b22488a0f",
        "2ba76be13526e03716dba283881b91f963be760fd36652944fd78639a3615cb7",
    ),
    "context_precision": (
        "6c13d2886bf0825102361755cbba7fe6cc13631398f66b2ad4bd81a82f0e2d1d",
        "60871ffc9cb1c5818d903bb644205ba259e35e4ea61b34929072440c71b74c95",
    ),
}
# What LiteLLM's judgment keys against the local server with --judge-structured=on (each step's reply schema keyed).
SERVER_KEYS = {
    "faithfulness": (
        "3d7e269a59cad1faa7336d79045a88dfd828e92b62f99c6391d491aff4640cd7",
        "966ff2248c62971a6c2a510b9af5b20802610e8a6eee0890dc7cab31d279905c",
        "3ef11bf019df1c582a4b355d2ddf0a0dfcf91dd6517b3941544d337c6bb3d8a4",
        "b9efe47a8b11dcb1f0154bf5aa6f5c8b6e1505f136b4b585d7ab14e78c56799c",
    ),
    "answer_relevancy": (
        "352c1d510197500aad1910dc883526b570f3807334acd06b924a519297b53254",
        "908ec0cdce94cedacf62dbdc190a3bd76b9cea62f3a98091b825dea00ffe7cea",
        "3de6288900201080f57297be9dab791163506b2761335b1a9b5d7a085089defc",
        "f2ca1b111aa2528db9399dabf8863f53ae437456eb94a0cce521946a4789395f",
    ),
    "context_recall": (
        "891045f7cd3a6756caf3a138bfd71e032f3c33f2d7513c402d116f60ae094459",
        "e00c183d1341fc4563ce7175d05416863f31567a754f82280b9028aed25fd345",
        "a12d5d4443fd929a8adeb955dd16cd3cc7d1bdad94b786fdd269b6d8519078db",
    ),
    "context_precision": (
        "5e559cec3cea4b3c7c68f95a6d2d1b03edbed939ceb0dd7cd41779762bcf3ee7",
        "4cd420383b7f0e20e186c7d51fd8d614eb5c61010331bcd4b19c921bb4504ac3",
    ),
}
KINDS: dict[str, type[Rubric]] = {
    "faithfulness": Faithfulness,
    "answer_relevancy": AnswerRelevancy,
    "context_recall": ContextRecall,
    "context_precision": ContextPrecision,
}


def per_item_forms(kind: type[Rubric]) -> list[Rubric]:
    """The per-item form chosen (`batch=1`), and the one the batched default falls back on."""
    chosen = kind(batch=1)  # type: ignore[call-arg]
    (earlier,) = kind().recorded_forms()
    return [chosen, earlier]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_per_item_form_keys_every_step_as_before_with_a_backend_of_your_own(name):
    with own_judges(mode="live") as make:
        judge = make(backend=fixed_judge)
        for rubric in per_item_forms(KINDS[name]):
            assert judged(judge, rubric) == BACKEND_KEYS[name], rubric
        # The batched default is another rubric: none of its keys is one of the per-item form's (its first
        # step would otherwise be found stored, and its second missed).
        assert not set(judged(judge, KINDS[name]())) & set(BACKEND_KEYS[name])


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_per_item_form_keys_every_step_as_before_with_structured_output(name, server):
    with own_judges(mode="live", model=MODEL, api_base=server.base_url, structured="on", retries=0) as make:
        judge = make()
        for rubric in per_item_forms(KINDS[name]):
            assert judged(judge, rubric) == SERVER_KEYS[name], rubric
    assert {r["response_format"]["type"] for r in server.requests} == {"json_schema"}
