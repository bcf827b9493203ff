"""The plugin behind a real LiteLLM Proxy (started by conftest.py), in front of the local judge server.

Needs the `litellm[proxy]` extra: run with `tox -e proxy`.  Elsewhere these tests are skipped (see conftest.py).
"""

from __future__ import annotations

import json
import re
import time

import pytest

from helpers import JUDGED
from helpers.verdicts import only_entry

pytestmark = pytest.mark.slow


def proxy_args(model: str, api_base: str, *extra: str) -> list[str]:
    return [f"--judge-model={model}", f"--judge-api-base={api_base}", "--judge-retries=0", *extra]


def test_litellm_proxy_alias_reaches_the_upstream_through_the_proxy(
    pytester, openai_server, litellm_proxy, monkeypatch
):
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", litellm_proxy.master_key)
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*proxy_args("litellm_proxy/judge", litellm_proxy.base_url), "--judge-mode=auto")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 0 replayed, 1 live, 0 below threshold*"])
    assert openai_server.request_count == 1, "the judgment went through the proxy to the local server"
    (request,), (headers,) = openai_server.requests, openai_server.request_headers
    assert request["model"] == "judge-test", "the proxy resolved the alias to its deployment"
    assert headers["authorization"] == f"Bearer {litellm_proxy.upstream_key}", "the proxy sends its own upstream key"
    assert litellm_proxy.master_key not in json.dumps(headers)
    entry = only_entry(pytester.path)
    assert entry["model"] == "litellm_proxy/judge"
    assert entry["score"] == pytest.approx(0.9)
    assert litellm_proxy.master_key not in json.dumps(entry)


@pytest.mark.parametrize("suffix", ["", "/v1"], ids=["root", "v1"])
def test_openai_alias_with_the_proxy_base_with_or_without_v1(
    pytester, openai_server, litellm_proxy, monkeypatch, suffix
):
    monkeypatch.setenv("OPENAI_API_KEY", litellm_proxy.master_key)
    pytester.makepyfile(test_refund=JUDGED)
    args = proxy_args("openai/judge", litellm_proxy.base_url + suffix, "--judge-mode=auto")
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    assert openai_server.requests[0]["model"] == "judge-test"
    assert only_entry(pytester.path)["model"] == "openai/judge"


def test_verdict_replays_offline_with_the_proxy_stopped(pytester, openai_server, own_proxy, monkeypatch):
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", own_proxy.master_key)
    pytester.makepyfile(test_refund=JUDGED)
    args = proxy_args("litellm_proxy/judge", own_proxy.base_url)
    pytester.runpytest(*args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    own_proxy.stop()

    result = pytester.runpytest(*args, "--judge-mode=replay")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live, 0 below threshold*"])
    monkeypatch.delenv("LITELLM_PROXY_API_KEY")  # offline needs no key either
    pytester.runpytest(*args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == 1, "nothing reached the judge after the proxy stopped"


def test_wrong_key_at_the_proxy_says_the_key_is_wrong(pytester, openai_server, litellm_proxy, monkeypatch):
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", "sk-not-the-master-key")
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*proxy_args("litellm_proxy/judge", litellm_proxy.base_url), "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    assert openai_server.request_count == 0, "the proxy refused the key before calling the judge"
    output = result.stdout.str()
    assert "No connected db" in output, "the proxy's own words are quoted"
    assert re.search(r"BackendError.*LITELLM_PROXY_API_KEY", output), "the failure names the key's variable"
    assert "Check --judge-model" not in output, "a wrong key is not a model problem"


RATE_LIMITED = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("n", range(3))
def test_in_a_row(n):
    assert_judged(f"Reply number {n}. SCORE=0.9", "Is a numbered reply", threshold=0.7)
"""

DEADLINE_S = 20  # shorter than the proxy's 60 s wait: each judgment must pass or say why it stopped waiting


def test_rpm_limited_alias_waits_or_says_the_rate_limit_and_the_wait(
    pytester, openai_server, litellm_proxy, monkeypatch
):
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", litellm_proxy.master_key)
    pytester.makepyfile(test_rate=RATE_LIMITED)
    started = time.monotonic()
    recorder = pytester.inline_run(
        "--judge-model=litellm_proxy/judge-limited",
        f"--judge-api-base={litellm_proxy.base_url}",
        f"--judge-timeout={DEADLINE_S}",
        "--judge-mode=live",
        "-p",
        "no:cacheprovider",
    )
    elapsed = time.monotonic() - started
    passed, skipped, failed = recorder.listoutcomes()
    assert len(passed) + len(failed) == 3 and not skipped
    # rpm 1: the proxy lets one call a minute through (two if the run straddles a minute boundary).
    assert openai_server.request_count == len(passed) >= 1
    assert elapsed < 3 * DEADLINE_S + 10, "every judgment kept to its deadline"
    for report in failed:
        text = report.longreprtext
        assert re.search(r"rate.?limit|No deployments available", text, re.IGNORECASE), text
        # The wait the proxy asked for, in the plugin's words ("the next retry (in 60.0s) would pass ...").
        assert re.search(r"\b60(\.0+)?\s?(s|seconds?)\b", text), f"the failure does not say the 60 s wait:\n{text}"
        assert "gave up after 4 attempts" not in text, "retrying before the proxy's wait is over is pointless"
