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
