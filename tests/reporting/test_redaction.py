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
