"""Recorded generations: `generate` and friends call the model under test, record its replies in the
verdict file, and replay them offline like verdicts.

Each test drives pytest itself (pytester) with the real LiteLLM client against the local server,
which plays both parts: the model under test (`openai/gen-test`) and the judge (`openai/judge-test`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import CANARY_KEY, MODEL
from helpers.openai_server import OpenAIServer, score_from_prompt

GEN_MODEL = "openai/gen-test"


def model_reply(request: dict) -> str:
    """The model under test: a reply naming the prompt and temperature, which the judge scores 0.9."""
    prompt = request["messages"][-1]["content"]
    return f"Reply to [{prompt}] at t={request.get('temperature')}. Returns within 30 days. SCORE=0.9"


def both_parts(request: dict) -> str:
    """The model under test for gen-test, the fake judge (SCORE=x in the output) for everything else."""
    if request.get("model") == "gen-test":
        return model_reply(request)
    return score_from_prompt(request)


def generation_requests(server: OpenAIServer) -> list[dict]:
    return [r for r in server.requests if r.get("model") == "gen-test"]


def verdict_file(root: Path, module: str, test: str) -> dict:
    return json.loads((root / "judge_verdicts" / module / f"{test}.json").read_text())


@pytest.fixture
def server(openai_server: OpenAIServer) -> OpenAIServer:
    openai_server.set_responder(both_parts)
    return openai_server


def record_args(server: OpenAIServer) -> list[str]:
    return [
        f"--judge-model={MODEL}",
        f"--judge-api-base={server.base_url}",
        "--judge-retries=0",
        f"--generate-model={GEN_MODEL}",
        f"--generate-api-base={server.base_url}",
        "--judge-mode=auto",
    ]


GENERATE_THEN_JUDGE = f"""
from pytest_llmjudge import assert_judged, generate

def test_bot():
    reply = generate(
        "Can I return shoes after 20 days?", system="You are a shop assistant.", temperature=0.2,
        api_key="{CANARY_KEY}",
    )
    assert reply.startswith("Reply to [Can I return shoes after 20 days?] at t=0.2.")
    assert_judged(reply, "Says returns are accepted within 30 days", threshold=0.7)
"""


def test_generate_records_then_replays_offline_with_no_call(pytester, monkeypatch):
    """Given a test that generates then judges, recorded live, when it is replayed with CI=true and
    the server stopped, it passes and nothing is sent."""
    pytester.makepyfile(test_bot=GENERATE_THEN_JUDGE)
    with OpenAIServer(both_parts) as private:
        pytester.runpytest(*record_args(private)).assert_outcomes(passed=1)
        sent = generation_requests(private)
        assert len(sent) == 1 and len(private.requests) == 2  # one generation, one judgment
        assert sent[0]["temperature"] == 0.2
        assert sent[0]["messages"][0] == {"role": "system", "content": "You are a shop assistant."}
    count = len(private.requests)

    stored = verdict_file(pytester.path, "test_bot", "test_bot")
    assert len(stored["generations"]) == 1 and len(stored["verdicts"]) == 1
    (generation,) = stored["generations"].values()
    assert generation["model"] == GEN_MODEL and generation["params"] == {"temperature": 0.2}
    text = (pytester.path / "judge_verdicts/test_bot/test_bot.json").read_text()
    assert CANARY_KEY not in text and "api_key" not in text

    monkeypatch.setenv("CI", "true")  # no model, no judge, no api base given: all found in the file
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "1 judged, 1 replayed, 0 live" in result.stdout.str()
    assert len(private.requests) == count


BATCH_AND_VARIATIONS = """
from pytest_llmjudge import assert_judged, generate_batch, generate_variations

def test_batch():
    replies = generate_batch("Can I return shoes?", n=3, temperature=(0.2, 0.6))
    assert [r.split(" at t=")[1].split(".")[0:2] for r in replies] == [["0", "2"], ["0", "4"], ["0", "6"]]
    for reply in replies:
        assert_judged(reply, "Says returns are accepted within 30 days")

def test_variations():
    replies = generate_variations("Explain the refund policy.", prompts=["Be brief. {task}", "You are a pirate."])
    assert replies[0].startswith("Reply to [Be brief. Explain the refund policy.]")
    assert replies[1].startswith("Reply to [You are a pirate.\\n\\nExplain the refund policy.]")
    for reply in replies:
        assert_judged(reply, "Says returns are accepted within 30 days")
"""


def test_batch_and_variations_record_every_member_then_replay_offline(pytester, monkeypatch):
    """Given generate_batch (n=3 over a temperature range) and generate_variations (two prompts), when
    recorded and then replayed with CI=true and the server stopped, every reply comes back in order."""
    pytester.makepyfile(test_many=BATCH_AND_VARIATIONS)
    with OpenAIServer(both_parts) as private:
        pytester.runpytest(*record_args(private)).assert_outcomes(passed=2)
        assert sorted(r["temperature"] for r in generation_requests(private) if "temperature" in r) == [0.2, 0.4, 0.6]
        assert len(generation_requests(private)) == 5
    count = len(private.requests)

    batch = verdict_file(pytester.path, "test_many", "test_batch")
    assert sorted(g["index"] for g in batch["generations"].values()) == [0, 1, 2]
    assert len(batch["verdicts"]) == 3
    assert len(verdict_file(pytester.path, "test_many", "test_variations")["generations"]) == 2

    monkeypatch.setenv("CI", "true")
    pytester.runpytest().assert_outcomes(passed=2)
    assert len(private.requests) == count


def test_a_generation_miss_in_replay_names_what_differs(pytester, server):
    """Given recorded generations, when the prompt of one and the temperature of another change, the
    replay fails with a ReplayMiss naming the prompt and the parameters, and calls nothing."""
    module = """
from pytest_llmjudge import generate

def test_prompt():
    generate("{prompt}")

def test_temperature():
    generate("Hello", temperature={temperature})
"""
    pytester.makepyfile(test_gen=module.format(prompt="Can I return shoes?", temperature=0.3))
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=2)
    count = server.request_count

    pytester.makepyfile(test_gen=module.format(prompt="Can I return boots?", temperature=0.7))
    result = pytester.runpytest(f"--generate-model={GEN_MODEL}", "--judge-mode=replay")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "ReplayMiss: no stored generation for this call of generate() (mode replay: --judge-mode)" in out
    assert "which differs in prompt" in out
    assert "which differs in parameters (temperature, ...)" in out
    assert "--judge-mode=auto" in out and "Traceback" not in out
    assert server.request_count == count


REFRESHED = """
from pytest_llmjudge import assert_judged, generate

def test_bot():
    reply = generate("Can I return shoes?")
    assert_judged(reply, "Says returns are accepted within 30 days", threshold=0.7)
"""


def new_model(request: dict) -> str:
    """The model under test after a change: another reply to the same prompt."""
    if request.get("model") == "gen-test":
        return model_reply(request).replace("Reply to", "New reply to")
    return score_from_prompt(request)


def test_refresh_regenerates_and_rejudges_the_new_reply(pytester, server, monkeypatch):
    """Given a recorded generation and verdict, when the model answers differently and the run is in
    refresh mode, the generation is replaced and the new reply judged; a replay then needs neither call."""
    pytester.makepyfile(test_bot=REFRESHED)
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=1)
    before = verdict_file(pytester.path, "test_bot", "test_bot")

    server.set_responder(new_model)
    count = server.request_count
    args = [a if a != "--judge-mode=auto" else "--judge-mode=refresh" for a in record_args(server)]
    pytester.runpytest(*args).assert_outcomes(passed=1)
    assert server.request_count == count + 2  # the model asked again, and the judge on its new reply
    after = verdict_file(pytester.path, "test_bot", "test_bot")
    assert after["generations"].keys() == before["generations"].keys()  # the same call, its reply replaced
    (generation,) = after["generations"].values()
    assert generation["reply"].startswith("New reply to")
    assert any(v["output"].startswith("New reply to") for v in after["verdicts"].values())

    monkeypatch.setenv("CI", "true")
    count = server.request_count
    pytester.runpytest().assert_outcomes(passed=1)
    assert server.request_count == count
