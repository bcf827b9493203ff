"""Tests that need an optional environment (a real model, a LiteLLM Proxy): skipped where it is absent,
a failed run where it is required.

A directory's conftest.py makes one `Requirement` and registers it as a plugin in `pytest_configure`.  Without the packages, each
test of the directory is skipped with the reason and the tox command that runs it.  Where the
requirement's variable is set (the tox environment that installs the packages sets it, so CI runs it
that way), a skipped test of the directory fails the run: a CI run whose real-model tests all skipped
would otherwise pass having met no real model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

__all__ = ["Requirement"]


class Requirement:
    """The packages the tests under `directory` need (`missing()` names the absent ones, None if none).

    `variable`: set to 1 where the tests must run (a skip fails the run); `run_with`: the command that
    installs and runs them.
    """

    def __init__(self, directory: Path, missing: Callable[[], str | None], *, variable: str, run_with: str) -> None:
        self.directory = directory
        self.missing = missing
        self.variable = variable
        self.run_with = run_with
        self.nodeids: set[str] = set()
        self.skipped: list[str] = []

    @property
    def required(self) -> bool:
        return os.environ.get(self.variable, "") not in ("", "0")

    def mine(self, items: Sequence[pytest.Item]) -> list[pytest.Item]:
        return [item for item in items if self.directory in item.path.parents]

    def pytest_collection_modifyitems(self, items: Sequence[pytest.Item]) -> None:
        """Skip this directory's tests if a package is absent."""
        mine = self.mine(items)
        self.nodeids.update(item.nodeid for item in mine)
        absent = self.missing() if mine else None
        if absent:
            skip = pytest.mark.skip(reason=f"these tests need {absent}; run them with `{self.run_with}`")
            for item in mine:
                item.add_marker(skip)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note this directory's skipped tests."""
        if report.skipped and report.nodeid in self.nodeids:
            self.skipped.append(f"{report.nodeid}: {skip_reason(report)}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Where required, a skip here fails the run."""
        if self.required and self.skipped and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Why a run with skips failed."""
        if self.required and self.skipped:
            terminalreporter.section(f"skipped where {self.variable}=1 requires every test to run", red=True)
            for line in self.skipped:
                terminalreporter.write_line(line)


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)
