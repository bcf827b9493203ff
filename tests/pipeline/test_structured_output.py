"""Structured output and asking again, through pytest and the real LiteLLM client against a local server.

Each test gets a server of its own (a fresh api base), since what a server accepts is remembered
per model and api base for the process.  The server records each request's `response_format`,
refuses what a test tells it to, and answers prose or JSON as queued.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer, Reply, refusing, reply_json, response_format_type
from helpers.verdicts import stored_entries
from pytest_llmjudge.pipeline.reask import REASK_MESSAGE
from pytest_llmjudge.pipeline.structured import structured_line
from pytest_llmjudge.rubrics import Case, Rubric
from pytest_llmjudge.rubrics.checklist import Checklist
from pytest_llmjudge.rubrics.dimensions import Dimensions
from pytest_llmjudge.rubrics.likert import Likert
from pytest_llmjudge.rubrics.pairwise import Pairwise
from pytest_llmjudge.rubrics.passfail import PassFail
from pytest_llmjudge.rubrics.questions import Questions
from pytest_llmjudge.rubrics.score import Score
from pytest_llmjudge.rubrics.template import Template

SUPPORTED = "openai/gpt-4o-mini"  # LiteLLM says this model supports response schemas (MODEL: it does not)

JUDGED = """
from pytest_llmjudge import assert_judged

def test_{n}():
    assert_judged("Returns are accepted within 30 days. SCORE=0.9 #{n}", "States the return window", threshold=0.7)
"""
UNREADABLE = "I would rather not say."


@pytest.fixture
def server():
    with OpenAIServer() as fresh:
        yield fresh


def write_tests(pytester: pytest.Pytester, count: int = 1) -> None:
    pytester.makepyfile(test_refund="\n".join(JUDGED.format(n=i) for i in range(count)))


def run(pytester: pytest.Pytester, server: OpenAIServer, *args: str, model: str = MODEL) -> pytest.RunResult:
    return pytester.runpytest(
        f"--judge-model={model}",
        f"--judge-api-base={server.base_url}",
        "--judge-retries=0",
        "--judge-report=report.json",
        *args,
    )


def formats(server: OpenAIServer) -> list[str | None]:
    return [response_format_type(r) for r in server.requests]


def judgments(root: Path) -> list[dict]:
    return json.loads((root / "report.json").read_text())["judgments"]


# -- what each rubric asks for ---------------------------------------------------------------------

CASE = Case.build("Returns are accepted within 30 days.", "States the return window", "When?", "30 days")
EXAMPLES: list[tuple[Rubric, dict]] = [
    (Score(), {"reasoning": "r", "score": 0.8}),
    (PassFail(), {"reasoning": "r", "verdict": "pass", "confidence": "high"}),
    (Likert(1, 5), {"reasoning": "r", "score": 4}),
    (Template("Judge {output}", scale=(0, 10)), {"reasoning": "r", "score": 7}),
    (Questions(["Is it polite?"]), {"reasoning": "r", "score": 1.0}),
    (Pairwise(), {"reasoning": "r", "winner": "A"}),
    (
        Dimensions(),
        {
            "reasoning": "r",
            "scores": dict.fromkeys(["correctness", "relevance", "completeness", "clarity", "professionalism"], 0.5),
        },
    ),
    (
        Checklist(["Names 30 days", "Is polite"]),
        {"results": [{"id": 1, "reasoning": "r", "verdict": "PASS"}, {"id": 2, "reasoning": "r", "verdict": "FAIL"}]},
    ),
]


@pytest.mark.parametrize(
    ("rubric", "example"), EXAMPLES, ids=lambda v: type(v).__name__ if isinstance(v, Rubric) else ""
)
def test_each_rubric_declares_the_reply_its_prompt_asks_for_and_its_parser_reads(rubric, example):
    schema = rubric.reply_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(example, schema)  # the reply the prompt asks for fits the schema
    prompt = rubric.prompts(CASE)[0]
    for field in schema["properties"]:  # every field the schema asks for is one the prompt names
        assert f'"{field}"' in prompt.messages[0]["content"]
    rubric.parse(prompt, _reply(example))  # and the parser reads it
    with pytest.raises(jsonschema.ValidationError):  # strict: nothing else, nothing missing
        jsonschema.validate({**example, "extra": 1}, schema)


def _reply(example: dict):
    from pytest_llmjudge.rubrics import Reply as RubricReply

    return RubricReply(json.dumps(example))


def test_a_rubric_of_your_own_gets_no_structured_output_unless_it_declares_a_schema():
    class Mine(Rubric):
        name = "mine"

        def prompts(self, case):
            return Score().prompts(case)

    assert Mine().reply_schema() is None


# -- asking for the schema -------------------------------------------------------------------------


def test_the_schema_is_sent_where_litellm_says_the_model_supports_it(pytester, server):
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", model=SUPPORTED).assert_outcomes(passed=1)
    (request,) = server.requests
    sent = request["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"] == Score().reply_schema() and sent["json_schema"]["strict"] is True
    (entry,) = stored_entries(pytester.path)
    assert entry["structured"] == "json_schema"
    assert entry["params"]["response_format"]["json_schema"].keys() == {"name", "sha256"}  # named, not copied
    assert judgments(pytester.path)[0]["structured"] == "json_schema"


def test_auto_sends_json_mode_with_the_schema_beside_it_to_a_server_litellm_knows_nothing_of(pytester, server):
    # LiteLLM says no schema support for every local route; llama.cpp's servers read a schema in this form.
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto").assert_outcomes(passed=1)
    assert [r["response_format"] for r in server.requests] == [
        {"type": "json_object", "schema": Score().reply_schema()}
    ]
    (entry,) = stored_entries(pytester.path)
    assert entry["structured"] == "json_object+schema"
    recorded = entry["sent"]["response_format"]
    assert recorded["type"] == "json_object" and recorded["schema"].keys() == {"name", "sha256"}  # named, not copied
    assert recorded["schema"] == entry["params"]["response_format"]["json_schema"]


def test_on_sends_the_schema_even_where_litellm_says_no(pytester, server):
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", "--judge-structured=on").assert_outcomes(passed=1)
    assert formats(server) == ["json_schema"]


def test_off_sends_no_response_format_and_stores_none(pytester, server):
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", "--judge-structured=off", model=SUPPORTED).assert_outcomes(passed=1)
    assert "response_format" not in server.requests[0]
    (entry,) = stored_entries(pytester.path)
    assert "structured" not in entry and "response_format" not in entry["params"]
    assert "structured" not in judgments(pytester.path)[0]


def test_the_schema_is_part_of_the_key_and_auto_and_on_share_it(pytester, server):
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", "--judge-structured=off").assert_outcomes(passed=1)
    off_key = judgments(pytester.path)[0]["key"]
    # Nothing about the judge configured: what was recorded (no schema) is adopted, and replays.
    run(pytester, server, "--judge-mode=replay").assert_outcomes(passed=1)
    run(pytester, server, "--judge-mode=replay", "--judge-structured=on").assert_outcomes(failed=1)  # asks for it
    run(pytester, server, "--judge-mode=auto", "--judge-structured=on").assert_outcomes(passed=1)
    on_key = judgments(pytester.path)[0]["key"]
    assert on_key != off_key
    before = server.request_count
    run(pytester, server, "--judge-mode=replay", "--judge-structured=auto").assert_outcomes(passed=1)
    assert judgments(pytester.path)[0]["key"] == on_key and server.request_count == before


def test_the_marker_sets_the_mode(pytester, server):
    pytester.makepyfile(
        test_marked="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(structured="off")
        def test_plain():
            assert_judged("SCORE=0.9", "fine", threshold=0.7)
        """
    )
    run(pytester, server, "--judge-mode=auto").assert_outcomes(passed=1)
    assert formats(server) == [None]


# -- when the server refuses it --------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 500])
def test_a_refused_schema_falls_back_to_json_once_and_is_remembered_for_the_run(pytester, server, status):
    server.set_responder(refusing("json_schema", status=status))
    write_tests(pytester, count=3)
    result = run(pytester, server, "--judge-mode=auto", model=SUPPORTED)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["llmjudge: structured output: 3 json_object+schema"])  # the run says what it used
    assert formats(server) == ["json_schema"] + ["json_object+schema"] * 3  # one extra call
    assert [e["structured"] for e in stored_entries(pytester.path)] == ["json_object+schema"] * 3
    assert [(j["structured"], j["live_calls"]) for j in judgments(pytester.path)] == [("json_object+schema", 1)] * 3


def test_a_new_run_learns_again_what_the_server_at_the_same_address_takes(pytester, server):
    # What a server took is the run's knowledge, not the process's: a later run in the same process (pytester,
    # a notebook, a server restarted at the same address or a port used again) asks for the schema again.
    server.set_responder(refusing("json_schema", status=500))
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", model=SUPPORTED).assert_outcomes(passed=1)
    assert formats(server) == ["json_schema", "json_object+schema"]
    server.reset()  # the same address now takes the schema
    run(pytester, server, "--judge-mode=refresh", model=SUPPORTED).assert_outcomes(passed=1)
    assert formats(server) == ["json_schema"]


def test_concurrent_first_calls_wait_for_the_one_that_learns_what_the_server_takes(pytester, server):
    server.set_responder(refusing("json_schema", status=500))
    server.latency_s = 0.05
    pytester.makepyfile(
        test_many="""
        def test_many(judge):
            verdicts = judge.score_many([(f"SCORE=0.9 #{i}", "fine") for i in range(6)])
            assert [v.score for v in verdicts] == [0.9] * 6
        """
    )
    run(pytester, server, "--judge-mode=auto", model=SUPPORTED).assert_outcomes(passed=1)
    assert sorted(formats(server), key=str) == ["json_object+schema"] * 6 + ["json_schema"]


def test_a_schema_beside_json_mode_refused_too_falls_back_to_plain_json(pytester, server):
    server.set_responder(refusing("json_schema", "json_object+schema"))
    write_tests(pytester, count=2)
    run(pytester, server, "--judge-mode=auto", model=SUPPORTED).assert_outcomes(passed=2)
    assert formats(server) == ["json_schema", "json_object+schema", "json_object", "json_object"]
    assert [e["structured"] for e in stored_entries(pytester.path)] == ["json_object", "json_object"]


def test_plain_json_refused_too_falls_back_to_no_response_format(pytester, server):
    server.set_responder(refusing("json_schema", "json_object+schema", "json_object"))
    write_tests(pytester, count=2)
    run(pytester, server, "--judge-mode=auto", model=SUPPORTED).assert_outcomes(passed=2)
    assert formats(server) == ["json_schema", "json_object+schema", "json_object", None, None]
    assert [e["structured"] for e in stored_entries(pytester.path)] == ["none", "none"]


def test_under_on_a_server_that_refuses_json_schema_gets_the_schema_beside_json_mode(pytester, server):
    server.set_responder(refusing("json_schema", status=500))  # as llama-cpp-python's server answers
    write_tests(pytester, count=2)
    run(pytester, server, "--judge-mode=auto", "--judge-structured=on").assert_outcomes(passed=2)
    assert formats(server) == ["json_schema", "json_object+schema", "json_object+schema"]


def test_under_on_a_refused_schema_fails_the_judgment_and_says_what_to_do(pytester, server):
    server.set_responder(refusing("json_schema", "json_object+schema"))
    write_tests(pytester)
    result = run(pytester, server, "--judge-mode=auto", "--judge-structured=on")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*refused the JSON schema*--judge-structured=auto*"])
    assert formats(server) == ["json_schema", "json_object+schema"] and stored_entries(pytester.path) == []


def test_any_other_server_error_is_not_taken_for_a_refusal(pytester, server):
    server.enqueue(Reply(status=400, error_message="context length exceeded"))
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", model=SUPPORTED).assert_outcomes(failed=1)
    assert formats(server) == ["json_schema"]


def test_replay_sends_nothing_and_gives_the_verdict_recorded_either_way(pytester, server):
    server.set_responder(refusing("json_schema"))
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", model=SUPPORTED).assert_outcomes(passed=1)
    fallback = judgments(pytester.path)[0]
    sent = server.request_count
    result = run(pytester, server, "--judge-mode=replay", model=SUPPORTED)
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*structured output*")  # a replay sends nothing, so it says nothing
    replayed = judgments(pytester.path)[0]
    assert server.request_count == sent
    assert (replayed["source"], replayed["structured"], replayed["key"]) == (
        "replayed",
        "json_object+schema",
        fallback["key"],
    )

    with OpenAIServer() as accepting:  # the same judgment where the schema is accepted: the same verdict
        (pytester.path / "judge_verdicts").rename(pytester.path / "first_verdicts")
        run(pytester, accepting, "--judge-mode=auto", "-p", "no:cacheprovider", model=SUPPORTED).assert_outcomes(
            passed=1
        )
        structured = judgments(pytester.path)[0]
    assert structured["structured"] == "json_schema"
    assert (structured["score"], structured["passed"], structured["key"]) == (
        fallback["score"],
        fallback["passed"],
        fallback["key"],
    )


# -- asking again ----------------------------------------------------------------------------------


def test_an_unreadable_reply_is_asked_again_in_the_same_conversation_and_replays_offline(pytester, server):
    server.enqueue(UNREADABLE, reply_json(0.9))
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto").assert_outcomes(passed=1)
    first, second = server.requests
    assert second["messages"] == [
        *first["messages"],
        {"role": "assistant", "content": UNREADABLE},
        {"role": "user", "content": REASK_MESSAGE},
    ]
    assert second.get("response_format") == first.get("response_format")
    (entry,) = stored_entries(pytester.path)
    assert entry["retried_from"] == [UNREADABLE] and json.loads(entry["reply"])["score"] == 0.9
    (judgment,) = judgments(pytester.path)
    assert (judgment["score"], judgment["live_calls"]) == (0.9, 2)

    run(pytester, server, "--judge-mode=replay").assert_outcomes(passed=1)
    assert server.request_count == 2
    assert judgments(pytester.path)[0]["score"] == 0.9


def test_with_parse_retries_off_an_unreadable_reply_raises_after_one_call(pytester, server):
    server.enqueue(UNREADABLE)
    write_tests(pytester)
    result = run(pytester, server, "--judge-mode=auto", "--judge-parse-retries=0")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*"])
    assert server.request_count == 1 and stored_entries(pytester.path) == []


def test_a_reply_still_unreadable_after_asking_again_raises_and_counts_both_calls(pytester, server):
    server.enqueue(UNREADABLE, "Still not saying.")
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto", "--judge-parse-retries=1").assert_outcomes(failed=1)
    assert server.request_count == 2 and stored_entries(pytester.path) == []
    (judgment,) = judgments(pytester.path)
    assert judgment["error"] == "VerdictParseError" and judgment["live_calls"] == 2


def test_a_reply_cut_off_at_max_tokens_is_not_asked_again(pytester, server):
    server.enqueue(Reply(content='{"reasoning": "The output states', finish_reason="length"))
    write_tests(pytester)
    result = run(pytester, server, "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*cut off at max_tokens*"])
    assert server.request_count == 1


def test_parse_retries_come_from_the_environment_and_the_ini_file(pytester, server, monkeypatch):
    server.enqueue(UNREADABLE, UNREADABLE, reply_json(0.9))
    pytester.makeini("[pytest]\njudge_parse_retries = 2\n")
    write_tests(pytester)
    run(pytester, server, "--judge-mode=auto").assert_outcomes(passed=1)
    assert server.request_count == 3
    monkeypatch.setenv("LLMJUDGE_PARSE_RETRIES", "0")
    server.enqueue(UNREADABLE)
    run(pytester, server, "--judge-mode=refresh").assert_outcomes(failed=1)
    assert server.request_count == 4


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--judge-structured=maybe", "*--judge-structured must be one of auto, on, off*"),
        ("--judge-parse-retries=-1", "*--judge-parse-retries must be a whole number >= 0*"),
    ],
)
def test_bad_values_are_usage_errors(pytester, server, option, message):
    write_tests(pytester)
    result = run(pytester, server, "--judge-mode=auto", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert server.request_count == 0


def test_the_summary_line_counts_what_the_judgments_used():
    # None, or "off": a judgment that asked for no schema (--judge-structured=off, a rubric with none)
    used = ["json_schema", None, "json_object", "json_schema", "json_object,none", "off", "json_object+schema"]
    assert structured_line(used) == (
        "llmjudge: structured output: 2 json_schema, 1 json_object+schema, 2 json_object, 1 none, 2 off"
    )
    assert structured_line([None, None]) is None


@pytest.mark.parametrize(
    ("model", "api_base", "first", "ladder"),
    [
        # A server of your own: LiteLLM knows nothing of its schema support, so JSON mode with the schema.
        (MODEL, "http://127.0.0.1:1/v1", "json_object+schema", ("json_object+schema", "json_object", "none")),
        # A hosted API reads no schema beside JSON mode: it never gets one there.
        ("gpt-3.5-turbo", None, "json_object", ("json_object", "none")),
        (SUPPORTED, None, "json_schema", ("json_schema", "json_object", "none")),
    ],
)
def test_where_auto_starts_and_what_it_may_fall_back_to(model, api_base, first, ladder):
    import litellm

    from pytest_llmjudge.backends.formats import FORMATS, first_format
    from pytest_llmjudge.backends.formats import ladder as ladder_of

    provider = litellm.get_llm_provider(model)[1]
    start = first_format("auto", litellm, model, provider, api_base)
    assert start == first
    assert tuple(f for f in ladder_of("auto", api_base) if FORMATS.index(f) >= FORMATS.index(start)) == ladder
    assert ladder_of("on", api_base) == (("json_schema", "json_object+schema") if api_base else ("json_schema",))
