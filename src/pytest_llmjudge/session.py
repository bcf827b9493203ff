"""The run: every test's judgments, drift and used verdict keys gathered in one place, across xdist.

A test's share crosses from the worker to the controller as one plain-data payload on its teardown
report (`ItemPayload`, attribute `PAYLOAD_ATTRIBUTE`); a worker's own share (deselections, notices)
as one in `workeroutput` (`WorkerPayload`, key `PAYLOAD_KEY`).  Both are JSON-safe dicts, so the
controller's `RunRecorder` sees the whole run, and writes the summary, the reports and the manifest.
Report modules load only when there is something to show.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:  # the payload shapes are types only: nothing here costs a start-up that never judges
    from typing import TypedDict

    from .reporting.terminal import Tally
    from .runtime import JudgeRuntime, TestContext
    from .suites.gates import GateResult
    from .suites.repeat import CaseRecord, RunsRecord
    from .verdict import DriftRecord, JudgmentRecord

    class UsedKeys(TypedDict):
        """The verdict file a test read or wrote, and the keys it used there (for prune)."""

        verdict_file: str
        keys: list[str]

    class ItemPayload(TypedDict, total=False):
        """What one test hands the controller on its teardown report."""

        records: list[JudgmentRecord]  # one per judgment, its drift attached
        drift: list[DriftRecord]  # refresh mode: verdicts that moved against what was stored
        calibrations: list[dict[str, Any]]  # assert_judge_agrees' figures
        used: UsedKeys
        runs: RunsRecord  # a repeated test: what its runs came to
        case: CaseRecord  # a gated test: its outcome as its group's gate counts it

    class WorkerPayload(TypedDict, total=False):
        """What one xdist worker hands the controller when it finishes."""

        not_run: list[str]  # node ids the worker collected and did not run (deselected, another shard's)
        notices: list[str]  # cache set aside, budget reached: they would die with the worker


PAYLOAD_ATTRIBUTE = "llmjudge"
PAYLOAD_KEY = "llmjudge"
# A test's outcome is its worst phase's.  An expected failure is named as pytest names it (not
# "skipped", though pytest reports it as skipped); prune keeps every verdict of a test not "passed".
_RANK = {"passed": 0, "xpassed": 1, "skipped": 1, "xfailed": 1, "failed": 2}


def item_payload(context: TestContext, *, full: bool = True) -> ItemPayload:
    """A test's records (with their drift), drift and used keys, as plain data; empty if it judged nothing.
    Without `full`, the records are what a summary that only counts them reads (see `PendingRecord.counted`)."""
    payload: ItemPayload = {}
    drift = [d.copy() for d in context.drift]
    if context.records:
        from .verdict import record_of

        moved = {d.get("key"): d for d in drift}
        records = []
        for entry in context.records:
            record = record_of(entry, "full" if full else "counted")
            change = moved.get(record.get("key"))
            if change is not None:  # the two scores and whether pass/fail flipped
                record["drift"] = cast("DriftRecord", {k: v for k, v in change.items() if k not in ("test", "key")})
            records.append(record)
        if context.attempt > 1:  # a rerun: say which attempt these judgments belong to
            records = [_in_attempt(record, context.attempt) for record in records]
        payload["records"] = records
    if drift:
        payload["drift"] = drift
    if context.calibrations:
        payload["calibrations"] = [dict(c) for c in context.calibrations]
    verdict_file = context.verdict_file  # None unless this test judged something
    if verdict_file is not None and verdict_file.used:
        payload["used"] = {"verdict_file": verdict_file.location, "keys": sorted(verdict_file.used)}
    suite = context.suite  # a repeated or gated test (`suites.repeat.SuiteRun`)
    if suite is not None and suite.done:
        if suite.suite.repeated:
            from .redact import redact_value

            payload["runs"] = redact_value(suite.runs_record(context.nodeid))
        case = suite.case_record(context.nodeid, context.records)
        if case is not None:
            payload["case"] = case
    return payload


def _in_attempt(record: JudgmentRecord, attempt: int) -> JudgmentRecord:
    """The record, marked with the attempt (1, 2, ... under pytest-rerunfailures) it belongs to."""
    return cast("JudgmentRecord", {**record, "attempt": attempt})


class RunRecorder:
    """Gathers every test's payload from the test reports, then writes the summary and reports.

    One instance per config keeps nested pytester runs apart.
    """

    def __init__(self, config: pytest.Config, runtime: JudgeRuntime) -> None:
        self.config = config
        self.runtime = runtime
        # Every record, (nodeid, arrival, record), only when a JSON or HTML report or -v needs them;
        # the summary's counters always.
        self.records: list[tuple[str, int, JudgmentRecord]] = []
        self.keep_records: bool | None = None  # decided when the first record arrives
        self.tally: Tally | None = None
        self.worker = hasattr(config, "workerinput")
        self.drift: list[DriftRecord] = []
        self.calibrations: list[dict[str, Any]] = []
        self.used: dict[str, set[str]] = {}  # nodeid -> keys read or written in its verdict file this run
        self.outcomes: dict[str, str] = {}  # nodeid -> passed / failed / skipped (worst phase wins)
        self.collected: list[str] | None = None  # every collected node id, before any plugin narrowed the list
        self.not_run: set[str] = set()  # collected and not run: prune keeps their verdicts
        self.rerun: set[str] = set()  # node ids whose running attempt pytest-rerunfailures will run again
        self.exitstatus: int | None = None
        self.written: list[str] = []  # reports written, for the summary
        self.unwritten: list[str] = []  # reports that could not be written, and why
        self.prune_message: str | None = None
        self.worker_notices: list[str] = []  # notices xdist workers handed over
        self.mode_said = False  # the header said the mode (else the summary does, where anything was judged)
        # Where the Markdown job summary goes, and whether it was asked for (else GITHUB_STEP_SUMMARY names it)
        self.job_summary: tuple[Path, bool] | None = None if self.worker else _job_summary_target(config, runtime)
        self.runs: dict[str, RunsRecord] = {}  # repeated tests, by node id: what their (last attempt's) runs came to
        self.cases: dict[str, CaseRecord] = {}  # gated tests, by node id: their outcome as their gate counts it
        self.gates: list[GateResult] = []  # each group's decision, once every case reported

    # -- gathering -------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Note what was collected before -k, -m or any plugin narrows it (pytest-shard drops items
        by reassigning the list, without `pytest_deselected`)."""
        self.collected = [item.nodeid for item in items]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.collected is not None:
            running = {item.nodeid for item in session.items}
            self.not_run.update(nodeid for nodeid in self.collected if nodeid not in running)
            self.collected = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist controller: a worker's payload (deselections, notices) arrives in its workeroutput."""
        output = getattr(node, "workeroutput", None) or {}
        payload = cast("WorkerPayload", output.get(PAYLOAD_KEY) or {})
        self.not_run.update(str(n) for n in payload.get("not_run", ()) or ())
        self.worker_notices.extend(str(n) for n in payload.get("notices", ()) or ())

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if getattr(report, "llmjudge_gate", False):  # a gate's own report (`suites.reports`): no test's
            return
        outcome: str = report.outcome  # pytest-rerunfailures adds "rerun" to pytest's three
        if outcome == "rerun":  # this attempt will run again
            self.rerun.add(report.nodeid)
        rerun = report.when == "teardown" and report.nodeid in self.rerun
        if rerun:
            self.rerun.discard(report.nodeid)
            # JUnit shows the final attempt's judgments only (the summary and the JSON/HTML reports
            # show every attempt's, each marked with its attempt number).
            report.user_properties = [p for p in report.user_properties if not str(p[0]).startswith("llmjudge.")]
        if not self.worker:  # a worker's reports are gathered by the controller
            self._gather(report, rerun)

    def _gather(self, report: pytest.TestReport, rerun: bool) -> None:
        outcome: str = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        previous = self.outcomes.get(report.nodeid)
        # A rerun attempt's outcome is not the test's: the final attempt's is.
        if outcome != "rerun" and (previous is None or _RANK.get(outcome, 2) > _RANK.get(previous, 2)):
            self.outcomes[report.nodeid] = outcome
        if report.when != "teardown":
            return
        payload: ItemPayload | None = getattr(report, PAYLOAD_ATTRIBUTE, None)
        if not payload:
            return
        delattr(report, PAYLOAD_ATTRIBUTE)  # the report stays in pytest's stats all run: the records need not
        records = payload.get("records", ())
        runs, case = payload.get("runs"), payload.get("case")
        if runs is not None:
            self.runs[report.nodeid] = runs
        if case is not None:
            self.cases[report.nodeid] = case
        if records and self.tally is None:
            from .reporting.terminal import Tally

            self.tally = Tally()
            settings = self.runtime.settings
            self.keep_records = bool(
                settings.report or settings.html or self.config.get_verbosity() >= 1 or self.job_summary
            )
        for record in records:
            if rerun and "attempt" not in record:
                record = _in_attempt(record, 1)
            assert self.tally is not None
            # A repeated or gated test decides on its judgments' failures itself: none is expected by it
            self.tally.add(record, self.outcomes.get(report.nodeid), decided=runs is not None or case is not None)
            if self.keep_records:
                self.records.append((record.get("nodeid", ""), len(self.records), record))
        self.drift.extend(payload.get("drift", ()))
        self.calibrations.extend(payload.get("calibrations", ()))
        used = payload.get("used")
        if used:
            self.used.setdefault(report.nodeid, set()).update(used["keys"])

    # The outermost wrapper: the terminal has written the tests' progress before the gates report.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Once every test has reported (every xdist worker's too), decide each gated group, and report each
        gate as a test of its own (see `suites.reports`): a failed gate fails the run."""
        result = yield
        if not self.worker and self.cases:
            from .suites.gates import decide
            from .suites.reports import log_gates

            self.gates = decide(self.cases, self.outcomes, self.not_run)
            log_gates(session, self.gates)
        return result

    def pytest_report_collectionfinish(self, config: pytest.Config, items: list[pytest.Item]) -> str | None:
        """Say which mode the run judges in, and why, when anything here is configured to judge, or a test
        judges as far as collection can tell (a judge marker or fixture); else the summary says it, once
        something was judged (a clone's replay of plain `assert_judged` calls)."""
        if not self.runtime.configured and not any(
            item.get_closest_marker("judge") is not None or "judge" in getattr(item, "fixturenames", ())
            for item in items
        ):
            return None
        self.mode_said = True
        return self.mode_line()

    def mode_line(self) -> str:
        """`llmjudge: mode replay (CI detected: CI is set), judge gpt-4o-mini, verdicts in ...`."""
        runtime = self.runtime
        settings = runtime.settings
        # The judge_backend fixture is resolved per test, later: without a model, say only that.
        judge = (
            f"judge {','.join(settings.model)}"
            if settings.model
            else "no --judge-model: what is recorded replays with the judge that recorded it (a judge_backend "
            "fixture may supply one for the rest)"
        )
        store = str(runtime.store_root) if runtime.store_root else "judge_verdicts/ beside each test module"
        return f"llmjudge: mode {settings.mode} ({settings.mode_reason}), {judge}, verdicts in {store}"

    # -- after the run -----------------------------------------------------------------------

    def _ordered_records(self) -> list[JudgmentRecord]:
        """Records in a stable order (xdist delivers them in completion order), with the test's outcome."""
        ordered = sorted(self.records, key=lambda entry: entry[:2])
        return [{**record, "test_outcome": self.outcomes.get(nodeid, "unknown")} for nodeid, _, record in ordered]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.exitstatus = int(exitstatus)
        runtime = self.runtime
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reads this in pytest_testnodedown
            payload: WorkerPayload = {"not_run": sorted(self.not_run)}
            if runtime.notices:
                payload["notices"] = list(runtime.notices)
            workeroutput[PAYLOAD_KEY] = payload
            return
        if not (runtime.configured or self.tally or self.used or self.drift or self.gates):
            return  # no option set and nothing judged: no report, manifest or prune to write
        settings = runtime.settings
        if settings.report or settings.html:
            from .reporting.json_report import build_report, saved, write_report

            document = build_report(
                self._ordered_records(),
                self.drift,
                settings=settings,
                exitstatus=self.exitstatus,
                calibrations=self.calibrations,
                gates=self.gates,
                runs=self.runs.values(),
            )
            if settings.report:
                path = _output_path(self.config, settings.report, settings.sources.get("report"))
                self._note_written(saved("JSON report", path, write_report, document), f"JSON report {path}")
            if settings.html:
                from .reporting.html import write_html

                path = _output_path(self.config, settings.html, settings.sources.get("html"))
                self._note_written(saved("HTML report", path, write_html, document), f"HTML report {path}")
        if self.job_summary is not None:
            self._write_job_summary(*self.job_summary)
        self._after_full_run()

    def _write_job_summary(self, path: Path, asked: bool) -> None:
        """Append the run's Markdown summary to `path`: where asked, always; GitHub's, when anything was judged."""
        if not asked and self.tally is None and not self.drift and not self.gates:
            return
        from .pipeline.replay_miss import record_command
        from .reporting.job_summary import render_job_summary
        from .reporting.terminal import Tally

        settings = self.runtime.settings
        text = render_job_summary(
            self.tally or Tally(),
            self._ordered_records(),
            self.drift,
            mode=f"mode {settings.mode} ({settings.mode_reason})",
            record=lambda tests: record_command(tests, settings, settings.model or ())[0],
            gates=self.gates,
        )
        try:
            with open(path, "a", encoding="utf-8") as summary:
                summary.write(text)
        except OSError as exc:
            self.unwritten.append(f"llmjudge: could not write the job summary {path}: {exc.strerror or exc}")
        else:
            if asked:
                self.written.append(f"job summary {path}")

    def _note_written(self, failure: str | None, written: str) -> None:
        if failure is None:
            self.written.append(written)
        else:
            self.unwritten.append(failure)

    def _after_full_run(self) -> None:
        """Record which stored verdicts the run used (for `llmjudge prune`); prune them if asked.

        A run that ran only part of what it collected (-k, a shard) writes a partial manifest named
        by its shard, which `llmjudge prune --manifest` combines with the other shards'; it prunes nothing itself.
        """
        runtime = self.runtime
        settings = runtime.settings
        if not settings.prune and not self.used:
            return  # nothing judged here: leave the manifest and the verdict files alone
        if not settings.prune and getattr(self.config, "cache", None) is None:
            return  # the manifest lives in pytest's cache: with the cache provider off, nothing would keep it
        from .prune import apply_prune, full_run_refusal, narrowed, plan_prune, run_manifest, save_manifest, shard_name

        refusal = full_run_refusal(self.config, self.exitstatus, settings.mode, self.outcomes)
        if refusal is not None:
            from .prune import save_refusal

            save_refusal(self.config, refusal)  # for `llmjudge prune`, which runs later
            if settings.prune:
                self.prune_message = f"llmjudge prune: nothing removed: {refusal}"
            return
        manifest = run_manifest(runtime.rootdir, runtime.store_root, self.outcomes, self.used, self.not_run)
        partial = narrowed(self.config, len(self.not_run))
        if partial is not None:
            path = save_manifest(self.config, manifest, shard=shard_name(self.not_run))
            if settings.prune:
                self.prune_message = f"llmjudge prune: nothing removed: {partial}"
                if path is not None:
                    self.prune_message += (
                        f"\nllmjudge prune: this run's manifest is {path}; prune after all shards ran with "
                        f"`llmjudge prune --manifest {path.parent}` (or one --manifest per shard)"
                    )
            return
        save_manifest(self.config, manifest)
        if settings.prune:
            plan = plan_prune(manifest)
            apply_prune(plan)
            self.prune_message = "llmjudge prune: " + plan.describe()

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.worker:
            return

        def say(line: str, **markup: bool) -> None:
            """One line of the summary, redacted on its way out (a note or a path may quote anything); a
            run that says nothing loads no redaction."""
            from .redact import redact

            terminalreporter.write_line(redact(line), **markup)

        if self.tally is not None or self.drift:
            from .reporting import terminal

            tally = self.tally or terminal.Tally()
            sentence = tally.sentence()
            if sentence is not None:
                if not self.mode_said:
                    say(self.mode_line())
                say(sentence)
                details = tally.details()
                if details:
                    from .backends.litellm_import import import_seconds

                    imported = import_seconds()  # this process's; each xdist worker pays its own
                    if imported is not None and tally.calls:
                        details += f"; LiteLLM import {imported:.2f} s, charged to no judgment"
                    say(details)
                if tally.calls:  # what this run's live calls asked for: a replay sends nothing, says nothing
                    from .pipeline.structured import structured_line

                    used = structured_line(tally.structured)
                    if used is not None:
                        say(used)
                if self.config.get_verbosity() >= 1:
                    for line in terminal.judgment_lines(self._ordered_records(), with_nodeid=True):
                        say("  " + line)
                for notice in dict.fromkeys([*self.runtime.notices, *self.worker_notices]):
                    say(notice, yellow=True)
            for line in terminal.drift_lines(self.drift):
                say(line)
        if self.runs or self.gates:
            from .reporting.suites import gate_lines, runs_lines

            verbose = self.config.get_verbosity() >= 1
            for line in runs_lines(self.runs.values(), every=verbose):
                say(line, red=" FAILED: " in line)
            for gate in self.gates:
                for line in gate_lines([gate], every_case=verbose):
                    say(line, red=not gate.passed, green=gate.passed and line.startswith("llmjudge gate"))
        for written in self.written:
            say(f"llmjudge: wrote {written}")
        for failure in self.unwritten:
            say(failure, yellow=True)
        if self.prune_message:
            for line in self.prune_message.splitlines():
                say(line)


def _job_summary_target(config: pytest.Config, runtime: JudgeRuntime) -> tuple[Path, bool] | None:
    """Where the job summary goes: `--judge-summary` (True: asked for), else the file GITHUB_STEP_SUMMARY
    names (GitHub Actions' job summary, False), else nowhere."""
    if runtime.configured:
        settings = runtime.settings
        if settings.summary:
            return _output_path(config, settings.summary, settings.sources.get("summary")), True
    github = os.environ.get("GITHUB_STEP_SUMMARY")
    return (Path(github), False) if github else None


def _output_path(config: pytest.Config, value: str, source: str | None) -> Path:
    """A report path: relative to where pytest was invoked (like --junitxml), or to rootdir from the ini file."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    base = Path(config.rootpath) if source == "ini" else Path(config.invocation_params.dir)
    return base / path
