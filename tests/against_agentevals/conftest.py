"""agentevals itself, for tests/against_agentevals (run by `tox -e agentevals`): its trajectory match evaluators.

agentevals brings LangChain, LangGraph, the OpenAI SDK and openevals (about 50 packages), too many for
the `test` extra every run installs, so it has an environment of its own.  Without it, every test here
is skipped; where REQUIRE_AGENTEVALS=1 (the agentevals tox environment sets it) a skip fails the run.
"""

from __future__ import annotations

from importlib import util
from pathlib import Path

import pytest

from helpers.required import Requirement


def missing() -> str | None:
    return None if util.find_spec("agentevals") is not None else "agentevals (and LangChain, which it brings)"


REQUIREMENT = Requirement(Path(__file__).parent, missing, variable="REQUIRE_AGENTEVALS", run_with="tox -e agentevals")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(REQUIREMENT, "agentevals-requirement")
