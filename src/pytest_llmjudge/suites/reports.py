"""A gate's decision as a test report of its own, logged where the decision is made (the session, or
the xdist controller) once every case has reported.

A gate is reported as pytest reports a test, under the node id `<group>::llmjudge-gate`: setup, call
and teardown reports through `pytest_runtest_logreport`.  So a failed gate counts as a failed test in
the terminal (its text in the FAILURES section, a FAILED line in the short summary), makes the exit
status non-zero, and is one `<testcase>` in JUnit XML (failed or passed, its figures as properties),
as it is for every other plugin that reads reports; no plugin needs to know about gates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .gates import GateResult

GATE_NAME = "llmjudge-gate"  # not a Python name: no test can have it
GATE_ATTRIBUTE = "llmjudge_gate"  # set on a gate's reports: the session does not count them as a test's


def gate_nodeid(group: str) -> str:
    return f"{group}::{GATE_NAME}" if group else GATE_NAME


def log_gates(session: pytest.Session, results: Sequence[GateResult]) -> None:
    """Report every gate's decision, after the tests' (on a line of their own in the terminal)."""
    config = session.config
    # The terminal's progress counts the gates as items of the run (else the last one shows "[102%]")
    session.testscollected += len(results)
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if results and terminal is not None and config.get_verbosity() <= 0:
        # The tests' progress line ends ("... [100%]"): the gates' results start a line of their own
        terminal.ensure_newline()
        if getattr(getattr(terminal, "_tw", None), "width_of_current_line", 0):
            terminal.write_line("")
        if not terminal.showfspath:  # -q: no file name starts the line, so say what it holds
            terminal.write("llmjudge gates ")
    for result in results:
        log_gate(config, result)


def log_gate(config: pytest.Config, result: GateResult) -> None:
    """Report the gate's decision as a test's setup, call and teardown reports."""
    from ..redact import redact, redact_value
    from ..reporting.suites import gate_failure, gate_properties

    nodeid = gate_nodeid(result.group)
    location = (result.group.split("::", 1)[0], None, f"{GATE_NAME} of {result.group}")
    hook = config.hook
    hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    keywords: dict[str, int] = {GATE_NAME: 1}
    failed = not result.passed
    for when in ("setup", "call", "teardown"):
        report = pytest.TestReport(
            nodeid,
            location,
            keywords,  # type: ignore[arg-type]  # pytest types them as Literal[1]
            "failed" if failed and when == "call" else "passed",
            redact(gate_failure(result)) if failed and when == "call" else None,
            when,
            user_properties=redact_value(gate_properties(result)) if when == "teardown" else None,
        )
        setattr(report, GATE_ATTRIBUTE, True)
        hook.pytest_runtest_logreport(report=report)
    hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
