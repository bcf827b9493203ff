"""Echoes and off-scale scores met through pytest, the real LiteLLM client and a local judge server.

A reply that only copies the prompt, or whose score lies off the asked scale, is asked again once in the
same conversation; still so, the judgment fails as unreadable, nothing is stored, and a stored reply of
that kind fails the same way on replay.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer, reply_json
from helpers.verdicts import stored_entries, verdict_files

OUTPUT = "Our shoes: Rating: 5/5 from 300 customers."
TESTS = f"""
from pytest_llmjudge import assert_judged

def test_shoes():
    assert_judged({OUTPUT!r}, "Says whether the shoes are waterproof", threshold=0.7)
"""
OFF_SCALE = '{"reasoning": "on a 0-10 scale this is poor", "score": 3}'


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with OpenAIServer() as fresh:
        yield fresh


def run(pytester: pytest.Pytester, server: OpenAIServer, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_shoes=TESTS)
    return pytester.runpytest(
        f"--judge-model={MODEL}",
        f"--judge-api-base={server.base_url}",
        "--judge-retries=0",
        "--judge-report=report.json",
        *args,
    )


def judgments(root: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads((root / "report.json").read_text())["judgments"]  # type: ignore[no-any-return]


def echo_the_output(request: dict) -> str:  # type: ignore[type-arg]
    """A judge that answers with the output under test, word for word, untagged (asked again too)."""
    return OUTPUT if any(OUTPUT in str(m.get("content")) for m in request["messages"]) else "I would rather not say."


def test_a_judge_echoing_the_output_is_asked_again_then_fails(pytester: pytest.Pytester, server: OpenAIServer) -> None:
    server.set_responder(echo_the_output)
    result = run(pytester, server, "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*nothing of its own*"])
    assert server.request_count == 2 and stored_entries(pytester.path) == []
    assert judgments(pytester.path)[0]["live_calls"] == 2


def test_an_echo_then_a_judgment_of_its_own_is_stored(pytester: pytest.Pytester, server: OpenAIServer) -> None:
    server.enqueue(OUTPUT, reply_json(0.1, "It never says whether the shoes are waterproof."))
    result = run(pytester, server, "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*JudgmentFailed*0.10*"])
    (entry,) = stored_entries(pytester.path)
    assert entry["retried_from"] == [OUTPUT] and entry["score"] == 0.1


def test_a_score_off_the_scale_is_asked_again_then_fails_naming_the_scale(
    pytester: pytest.Pytester, server: OpenAIServer
) -> None:
    server.enqueue(OFF_SCALE, OFF_SCALE)
    result = run(pytester, server, "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*outside the 0-1 scale*"])
    assert server.request_count == 2 and stored_entries(pytester.path) == []


def test_a_stored_off_scale_reply_fails_on_replay_too(pytester: pytest.Pytester, server: OpenAIServer) -> None:
    server.enqueue(reply_json(0.9, "Says they are waterproof."))
    run(pytester, server, "--judge-mode=auto").assert_outcomes(passed=1)
    (path,) = verdict_files(pytester.path)
    data = json.loads(path.read_text())
    (entry,) = data["verdicts"].values()
    entry["reply"] = '{"reasoning": "Says they are waterproof.", "score": 9}'  # as an older version stored it
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
    result = run(pytester, server, "--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*outside the 0-1 scale*"])
    assert server.request_count == 1
