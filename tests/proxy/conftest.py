"""A real LiteLLM Proxy in front of the local judge server, for tests/proxy (run by `tox -e proxy`).

The proxy is LiteLLM's own `litellm` command (the `litellm[proxy]` extra), started as a subprocess on
127.0.0.1 with a config that maps model aliases to the local OpenAI-compatible server:

- ``judge``: plain; ``judge-limited``: the same upstream with ``rpm: 1``.
- ``usage-based-routing-v2`` makes the router refuse a deployment over its rpm before calling it (a 429
  "No deployments available for selected model" with ``llm_provider-retry-after: 60``), and
  ``num_retries: 0`` keeps the proxy from retrying that itself for half a minute.
- A master key and no database: any other key gets HTTP 400 "No connected db".

Without the extra installed every test here is skipped; where REQUIRE_LITELLM_PROXY=1 (the proxy tox
environment sets it) a skip fails the run instead.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from helpers.openai_server import OpenAIServer
from helpers.process import ServerProcess, free_port
from helpers.required import Requirement

MASTER_KEY = "sk-proxy-master-4f1e"  # the proxy's own key; the plugin sends it
UPSTREAM_KEY = "sk-upstream-9b2c"  # what the proxy sends to the local server
STARTUP_TIMEOUT_S = 90.0

CONFIG = """\
model_list:
  - model_name: judge
    litellm_params:
      model: openai/judge-test
      api_base: {upstream}
      api_key: {upstream_key}
  - model_name: judge-limited
    litellm_params:
      model: openai/judge-test
      api_base: {upstream}
      api_key: {upstream_key}
      rpm: 1
router_settings:
  routing_strategy: usage-based-routing-v2
  num_retries: 0
general_settings:
  master_key: {master_key}
"""


def proxy_extra_missing() -> str | None:
    """The distributions of litellm's `proxy` extra that are not installed, named (None: all are)."""
    from packaging.requirements import Requirement as Requires

    try:
        requirements = metadata.requires("litellm") or []
    except metadata.PackageNotFoundError:
        return "litellm"
    missing = []
    for text in requirements:
        requirement = Requires(text)
        marker = requirement.marker
        if marker is None or not marker.evaluate({"extra": "proxy"}) or marker.evaluate({"extra": ""}):
            continue  # not a requirement of the proxy extra on this platform
        try:
            metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            missing.append(requirement.name)
    if not missing:
        return None
    return f"the litellm[proxy] extra (missing: {', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''})"


REQUIREMENT = Requirement(
    Path(__file__).parent, proxy_extra_missing, variable="REQUIRE_LITELLM_PROXY", run_with="tox -e proxy"
)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(REQUIREMENT, "proxy-requirement")


def _litellm_command() -> str:
    beside = Path(sys.executable).with_name("litellm")
    found = str(beside) if beside.exists() else shutil.which("litellm")
    if not found:
        raise RuntimeError("the `litellm` command of the litellm[proxy] extra is not on this environment's PATH")
    return found


class LiteLLMProxy(ServerProcess):
    """One `litellm --config ...` process on 127.0.0.1; `base_url` is its root (no /v1).

    `master_key` is the key clients send; `upstream_key` what the proxy sends to the local server.
    """

    def __init__(self, upstream: str, workdir: Path) -> None:
        super().__init__("LiteLLM proxy", workdir / "proxy.log")
        self.workdir = workdir
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.config = workdir / "proxy_config.yaml"
        self.config.write_text(
            CONFIG.format(upstream=upstream, upstream_key=UPSTREAM_KEY, master_key=MASTER_KEY), encoding="utf-8"
        )
        self.master_key, self.upstream_key = MASTER_KEY, UPSTREAM_KEY

    def start(self) -> LiteLLMProxy:
        env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_TELEMETRY="False")
        env.pop("LITELLM_PROXY_API_KEY", None)
        command = [_litellm_command(), "--config", str(self.config), "--host", "127.0.0.1", "--port", str(self.port)]
        self.launch(
            command,
            health_url=f"{self.base_url}/health/liveliness",
            timeout_s=STARTUP_TIMEOUT_S,
            env=env,
            cwd=self.workdir,
        )
        return self


@pytest.fixture(scope="module")
def litellm_proxy(session_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiteLLMProxy]:
    """A proxy shared by the module's tests, in front of the session's local judge server."""
    proxy = LiteLLMProxy(session_server.base_url, tmp_path_factory.mktemp("litellm_proxy")).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def own_proxy(session_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiteLLMProxy]:
    """A proxy of this test's own, which the test may stop."""
    proxy = LiteLLMProxy(session_server.base_url, tmp_path_factory.mktemp("own_proxy")).start()
    try:
        yield proxy
    finally:
        proxy.stop()
