"""RAG judgments and rubrics that ask in steps, through pytest and the real LiteLLM client.

Each recording runs against a local server of the test's own (structured output on), whose judge
answers by the reply schema a request asks for: the claims of the fenced text, or a yes/no ruling
by shared words.  Each replay runs with `CI=true` and that server stopped: a call would fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from helpers import FAKE_CONFTEST, MODEL
from helpers.openai_server import OpenAIServer
from helpers.rag_judge import rag_backend, rag_judge
from helpers.runtime import own_judges
from helpers.verdicts import entries_by_key, stored_entries, verdict_files
from pytest_llmjudge import (
    AnswerRelevancy,
    ContextPrecision,
    ContextRecall,
    Faithfulness,
    Judge,
    JudgeError,
    VerdictParseError,
    assert_judged,
    criteria,
)
from pytest_llmjudge.case import Case, render_case
from pytest_llmjudge.pipeline.reask import REASK_MESSAGE
from pytest_llmjudge.rubrics import Reply
from pytest_llmjudge.rubrics.stored import score_stored

UNREADABLE = "I would rather not say."
CONTEXT_0, CONTEXT_1 = "Returns are accepted within 30 days of delivery.", "Refunds go to the original payment method."


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(rag_judge) as fresh:
        yield fresh


RAG_TESTS = """
from pytest_llmjudge import AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness, assert_judged

CONTEXT = ["Returns are accepted within 30 days of delivery.", "Refunds go to the original payment method."]

def test_faithful():
    assert_judged("Returns are accepted within 30 days.", "Grounded in the policy",
                  rubric=Faithfulness(), context=CONTEXT, threshold=1.0)

def test_unfaithful():
    assert_judged("Returns are accepted within 30 days. Refunds are paid in cash at the store.",
                  "Grounded in the policy", rubric=Faithfulness(), context=CONTEXT, threshold=0.9)

def test_precision(judge):
    judge.score("-", "Ranks the policy first", rubric=ContextPrecision(), input="When do refunds arrive?",
                context=["Our shop sells shoes.", "Refunds arrive within 5 days.", "Refunds are sent by bank transfer."])

def test_recall(judge):
    judge.score("-", "The context holds the answer", rubric=ContextRecall(), context=CONTEXT,
                expected="Returns are accepted within 30 days. Gift cards never expire.")

def test_relevancy(judge):
    judge.score("Refunds take 5 days. Our founder likes sailing.", "Answers the question",
                rubric=AnswerRelevancy(), input="How many days do refunds take?")
"""


def run(pytester: pytest.Pytester, server: OpenAIServer, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--judge-model={MODEL}",
        f"--judge-api-base={server.base_url}",
        "--judge-retries=0",
        "--judge-structured=on",
        "--judge-report=report.json",
        *args,
    )


def judgments(root: Path) -> dict[str, dict]:
    return {j["nodeid"].rpartition("::")[2]: j for j in json.loads((root / "report.json").read_text())["judgments"]}


def replay(pytester: pytest.Pytester, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    """A replay in CI with the judge's server stopped."""
    server.stop()
    monkeypatch.setenv("CI", "true")
    return run(pytester, server)


def in_form(tests: str, form: str) -> str:
    """`tests` with every RAG kind asked in `form` ("" for the default, "batch=1" per item)."""
    for kind in ("Faithfulness", "ContextPrecision", "ContextRecall", "AnswerRelevancy"):
        tests = tests.replace(f"{kind}()", f"{kind}({form})")
    return tests


@pytest.mark.parametrize(
    "form, rulings, calls, unfaithful_calls",
    [
        # Claims, then one call ruling on all of a judgment's claims (or passages) at once.
        ("", {"faithfulness_rulings": 2, "context_precision_reply": 1}, 9, ["claims", "claims 1-2"]),
        # Claims, then one call per claim (and per passage).
        ("batch=1", {"faithfulness_verdict": 3, "context_precision_reply": 3}, 14, ["claim 1", "claim 2", "claims"]),
    ],
    ids=["batched", "per-item"],
)
def test_rag_kinds_record_every_step_then_replay_offline(
    pytester, server, monkeypatch, form, rulings, calls, unfaithful_calls
):
    pytester.makepyfile(test_answers=in_form(RAG_TESTS, form))
    recorded = run(pytester, server, "--judge-mode=auto")
    recorded.assert_outcomes(passed=4, failed=1)
    recorded.stdout.fnmatch_lines(["*unsupported claims (1 of 2):*", "*- Refunds are paid in cash at the store*"])
    scores = {name: j["score"] for name, j in judgments(pytester.path).items()}
    # 2 of 3 passages relevant, at ranks 2 and 3: (1/2 + 2/3) / 2
    assert scores == {
        "test_faithful": 1.0,
        "test_unfaithful": 0.5,
        "test_precision": 0.583333,
        "test_recall": 0.5,
        "test_relevancy": 0.5,
    }
    # Every step asked for its own reply schema.
    names = [r["response_format"]["json_schema"]["name"] for r in server.requests]
    assert names.count("faithfulness_claims") == 2
    assert {name: names.count(name) for name in rulings} == rulings
    entries = stored_entries(pytester.path)
    assert len(entries) == len(server.requests) == calls
    unfaithful = [e for e in entries if e["output"].endswith("at the store.")]
    assert sorted(e["prompt"] for e in unfaithful) == unfaithful_calls
    assert sorted(e["step"] for e in unfaithful) == ["1 of 2 (claims)"] + ["2 of 2 (verdicts)"] * (
        len(unfaithful_calls) - 1
    )
    assert {tuple(e["context"]) for e in unfaithful} == {(CONTEXT_0, CONTEXT_1)}
    # `llmjudge reparse` rebuilds what a stored entry alone can give: a first step's prompt, with its context.
    rebuilt = {e["step"] if "step" in e else e["rubric"]: score_stored(e) is not None for e in entries}
    assert rebuilt == {"1 of 2 (claims)": True, "context_precision": True, "2 of 2 (verdicts)": False}

    sent = server.request_count
    replayed = replay(pytester, server, monkeypatch)
    replayed.assert_outcomes(passed=4, failed=1)
    replayed.stdout.fnmatch_lines(["*unsupported claims (1 of 2):*", "*- Refunds are paid in cash at the store*"])
    again = judgments(pytester.path)
    assert {name: j["score"] for name, j in again.items()} == scores
    assert {j["source"] for j in again.values()} == {"replayed"}
    assert server.request_count == sent


def test_a_replay_of_stored_steps_makes_no_call_and_never_imports_litellm(pytester, server, monkeypatch):
    pytester.makepyfile(
        test_answers=RAG_TESTS.split("def test_precision")[0]
        + """
def test_zz_litellm_was_never_imported():
    import sys
    assert "litellm" not in sys.modules
"""
    )
    run(pytester, server, "--judge-mode=auto", "-k", "not zz").assert_outcomes(passed=1, failed=1)
    server.stop()
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_subprocess(f"--judge-model={MODEL}", "--judge-structured=on")
    result.assert_outcomes(passed=2, failed=1)


def test_a_step_whose_reply_does_not_parse_is_asked_again_and_its_entry_keeps_the_first_reply(
    pytester, server, monkeypatch
):
    server.enqueue(UNREADABLE)  # the claims step's first reply
    pytester.makepyfile(test_answers=RAG_TESTS.split("def test_unfaithful")[0])
    run(pytester, server, "--judge-mode=auto").assert_outcomes(passed=1)
    first, second, *rulings = server.requests
    assert second["messages"] == [
        *first["messages"],
        {"role": "assistant", "content": UNREADABLE},
        {"role": "user", "content": REASK_MESSAGE},
    ]
    assert len(rulings) == 1
    (claims,) = [e for e in stored_entries(pytester.path) if e["step"].endswith("(claims)")]
    assert claims["retried_from"] == [UNREADABLE]
    assert json.loads(claims["reply"]) == {"claims": ["Returns are accepted within 30 days"]}

    replay(pytester, server, monkeypatch).assert_outcomes(passed=1)
    assert server.request_count == 3


def test_a_replay_that_misses_a_later_step_says_which_step(pytester, server, monkeypatch):
    pytester.makepyfile(test_answers=RAG_TESTS.split("def test_unfaithful")[0])
    run(pytester, server, "--judge-mode=auto").assert_outcomes(passed=1)
    (path,) = verdict_files(pytester.path)
    stored = json.loads(path.read_text())
    ruling = next(k for k, e in entries_by_key(pytester.path).items() if e["step"].startswith("2 of 2"))
    del stored["verdicts"][ruling]  # as if the ruling had never been recorded
    path.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")

    result = replay(pytester, server, monkeypatch)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*no stored verdict for this judgment*", "*step: 2 of 2 (verdicts)*", f"*key:  {ruling[:12]}*"]
    )


def test_score_many_sends_each_step_of_independent_judgments_concurrently(pytester, server):
    server.latency_s = 0.3
    pytester.makepyfile(
        test_many="""
from pytest_llmjudge import Faithfulness

def test_many(judge):
    context = ["Returns are accepted within 30 days.", "Refunds go to the original payment method."]
    verdicts = judge.score_many([
        dict(output=f"Returns are accepted within 30 days. Case {i} is closed.", criteria="Grounded",
             rubric=Faithfulness(), context=context)
        for i in range(3)
    ])
    assert [v.score for v in verdicts] == [0.5, 0.5, 0.5]
"""
    )
    run(pytester, server, "--judge-mode=live").assert_outcomes(passed=1)
    assert server.request_count == 6  # 3 judgments: claims, then one call ruling on both claims
    assert server.max_in_flight >= 3  # all three claims steps at once, then the three rulings


# -- context and the kinds, through the public API, judged by a judge of the test's own -------------------


@pytest.fixture
def own_judge() -> Iterator[Judge]:
    with own_judges(mode="live") as make:
        yield make(backend=rag_backend)


def test_context_is_rendered_numbered_and_fenced_as_data_and_joins_the_nonce():
    plain = Case.build("out", "crit", input="q")
    case = Case.build("out", "crit", input="q", context=["first passage", "second</context-x>"])
    text = render_case(case)
    assert f"<context-{case.nonce}>\n[1] first passage\n\n[2] second</context-x>\n</context-{case.nonce}>" in text
    assert text.index("<input-") < text.index("<context-") < text.index("<output-")
    assert case.nonce != plain.nonce
    assert Case.build("out", "crit", input="q", context="first passage").context == ("first passage",)
    # A case without context renders as it always has: no context section, the same nonce.
    assert "context" not in render_case(plain) and plain.nonce == Case.build("out", "crit", input="q").nonce


@pytest.mark.parametrize(
    "context, message",
    [
        (42, "context must be a string or a list of strings (the retrieved passages), got int"),
        ({"doc": "text"}, "context must be a string or a list of strings (the retrieved passages), got dict"),
        (["fine", None], "context[1] must be a string (a retrieved passage), got NoneType"),
        ([], "context is an empty list"),
    ],
)
def test_bad_context_is_a_judge_error_naming_the_argument(own_judge, context, message):
    with pytest.raises(JudgeError, match=re.escape(message)):
        own_judge.score("out", "crit", context=context)
    with pytest.raises(JudgeError, match=re.escape(message)):
        assert_judged("out", "crit", context=context)


@pytest.mark.parametrize(
    "rubric, given, missing",
    [
        (Faithfulness(), {}, "context"),
        (AnswerRelevancy(), {"context": "c"}, "input"),
        (ContextRecall(), {"context": "c"}, "expected"),
        (ContextRecall(), {"expected": "e"}, "context"),
        (ContextPrecision(), {"input": "q"}, "context"),
        (ContextPrecision(), {"context": ["c"]}, "input"),
    ],
)
def test_a_kind_without_the_argument_it_needs_says_which(own_judge, rubric, given, missing):
    with pytest.raises(JudgeError, match=rf"rubric {type(rubric).__name__} needs {missing}=\.\.\."):
        own_judge.score("out", "crit", rubric=rubric, **given)


def test_any_kind_shows_the_context_to_the_judge(own_judge):
    seen: list[list[dict]] = []

    def judging(messages: list[dict]) -> str:
        seen.append(messages)
        return '{"reasoning": "r", "score": 0.8}'

    with own_judges(mode="live") as make:
        assert make(backend=judging).score("out", "Grounded", context=["the policy"]).score == 0.8
    assert "[1] the policy" in seen[0][-1]["content"]


@pytest.mark.parametrize(
    "passages, score",
    [
        (["refunds", "shoes", "socks"], 1.0),  # the one relevant passage ranked first
        (["shoes", "socks", "refunds"], 1 / 3),  # ... ranked last costs more
        (["refunds", "shoes", "refunds policy"], round((1 + 2 / 3) / 2, 6)),
        (["shoes", "socks"], 0.0),  # no relevant passage
    ],
)
def test_context_precision_is_average_precision_over_the_relevant_ranks(own_judge, passages, score):
    verdict = own_judge.score("-", "c", rubric=ContextPrecision(), input="refunds?", context=passages)
    assert verdict.score == round(score, 6)
    assert verdict.details["irrelevant"] == [k for k, p in enumerate(passages, 1) if "refunds" not in p]


def test_an_output_without_claims_is_faithful_and_addresses_nothing(own_judge):
    faithful = own_judge.score("", "c", rubric=Faithfulness(), context="the policy")
    assert (faithful.score, faithful.details["claims"]) == (1.0, [])
    assert "makes no claims" in faithful.reasoning
    relevant = own_judge.score("", "c", rubric=AnswerRelevancy(), input="refunds?")
    assert relevant.score == 0.0
    assert len(faithful.keys) == 1  # no ruling asked for: one call


@pytest.mark.parametrize("kind", [Faithfulness, AnswerRelevancy, ContextRecall])
def test_each_step_asks_for_the_reply_its_parse_reads(kind):
    case = Case.build("Refunds take 5 days. Shoes are red.", "c", input="refunds?", context=["Refunds take 5 days."])
    noun = kind.noun
    no = {"reasoning": "r", "verdict": "no"}
    for rubric, names, reply in (
        (kind(batch=1), ["claim 1", "claim 2"], no),  # distinct claims, one call each
        (kind(), [f"{noun}s 1-2"], {"results": [{"id": 1, **no}, {"id": 2, **no}]}),  # one call for both
    ):
        (claims,) = rubric.prompts(Case.build("-", "c", input="q", expected="A. B.", context="A"))
        assert claims.schema is not None
        jsonschema.validate({"claims": ["a", "b"]}, claims.schema[1])
        parsed = rubric.parse(claims, Reply('{"claims": ["a", "b", "a"]}'))
        rulings = rubric.next_prompts(case, [(claims, parsed)])
        assert [p.name for p in rulings] == names
        assert sum(p.items for p in rulings) == 2  # what the per-judgment cap counts
        jsonschema.validate(reply, rulings[0].schema[1])
        ruled = rubric.parse(rulings[0], Reply(json.dumps(reply)))
        assert ruled.score == 0.0
        assert rubric.next_prompts(case, [(claims, parsed), *((p, ruled) for p in rulings)]) == []
    passages = Case.build("-", "c", input="q", context=["A", "B"])
    jsonschema.validate(no, ContextPrecision(batch=1).reply_schema())
    assert [p.items for p in ContextPrecision(batch=1).prompts(passages)] == [1, 1]
    jsonschema.validate({"results": [{"id": 1, **no}, {"id": 2, **no}]}, ContextPrecision().reply_schema())
    assert [p.items for p in ContextPrecision().prompts(passages)] == [2]


@pytest.mark.parametrize(
    "reply",
    [
        '{"claims": "one claim"}',
        "The claims are: none.",
        '{"claims": [1, 2]}',
    ],
)
def test_an_unreadable_claims_reply_is_a_parse_error(reply):
    (claims,) = Faithfulness().prompts(Case.build("o", "c", context="x"))
    with pytest.raises(VerdictParseError):
        Faithfulness().parse(claims, Reply(reply))


def test_the_rag_criteria_need_the_context(own_judge):
    with pytest.raises(JudgeError, match=r"criteria groundedness needs context=\.\.\."):
        own_judge.score("out", criteria.GROUNDEDNESS)
    with pytest.raises(JudgeError, match=r"criteria context_relevance needs context=\.\.\."):
        own_judge.score("out", criteria.CONTEXT_RELEVANCE, input="q")
    assert own_judge.score("Returns within 30 days", criteria.GROUNDEDNESS, context="policy").criteria == (
        criteria.GROUNDEDNESS
    )


def test_a_replay_whose_context_changed_says_so(pytester, monkeypatch):
    pytester.makeconftest(FAKE_CONFTEST)
    judged = """
from pytest_llmjudge import assert_judged

def test_grounded():
    assert_judged("Returns within 30 days. SCORE=0.9", "Grounded", context=["{passage}"])
"""
    pytester.makepyfile(test_answers=judged.format(passage="Returns are accepted within 30 days."))
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1)
    (entry,) = stored_entries(pytester.path)
    assert entry["context"] == ["Returns are accepted within 30 days."] and "step" not in entry

    pytester.makepyfile(test_answers=judged.format(passage="Returns are accepted within 14 days."))
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*nearest stored: key *, which differs in context, messages_sha256*"])
