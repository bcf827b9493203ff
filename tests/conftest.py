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
from collections.abc import Iterator
from typing import TYPE_CHECKING

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpcore  # noqa: F401  (see the module docstring)
import litellm  # noqa: F401  (see the module docstring)
import pytest

from helpers import CANARY_KEY, MODEL
from helpers.openai_server import OpenAIServer
from helpers.providers import ReasoningServer
from pytest_llmjudge.settings import CI_VARIABLES

if TYPE_CHECKING:
    from pytest_llmjudge.backends.loop import LoopThread

pytest_plugins = ["pytester"]

# Every provider variable LiteLLM reads a key or an api base from, OpenAI's aside (`clean_environment`
# sets its key to the canary).
PROVIDER_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_API_BASE",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_BASE",
    "OLLAMA_API_KEY",
    "OLLAMA_API_BASE",
    "AZURE_API_KEY",
    "AZURE_API_BASE",
    "AZURE_API_VERSION",
    "AZURE_OPENAI_API_KEY",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test depends on the caller's CI or LLMJUDGE_* variables: each sets the mode it tests.

    Nor on tox's TOX_ENV_DIR: pytest puts its `cache_dir` (and so the local verdict cache, a command's
    too) under it, one folder for every test of the tox run; a test's answers would be another's.
    """
    for name in list(os.environ):
        if name.startswith(("LLMJUDGE_", "PYTEST_XDIST")) or name in CI_VARIABLES or name == "TOX_ENV_DIR":
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
def session_server() -> Iterator[OpenAIServer]:
    """The local judge server, shared by the session as it is (a test's own use resets it: `openai_server`)."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def openai_server(session_server: OpenAIServer) -> OpenAIServer:
    """The local judge server, reset for this test (default responder: obeys SCORE=x in the output)."""
    session_server.reset()
    session_server.latency_s = 0.0
    return session_server


@pytest.fixture
def live_args(openai_server: OpenAIServer) -> list[str]:
    """Command-line options that point the plugin at the local server."""
    return [f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=0"]


@pytest.fixture
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider key or api base from the caller's environment reaches LiteLLM."""
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")  # else LiteLLM fetches a list per call


@pytest.fixture
def reasoner(no_provider_keys: None) -> Iterator[ReasoningServer]:
    """A server of this test's own that answers as an OpenAI reasoning model, expecting the canary key."""
    with ReasoningServer(key=CANARY_KEY) as server:
        yield server


@pytest.fixture(scope="module")
def loop(request: pytest.FixtureRequest) -> Iterator[LoopThread]:
    """A background event loop for the module's direct backend calls (see helpers.backend)."""
    from pytest_llmjudge.backends.loop import LoopThread

    thread = LoopThread(request.module.__name__.rpartition(".")[2].replace("_", "-"))
    yield thread
    thread.stop()


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff base 10 ms instead of 0.5 s (a module constant: not a user-facing setting)."""
    from pytest_llmjudge.backends import retry

    monkeypatch.setattr(retry, "BACKOFF_BASE_S", 0.01)
