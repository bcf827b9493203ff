"""A judge's reply is capped by default (a small local judge ran away for two minutes), keys unchanged.

Through pytest and the doctor, against the local OpenAI-compatible server with the real LiteLLM client.
"""

from __future__ import annotations

import json

import pytest

from helpers import JUDGED, MODEL
from helpers.openai_server import Reply, refusing
from helpers.verdicts import entries_by_key
from pytest_llmjudge.cli import main

# The key this judgment had before any default cap existed: a default cap must not re-judge anything.
JUDGED_KEY = "90b6066b4d56870a22a638eab105903261d128d43070a6deedb6b9394d9d32cc"


def test_a_judge_call_is_capped_by_default_and_its_key_does_not_change(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.requests[0]["max_tokens"] == 2048
    ((key, entry),) = entries_by_key(pytester.path).items()
    assert key == JUDGED_KEY
    assert "max_tokens" not in entry, "the default cap is sent, not stored as configured"
    assert entry["sent"]["max_tokens"] == 2048


@pytest.mark.parametrize(
    ("option", "sent"),
    [("--judge-max-tokens=300", 300), ("--judge-reasoning-effort=low", None)],
    ids=["configured", "reasoning-effort"],
)
def test_a_configured_cap_or_a_reasoning_effort_replaces_the_default(pytester, openai_server, live_args, option, sent):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto", option).assert_outcomes(passed=1)
    assert openai_server.requests[0].get("max_tokens") == sent
    assert openai_server.requests[0].get("max_completion_tokens") is None


# -- the doctor ---------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch):
    """Run where no ini file of this project is found."""
    monkeypatch.chdir(tmp_path)


def doctor(capsys: pytest.CaptureFixture[str], server, *args: str) -> tuple[int, list[str]]:
    code = main(["doctor", f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", *args])
    return code, capsys.readouterr().out.splitlines()


def line(lines: list[str], name: str) -> str:
    return next(text for text in lines if text[6:].startswith(name))


def test_the_doctor_suggests_max_tokens_when_a_probe_is_cut_off(capsys, openai_server):
    openai_server.set_responder(
        lambda request: Reply(content='{"reasoning": "Let me think about', finish_reason="length")
    )
    code, lines = doctor(capsys, openai_server)
    assert code == 1
    assert "cut off at max_tokens" in line(lines, "probe score")
    advice = line(lines, "max tokens")
    assert "cut off at max_tokens (now 2048 tokens)" in advice and "--judge-max-tokens" in advice


def test_the_doctor_suggests_max_tokens_when_a_probe_is_slow(capsys, openai_server, monkeypatch):
    from pytest_llmjudge import doctor as doctor_module

    monkeypatch.setattr(doctor_module, "SLOW_PROBE_S", 0.0)  # every probe is "slow": the advice is what is tested
    openai_server.set_responder(lambda request: json.dumps({"reasoning": "ok", "score": 0.9, "verdict": "pass"}))
    _, lines = doctor(capsys, openai_server, "--judge-max-tokens=1000")
    assert "--judge-max-tokens=512 (now 1000 tokens)" in line(lines, "max tokens")


def test_the_doctor_says_what_response_format_really_went_out(capsys, openai_server):
    openai_server.set_responder(refusing("json_schema", "json_object+schema", status=500))  # json_object only
    _, lines = doctor(capsys, openai_server)
    assert openai_server.requests[-1]["response_format"] == {"type": "json_object"}
    assert line(lines, "parameters") == (
        "ok    parameters         sent temperature=0.0, max_tokens=2048, response_format=json_object"
    )
