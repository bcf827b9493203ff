"""Shared fixtures: a clean environment per test, and a local OpenAI-compatible judge server.

LiteLLM is imported here, once, on purpose: in-process `pytester.runpytest` breaks after the
first inner run that imported it (and every run gets seconds slower), so the outer session owns
the import.  The price-list fetch is off before that import.

httpcore is imported here for the same reason.  httpx (which LiteLLM imports) loads httpcore only
on its first request, and then keeps httpcore's exception classes in a module-level table that
maps them to its own.  An in-process run drops every module it imported first when it ends, so if
an inner run made the process's first httpx request, later requests in the outer session raise
exceptions from a fresh httpcore that the table no longer knows: httpx passes them through
unmapped, and LiteLLM reports a timeout or a dropped connection as a different error.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpcore  # noqa: F401  (see the module docstring)
import litellm  # noqa: F401  (see the module docstring)
import pytest

from helpers import CANARY_KEY, MODEL
from helpers.openai_server import OpenAIServer
from pytest_llmjudge.settings import CI_VARIABLES

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test depends on the caller's CI or LLMJUDGE_* variables: each sets the mode it tests."""
    for name in list(os.environ):
        if name.startswith("LLMJUDGE_") or name in CI_VARIABLES or name.startswith("PYTEST_XDIST"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester, with inner runs spared pytest-asyncio's "loop scope is unset" warning.

    Set after pytester starts, which clears PYTEST_ADDOPTS.
    """
    monkeypatch.setenv("PYTEST_ADDOPTS", "-o asyncio_default_fixture_loop_scope=function")
    return pytester


@pytest.fixture(scope="session")
def _session_server():
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def openai_server(_session_server: OpenAIServer) -> OpenAIServer:
    """The local judge server, reset for this test (default responder: obeys SCORE=x in the output)."""
    _session_server.reset()
    _session_server.latency_s = 0.0
    return _session_server


@pytest.fixture
def live_args(openai_server: OpenAIServer) -> list[str]:
    """Command-line options that point the plugin at the local server."""
    return [f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=0"]
