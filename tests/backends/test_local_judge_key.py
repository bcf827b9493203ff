"""A local judge needs no key: with an api base and the provider's key variable unset, a placeholder is
sent (never a real key, never stored), and `llmjudge doctor` says so."""

from __future__ import annotations

import subprocess
import sys

from helpers import JUDGED, MODEL
from helpers.openai_server import OpenAIServer


def test_a_local_judge_needs_no_key(pytester, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pytester.makepyfile(test_refund=JUDGED)
    with OpenAIServer() as server:
        live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        pytester.runpytest(*live, "--judge-mode=auto", "-p", "no:cacheprovider").assert_outcomes(passed=1)
        sent = server.request_headers[-1].get("authorization", "")
    assert sent == "Bearer llmjudge-no-key-set", sent
    stored = "".join(p.read_text() for p in pytester.path.rglob("judge_verdicts/**/*.json"))
    assert "llmjudge-no-key-set" not in stored


def test_a_key_that_is_set_is_the_one_sent(pytester, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local-server-key-123")
    pytester.makepyfile(test_refund=JUDGED)
    with OpenAIServer() as server:
        live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        pytester.runpytest(*live, "--judge-mode=live", "-p", "no:cacheprovider").assert_outcomes(passed=1)
        assert server.request_headers[-1].get("authorization") == "Bearer local-server-key-123"


def test_the_doctor_says_a_local_judge_needs_no_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer() as server:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest_llmjudge",
                "doctor",
                f"--judge-model={MODEL}",
                f"--judge-api-base={server.base_url}",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    line = next(line for line in result.stdout.splitlines() if "credentials" in line)
    assert "OPENAI_API_KEY is not set: a placeholder key is sent to" in line, result.stdout
    assert "FAIL" not in line


URL_PASSWORD = "urlpass-5521-secret"  # in no variable: only its place in a URL says it is a credential


def test_credentials_in_the_api_base_are_shown_nowhere_and_the_refusal_says_whose_it_is(pytester):
    """Given --judge-api-base=http://admin:PASSWORD@host/v1, the client refuses to send a key header beside the
    URL's credentials: the test fails at once (one attempt, not retried) saying so, and the password is in no
    error, report, JUnit property, terminal line or doctor line."""
    pytester.makepyfile(test_refund=JUDGED)
    with OpenAIServer() as server:
        base = server.base_url.replace("http://", f"http://admin:{URL_PASSWORD}@")
        live = [f"--judge-model={MODEL}", f"--judge-api-base={base}", "--judge-retries=3"]
        reports = ["--judge-report=report.json", "--judge-html=report.html", "--junitxml=junit.xml", "-rA"]
        result = pytester.runpytest(*live, "--judge-mode=live", "-p", "no:cacheprovider", *reports)
        doctor = subprocess.run(
            [sys.executable, "-m", "pytest_llmjudge", "doctor", f"--judge-model={MODEL}", f"--judge-api-base={base}"],
            cwd=pytester.path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert server.request_count == 0, "nothing reached the server"
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the api base holds credentials (user:password@) and the client also sends the key" in out
    assert "not retried" in out and "gave up after" not in out
    assert "Take the credentials out of --judge-api-base, and give the server's key in OPENAI_API_KEY" in out
    assert "at http://[redacted]@127.0.0.1:" in out
    assert doctor.returncode == 1 and "api base http://[redacted]@127.0.0.1:" in doctor.stdout, doctor.stdout
    assert "the api base holds credentials" in doctor.stdout
    places = {"the terminal": out + result.stderr.str(), "the doctor": doctor.stdout + doctor.stderr}
    places |= {p.name: p.read_text() for p in pytester.path.iterdir() if p.suffix in (".json", ".html", ".xml")}
    assert len(places) == 5
    assert [where for where, text in places.items() if URL_PASSWORD in text or "admin:" in text] == []
