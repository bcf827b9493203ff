"""Secrets in what a test judges and in its name: redacted in every file, report and line the plugin writes."""

from __future__ import annotations

import pytest

from helpers import CANARY_KEY, FAKE_CONFTEST
from pytest_llmjudge import redact as redact_module
from pytest_llmjudge.redact import redact
from pytest_llmjudge.settings import SettingError, resolve

# A credential-named variable whose value is not key-shaped: only its name says it is a secret.
TOKEN = "plain-canary-token-5150"
# A variable whose name does not look like a credential: redacted only when the user names it.
AUTH = "auth-canary-value-8086"

LEAKY_CRITERIA = """
import os
import pytest
from pytest_llmjudge import assert_judged

def test_passes():
    assert_judged("fine SCORE=0.9", f"Must not mention {os.environ['OPENAI_API_KEY']} or {os.environ['SERVICE_TOKEN']} "
                  f"or {os.environ['MY_AUTH']}", threshold=0.5)

def test_fails():
    assert_judged("poor SCORE=0.1", f"Never says {os.environ['SERVICE_TOKEN']} or {os.environ['MY_AUTH']}", threshold=0.5)

def test_unreadable():
    assert_judged("GARBLE", f"Never says {os.environ['SERVICE_TOKEN']} or {os.environ['MY_AUTH']}")
"""


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", TOKEN)
    monkeypatch.setenv("MY_AUTH", AUTH)


def _everything(pytester: pytest.Pytester, result: pytest.RunResult) -> bytes:
    haystack = (result.stdout.str() + result.stderr.str()).encode()
    for path in pytester.path.rglob("*"):
        if path.is_file():
            haystack += path.read_bytes() + str(path).encode()
    return haystack


def _assert_no_secret(haystack: bytes) -> None:
    for secret in (CANARY_KEY, CANARY_KEY[3:], TOKEN, AUTH):
        assert secret.encode() not in haystack, secret


FLEETING_SECRET = """
import os
from pytest_llmjudge import assert_judged

def test_fleeting(monkeypatch):
    with monkeypatch.context() as scope:  # the credential is set for this judgment only
        scope.setenv("SERVICE_TOKEN", os.environ["FLEETING_VALUE"])
        assert_judged("poor SCORE=0.1", f"Never says {os.environ['SERVICE_TOKEN']}", threshold=0.5)
"""


def test_a_secret_set_only_while_judging_is_redacted_in_the_judgment_lines(pytester, monkeypatch):
    # The line is shown after the test body ends (with the failure): it is redacted with the secrets of
    # the judgment's own moment, not of the report's.
    monkeypatch.delenv("SERVICE_TOKEN", raising=False)
    monkeypatch.setenv("FLEETING_VALUE", "fleeting-canary-token-6174")  # a name no one takes for a secret
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_fleeting=FLEETING_SECRET)
    result = pytester.runpytest("--judge-mode=auto")
    result.assert_outcomes(failed=1)
    assert "FAIL 0.10" in result.stdout.str() and "Never says [redacted]" in result.stdout.str()
    assert b"fleeting-canary-token-6174" not in _everything(pytester, result)


@pytest.mark.parametrize("mode", ["auto", "refresh", "replay"])
def test_secrets_in_criteria_reach_no_report_no_file_and_no_line(pytester, secrets, mode):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_leaky=LEAKY_CRITERIA)
    reports = ["--judge-report=report.json", "--judge-html=report.html", "--junitxml=junit.xml", "-rA", "-v"]
    if mode != "auto":  # refresh and replay work on what a first run recorded
        pytester.runpytest("--judge-mode=auto", "--judge-redact-env=MY_AUTH").assert_outcomes(passed=1, failed=2)
    result = pytester.runpytest(f"--judge-mode={mode}", "--judge-redact-env=MY_AUTH", *reports)
    result.assert_outcomes(passed=1, failed=2)
    report = (pytester.path / "report.json").read_text()
    assert report.count("[redacted]") >= 5, "the criteria are in the report, redacted"
    assert "PASS 0.90" in result.stdout.str() and "[redacted]" in result.stdout.str()
    _assert_no_secret(_everything(pytester, result))


LEAKY_NAME = """
import os
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("token", [os.environ["SERVICE_TOKEN"], os.environ["MY_AUTH"]],
                         ids=[os.environ["SERVICE_TOKEN"], os.environ["MY_AUTH"]])
def test_named(token):
    assert_judged("fine SCORE=0.9", "Is fine", threshold=0.5)
"""


def test_a_secret_in_a_test_id_reaches_no_file_name_or_file(pytester, secrets, monkeypatch):
    monkeypatch.setenv("LLMJUDGE_REDACT_ENV", "MY_AUTH")
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_named=LEAKY_NAME)
    result = pytester.runpytest("--judge-mode=auto", "--judge-report=report.json", "--judge-html=report.html")
    result.assert_outcomes(passed=2)
    # (the store's own .llmjudge-tmp folder, git-ignored, holds no name of a test)
    names = sorted(p.name for p in (pytester.path / "judge_verdicts" / "test_named").iterdir() if p.name[0] != ".")
    assert len(names) == 2 and all("redacted" in name for name in names), names
    haystack = b""
    # pytest itself prints test ids and keeps them in its local cache (.pytest_cache): not ours to redact
    for path in pytester.path.rglob("*"):
        if path.is_file() and ".pytest_cache" not in path.parts:
            haystack += path.read_bytes() + str(path).encode()
    _assert_no_secret(haystack)
    monkeypatch.setenv("CI", "true")  # what was recorded under the redacted names replays
    pytester.runpytest().assert_outcomes(passed=2)


def test_redact_env_names_more_variables_in_every_spelling(monkeypatch):
    monkeypatch.setenv("MY_AUTH", AUTH)
    monkeypatch.setenv("OTHER_SETTING", "other-canary-value-42")
    assert redact(f"a {AUTH} b") == f"a {AUTH} b", "a name that does not look like a credential is not redacted"
    assert resolve({"redact_env": "MY_AUTH, OTHER_SETTING"}, {}, {}).redact_env == ("MY_AUTH", "OTHER_SETTING")
    assert resolve({}, {"redact_env": "MY_AUTH"}, {}).redact_env == ("MY_AUTH",)
    assert resolve({}, {}, {"LLMJUDGE_REDACT_ENV": "MY_AUTH"}).redact_env == ("MY_AUTH",)
    assert resolve({}, {}, {}).redact_env == ()
    with pytest.raises(SettingError, match="LLMJUDGE_REDACT_ENV"):
        resolve({}, {}, {"LLMJUDGE_REDACT_ENV": "MY AUTH"})
    redact_module.redact_variables(("MY_AUTH", "OTHER_SETTING"))
    try:
        assert redact(f"a {AUTH} b other-canary-value-42") == "a [redacted] b [redacted]"
    finally:
        redact_module.redact_variables(())
    assert AUTH in redact(AUTH)


def test_a_credential_set_while_another_variable_goes_is_redacted(monkeypatch):
    """The variables are read afresh: a new credential is seen even when the count of variables stays the same."""
    monkeypatch.setenv("SOME_PLAIN_SETTING", "x")
    assert redact(f"say {TOKEN}") == f"say {TOKEN}"
    monkeypatch.delenv("SOME_PLAIN_SETTING")
    monkeypatch.setenv("FRESH_TOKEN", TOKEN)
    assert redact(f"say {TOKEN}") == "say [redacted]"
    monkeypatch.setenv("FRESH_TOKEN", "another-token-value-77")
    assert redact(f"say {TOKEN} and another-token-value-77") == f"say {TOKEN} and [redacted]"


# -- one redaction on the way out: every field of every kind --------------------------------------

# A secret-named variable's value (not key-shaped) and a key-shaped value in no variable: the module
# reads both from the environment, so no test's source (which a traceback shows) holds either.
PLANTED_TOKEN = "planted-canary-token-2718"
PLANTED_KEY = "sk-proj-PlantedCanary31415926535"

EVERY_KIND = """
import os
import pytest
from pytest_llmjudge import (
    ContextPrecision, Faithfulness, PerTurn, Trajectory, assert_better, assert_judged, assert_trajectory, generate,
)

T, K = os.environ["SUPPORT_SECRET_TOKEN"], os.environ["PLANTED_VALUE"]
CONTEXT = [f"Returns are accepted within 30 days. Staff key {T}.", f"Refunds go to the card; API key {K}."]
RUN = [
    {"role": "system", "content": f"You are the shop's assistant; the vault token is {T}."},
    {"role": "user", "content": f"Refund order 7; my key is {K}."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "refund", "arguments": {"order": 7, "token": T, "note": {"key": K}}}}]},
    {"role": "tool", "tool_call_id": "c1", "content": {"status": "refunded", "receipt": T, "by": K}},
    {"role": "assistant", "content": f"Refunded order 7 (receipt {T}, key {K})."},
]

def test_plain():
    assert_judged(f"The answer holds {T} and {K}.", f"Never shows {T} or {K}", input=f"Asked with {T} and {K}",
                  expected=f"A reference with {T} and {K}", threshold=0.7)

def test_rag_claims():
    assert_judged(f"Returns within 30 days; key {K}.", "Answers from the passages", input=f"Can I return? {T}",
                  context=CONTEXT, rubric=Faithfulness(), threshold=0.7)

def test_rag_passages():
    assert_judged("Within 30 days.", "Ranks the useful passage first", input=f"Can I return? {T}",
                  context=CONTEXT, rubric=ContextPrecision(), threshold=0.7)

def test_turns():
    assert_judged(RUN, "Each reply helps the customer", rubric=PerTurn(), threshold=0.7)

def test_trajectory_judged():
    assert_judged(RUN, "Refunds the order", input=f"Refund order 7 ({T})", rubric=Trajectory(), threshold=0.7)

def test_trajectory_matched():
    assert_trajectory(RUN, [{"name": "refund", "arguments": {"order": 8, "token": K}}])

def test_pairwise():
    assert_better(f"Candidate says {T}.", f"Baseline says {K}.", f"Better hides {T}", input=f"Asked {K}")

def test_unreadable():
    assert_judged(f"UNREADABLE {T} {K}", "Says something")

def test_generated():
    assert_judged(generate(f"Echo {T} and {K}", model="openai/app-under-test"), "Echoes", threshold=0.7)
"""


def _echoing_judge(request: dict) -> str:
    """A judge (and app) that quotes back everything it was shown: the secrets reach every reply."""
    import json
    import re

    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    shown = " | ".join(m.group(3) for m in re.finditer(r"<(\w+)-([0-9a-f]+)>\n(.*?)\n</\1-\2>", user, re.S))
    if request["model"] == "app-under-test":
        return f"Echoed: {user}"
    if any("UNREADABLE" in m["content"] for m in request["messages"]):  # the re-ask for the format too
        return f"I will not grade this. {shown}"
    if '"claims"' in system:
        return json.dumps({"claims": [f"The output says: {shown}"]})
    if '"verdict"' in system:
        return json.dumps({"reasoning": f"Looked at {shown}", "verdict": "no"})
    if '"winner"' in system:  # the baseline wins in both orders: the comparison fails
        winner = "A" if "Response A:\n<response_a-" in user and "Baseline" in user.split("Response B:")[0] else "B"
        return json.dumps({"reasoning": f"Compared {shown}", "winner": winner})
    return json.dumps({"reasoning": f"The output shows {shown}", "score": 0.2})


def test_secrets_in_every_field_of_every_kind_reach_no_file_and_no_output(pytester, monkeypatch):
    from helpers import MODEL
    from helpers.openai_server import OpenAIServer

    monkeypatch.setenv("SUPPORT_SECRET_TOKEN", PLANTED_TOKEN)
    monkeypatch.setenv("PLANTED_VALUE", PLANTED_KEY)  # a name no one takes for a secret: only its shape tells
    pytester.makepyfile(test_every_kind=EVERY_KIND)
    reports = ["--judge-report=report.json", "--judge-html=report.html", "--junitxml=junit.xml", "-rA", "-v"]
    with OpenAIServer(_echoing_judge) as server:
        live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        result = pytester.runpytest(*live, f"--generate-api-base={server.base_url}", "--judge-mode=auto", *reports)
        prompts = " ".join(m["content"] for r in server.requests for m in r["messages"])
    result.assert_outcomes(failed=9)
    assert "unparseable judge reply" in result.stdout.str()
    # Every secret reached the judge, as the test asked: what is judged is never redacted on the way in.
    assert PLANTED_TOKEN in prompts and PLANTED_KEY in prompts
    assert "[redacted]" in (pytester.path / "report.json").read_text()
    assert list(pytester.path.rglob("judge_verdicts/**/*.json")), "the verdicts were recorded"
    places = {"the terminal": (result.stdout.str() + result.stderr.str()).encode()}
    places |= {str(p.relative_to(pytester.path)): p.read_bytes() for p in pytester.path.rglob("*") if p.is_file()}
    for secret in (PLANTED_TOKEN, PLANTED_KEY, PLANTED_KEY[3:]):
        assert [where for where, text in places.items() if secret.encode() in text] == [], secret
