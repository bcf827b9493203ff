"""A repeated or gated test's protocol: its runs, each a whole test protocol, reported as one test; and the
outcome it hands on as plain data.

Each run is pytest's own protocol (setup, call, teardown) with nothing logged, as pytest-rerunfailures
runs an attempt: so each run is a fresh, independent run of the test, with fresh function-scoped fixtures
(their finalizers run, `monkeypatch` is undone, `tmp_path` is new, a fixture that reads the test's result
at teardown finds it), while fixtures of a wider scope (class, module, session) are shared by the runs as
by the tests.  Between runs only the test's own level is torn down.  Then the runs are reported once: the
first run's setup, one call report that says what the runs came to, the last run's teardown.  So xdist
sends one test to one worker with all its runs, JUnit writes one testcase, `-x`, `--lf` and every
reporting plugin see one test; pytest-timeout's limit (on the protocol) covers all the runs; the runs are
on the record (each judgment's `run`), in the failure message, the report sections and the reports.
N items instead (pytest-repeat) would change the node id, and so the verdict file, of every run, and a
gate would count runs as cases; N logged protocols would report one test N times.  pytest-rerunfailures
does not rerun a repeated or gated test: its runs decide it.

A run passes when no judgment failure (`JudgmentFailed`) leaves the test; any other failure (a crash in
the app, a replay miss, a fixture's error) ends the runs and is reported as usual, naming the run.  The
test passes when at least `min_passes` runs pass.  In a gated group, a judgment failure no longer fails
the test alone: it is a failed case of its group, whose gate decides (see `gates`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

import pytest

from ..errors import JudgmentFailed
from ..redact import redact_value
from ..verdict import JudgmentRecord, PendingRecord, record_of
from .marker import Suite

if TYPE_CHECKING:
    from ..runtime import JudgeRuntime, TestContext


class RunFailure(TypedDict):
    """A run that failed: its index, and the judgment failure that ended it (its reasoning)."""

    run: int
    message: str


class RunsRecord(TypedDict):
    """What the runs of a repeated test came to, as it travels to the reports."""

    nodeid: str
    runs: int  # runs asked for
    done: int  # runs made (fewer: a failure that is no judgment's ended them, or one ran where nothing was judged)
    passed: int  # runs that passed
    min_passes: int
    asked: str  # what asked for the runs: "@pytest.mark.judge(runs=5, min_passes=4)", "--judge-runs=5"
    failed: list[RunFailure]
    decided: str  # "passed": enough runs passed; "failed": too few did, or a failure that is no judgment's


class CaseRecord(TypedDict, total=False):
    """A gated test as its group's gate counts it, as it travels to the controller."""

    nodeid: str
    group: str  # the node id of where the gate's marker is placed
    gate: dict[str, float]  # the gate's figures: pass_rate, mean_score, confidence (those set)
    passed: bool  # no judgment failure left the test (a repeated test: enough of its runs passed)
    judged: int  # the judgments it made (errors aside): a case that made none is not counted
    score: float  # the mean of its judgments' scores (a gate on mean_score reads it); absent with none
    failures: list[str]  # why it failed: each failed judgment's (or run's) text, with the judge's reasoning


class Run:
    """One run's reports, as pytest made them, and what the run came to."""

    def __init__(self, index: int, judged_before: int) -> None:
        self.index = index
        self.judged_before = judged_before  # the test's judgments before the run: did the run judge?
        self.reports: dict[str, pytest.TestReport] = {}
        self.failure: str | None = None  # the judgment failure that ended the call, as its message
        self.error = False  # a failure (or skip) that is no judgment's: the runs end, and it is reported as is


class SuiteRun:
    """One attempt of a repeated or gated test: its runs as they happen, and what they came to."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self.runs: list[Run] = []
        self.running = False  # a run's reports are being made: the plugin notes them, logs none
        self.judged_nothing = False  # the first run made no judgment

    @property
    def done(self) -> int:
        return len(self.runs)

    @property
    def failed(self) -> list[RunFailure]:
        return [{"run": run.index, "message": run.failure} for run in self.runs if run.failure is not None]

    @property
    def needed(self) -> int:
        """Passing runs the test needs: `min_passes`, or every run made where fewer were made."""
        return self.suite.min_passes if self.done == self.suite.runs else self.done

    @property
    def passed(self) -> bool:
        return not self.error_run and self.done - len(self.failed) >= self.needed

    @property
    def error_run(self) -> Run | None:
        """The run whose failure is no judgment's (it ended the runs)."""
        return next((run for run in self.runs if run.error), None)

    def note(self, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
        """A report of the current run's (made, not logged): a judgment failure fails the run, any other
        failure (or a skip) ends the runs."""
        run = self.runs[-1]
        run.reports[report.when] = report
        excinfo = call.excinfo
        if report.when == "call" and excinfo is not None and isinstance(excinfo.value, JudgmentFailed):
            run.failure = str(excinfo.value)
        elif report.failed or (report.skipped and report.when != "teardown"):
            run.error = True

    def runs_record(self, nodeid: str) -> RunsRecord:
        """What the runs came to, for the failure message, the report section and the reports."""
        failed = self.failed
        return {
            "nodeid": nodeid,
            "runs": self.suite.runs,
            "done": self.done,
            "passed": self.done - len(failed) - (self.error_run is not None),
            "min_passes": self.needed,
            "asked": self.suite.asked,
            "failed": failed,
            "decided": "passed" if self.passed else "failed",
        }

    def case_record(self, nodeid: str, records: Sequence[JudgmentRecord | PendingRecord]) -> CaseRecord | None:
        """The test as its gate counts it (None: it is in no gated group)."""
        gate = self.suite.gate
        if gate is None:
            return None
        judged = [record_of(entry, "counted") for entry in records]
        scores = [float(r["score"]) for r in judged if "error" not in r and isinstance(r.get("score"), (int, float))]
        case: CaseRecord = {
            "nodeid": nodeid,
            "group": gate.group,
            "gate": gate.spec(),
            "passed": self.passed,
            "judged": sum("error" not in r for r in judged),
            "failures": [f["message"] for f in self.failed],
        }
        if scores:
            case["score"] = sum(scores) / len(scores)
        if self.suite.repeated and not self.passed:
            from ..reporting.suites import runs_failure

            case["failures"] = [runs_failure(self.runs_record(nodeid))]
        redacted: CaseRecord = redact_value(case)  # node ids (parametrize ids) and texts a person reads
        return redacted


def run_protocol(item: pytest.Item, nextitem: pytest.Item | None, context: TestContext, runtime: JudgeRuntime) -> bool:
    """The test's runs, each pytest's protocol with nothing logged, then its reports logged once."""
    state = cast("SuiteRun", context.suite)
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    state.running = True
    try:
        for index in range(state.suite.runs):
            context.run = index
            _hand_over(runtime, context)
            state.runs.append(Run(index, len(context.records)))
            if _run(item, nextitem, context, state):
                break
    finally:
        state.running = False
    from ..plugin import finish_report

    for report in _reports(state, context):
        finish_report(item, context, report)
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _run(item: pytest.Item, nextitem: pytest.Item | None, context: TestContext, state: SuiteRun) -> bool:
    """One run: pytest's protocol (`runtestprotocol`), its reports made and not logged; True: the last run.

    Whether it is the last is known once its call is made, before its teardown: the last run tears down
    what the next test does not share, the others only the test's own level (the next run sets it up anew).
    """
    from _pytest.runner import call_and_report, show_test_item

    run = state.runs[-1]
    session = item.session
    initrequest = getattr(item, "_initrequest", None)
    if initrequest is not None and not getattr(item, "_request", None):
        initrequest()  # a new request and no function arguments, as for a new test (as pytest does on a rerun)
    try:
        if call_and_report(item, "setup", log=False).passed:
            setup_only = item.config.getoption("setuponly", False)
            if item.config.getoption("setupshow", False):
                show_test_item(item, add_space=not setup_only)
            if not setup_only:
                call_and_report(item, "call", log=False)
        if run.index == 0 and len(context.records) == run.judged_before and state.suite.repeated:
            state.judged_nothing = True
        last = (
            run.index == state.suite.runs - 1
            or run.error
            or state.judged_nothing
            or item.parent is None
            or bool(session.shouldfail or session.shouldstop)
        )
        # The others' teardown stops at the test's parent: a collector stands for "the next test shares it".
        after = (None if session.shouldfail or session.shouldstop else nextitem) if last else item.parent
        call_and_report(item, "teardown", log=False, nextitem=after)
    finally:
        if initrequest is not None:
            item._request = False  # type: ignore[attr-defined]  # as runtestprotocol leaves the item
            item.funcargs = None  # type: ignore[attr-defined]
    return last


def _reports(state: SuiteRun, context: TestContext) -> list[pytest.TestReport]:
    """The test's reports: the first run's setup, one call that says what the runs came to, the last
    teardown; where a failure that is no judgment's ended the runs, that run's reports as they are."""
    from ..redact import redact
    from ..reporting.suites import runs_failure

    suite = state.suite
    errored = state.error_run
    last = errored or state.runs[-1]
    setup = (errored or state.runs[0]).reports.get("setup")
    call = last.reports.get("call")
    teardown = last.reports.get("teardown")
    if call is not None:
        if errored is not None:
            if suite.repeated:
                call.sections.append(
                    ("llmjudge runs", f"the run that failed: {errored.index} of runs 0 to {suite.runs - 1}")
                )
        elif state.judged_nothing and suite.marked:
            call.outcome, call.longrepr = (
                "failed",
                redact(
                    f"{suite.asked} on {context.nodeid}, which made no judgment in its first run: runs repeat a test "
                    "to judge it again. Judge in it (assert_judged, the judge fixture), or take runs= off its marker"
                ),
            )
        elif hasattr(call, "wasxfail"):  # an xfail-marked test: xfail's outcome stands (a gate does not count it)
            pass
        elif not state.judged_nothing:  # (under --judge-runs, a test that judges nothing ran once, as it would have)
            _decided(call, state, context.nodeid, runs_failure)
    return [report for report in (setup, call, teardown) if report is not None]


def _decided(call: pytest.TestReport, state: SuiteRun, nodeid: str, runs_failure: Any) -> None:
    """The call report says what the runs came to (as pytest's xfail support rewrites a report)."""
    from ..redact import redact

    suite = state.suite
    record = state.runs_record(nodeid)
    if suite.repeated:  # every run's captured output, named by its run
        sections = []
        for run in state.runs:
            made = run.reports.get("call")
            sections += [(f"{title} (run {run.index})", text) for title, text in (made.sections if made else ())]
        call.sections = sections
        call.duration = sum(r.reports["call"].duration for r in state.runs if "call" in r.reports)
    if state.passed:
        call.outcome, call.longrepr = "passed", None
        if suite.repeated and state.failed:
            call.sections.append(("llmjudge runs", redact(runs_failure(record))))
    elif suite.gate is not None:  # a failed case: its group's gate decides
        call.outcome, call.longrepr = "passed", None
        text = runs_failure(record) if suite.repeated else "\n".join(f["message"] for f in state.failed)
        call.sections.append(
            ("llmjudge gate", redact(f"a failed case of {suite.gate.group} (its gate decides):\n{text}"))
        )
    else:
        call.outcome, call.longrepr = "failed", redact(runs_failure(record))


def _hand_over(runtime: JudgeRuntime, context: TestContext) -> None:
    """A subprocess the run starts judges as the run does (LLMJUDGE_TEST names it)."""
    from ..runtime import TEST_ENV

    if context.runs > 1 and context.used_file and TEST_ENV in os.environ:
        from ..handover import test_environment

        value = test_environment(runtime, context, context.used_file)
        if value is not None:
            os.environ[TEST_ENV] = value


def start(context: TestContext, suite: Suite) -> None:
    """The test is repeated or gated: its protocol runs and decides it (see `run_protocol`)."""
    context.suite = SuiteRun(suite)
    context.runs = suite.runs
    context.group = suite.gate.group if suite.gate is not None else None
