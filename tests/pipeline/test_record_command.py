"""The re-record hint of a replay miss is a command that works as written: run as printed, it records
the missed judgment (or simulated user's turn) with the model, api base and judge settings the
recording used, and the next replay passes with nothing configured.

Each test drives pytest (pytester) with the real LiteLLM client against a local server, then runs the
printed command itself in a subprocess, word for word.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import JUDGED, MODEL
from helpers.openai_server import OpenAIServer

RECORDED_WITH = ["--judge-max-tokens=512", "--judge-temperature=0.2", '--judge-params={"seed": 7}']


def printed_command(output: str) -> list[str]:
    """The words of the command a miss prints after "record it with a reachable ...: "."""
    found = re.search(r"record it with a reachable \w+: (pytest .*?)  \(then commit the verdict file", output)
    assert found, output
    return shlex.split(found[1])


def run_as_printed(root: Path, words: list[str]) -> subprocess.CompletedProcess[str]:
    """`words` run in `root` as a shell would run them, `pytest` being this environment's."""
    assert words[0] == "pytest"
    pytest_script = str(Path(sys.executable).with_name("pytest"))
    return subprocess.run(
        [pytest_script, *words[1:]], cwd=root, env=dict(os.environ), capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def server():
    with OpenAIServer() as running:
        yield running


def test_a_replay_miss_prints_the_command_that_records_it_as_recorded(pytester, server, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
    pytester.runpytest(*live, *RECORDED_WITH, "--judge-mode=auto", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.makepyfile(test_refund=JUDGED.replace("30 days.", "thirty days."))  # the output changed

    monkeypatch.setenv("CI", "true")  # replay: the model and its settings are adopted from the recording
    missed = pytester.runpytest(f"--judge-api-base={server.base_url}", "-p", "no:cacheprovider")
    missed.assert_outcomes(failed=1)
    words = printed_command(missed.stdout.str())
    assert words[:3] == ["pytest", "test_refund.py::test_refund", "--judge-mode=auto"]
    assert {f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", *RECORDED_WITH} <= set(words), words

    before = server.request_count
    recorded = run_as_printed(pytester.path, words)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "1 passed" in recorded.stdout
    (request,) = server.requests[before:]
    assert (request["model"], request["max_tokens"], request["temperature"], request["seed"]) == (
        "judge-test",
        512,
        0.2,
        7,
    )
    again = pytester.runpytest("-p", "no:cacheprovider")  # CI, nothing configured: the new recording replays
    again.assert_outcomes(passed=1)


def test_with_no_api_base_known_the_command_says_where_to_add_it(pytester, server, monkeypatch):
    pytester.makepyfile(test_refund=JUDGED)
    live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
    pytester.runpytest(*live, "--judge-mode=auto", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.makepyfile(test_refund=JUDGED.replace("30 days.", "thirty days."))
    monkeypatch.setenv("CI", "true")
    missed = pytester.runpytest("-p", "no:cacheprovider")
    missed.assert_outcomes(failed=1)
    out = missed.stdout.str()
    assert printed_command(out) == [
        "pytest",
        "test_refund.py::test_refund",
        "--judge-mode=auto",
        f"--judge-model={MODEL}",
    ]
    assert "verdict files do not record the api base: add --judge-api-base=URL" in out


PERSONA = "Ana, whose new shoes (order A-1042) are too small. She wants to return them and get her money back."
USER_LINES = ["Hi, the shoes of order A-1042 are too small. Can I return them?", "How?", "And my money?"]
CHAT = f"""
from pytest_llmjudge import simulate

REPLIES = {{replies!r}}

def shop_assistant(messages):
    return REPLIES[len(messages) // 2]

def test_chat():
    chat = simulate(shop_assistant, {PERSONA!r}, turns=3)
    assert len(chat) == 6
"""
REPLIES = ["Yes, within 30 days.", "Print the label from your account page.", "Within five days."]


def playing_the_user(request: dict) -> str:
    said = sum(1 for m in request["messages"] if m["role"] == "assistant")
    return USER_LINES[said]


def test_a_simulate_miss_prints_the_command_that_records_the_user_s_turns(pytester, monkeypatch):
    pytester.makepyfile(test_chat=CHAT.format(replies=REPLIES))
    with OpenAIServer(playing_the_user) as server:
        live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        pytester.runpytest(*live, "--judge-mode=auto", "-p", "no:cacheprovider").assert_outcomes(passed=1)
        changed = [REPLIES[0], "Returns go through our partner's website.", REPLIES[2]]
        pytester.makepyfile(test_chat=CHAT.format(replies=changed))

        monkeypatch.setenv("CI", "true")
        missed = pytester.runpytest(f"--judge-api-base={server.base_url}", "-p", "no:cacheprovider")
        missed.assert_outcomes(failed=1)
        assert "simulate(): no recorded user turn 3" in missed.stdout.str()
        words = printed_command(missed.stdout.str())
        assert {f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}"} <= set(words), words

        before = server.request_count
        recorded = run_as_printed(pytester.path, words)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        assert server.request_count == before + 1  # the third user turn, the only one not recorded
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)  # server gone, CI: it replays
