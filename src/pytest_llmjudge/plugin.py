"""pytest hooks, options, fixtures and the `judge` marker: wiring only, the work is elsewhere.

Nothing here imports LiteLLM or opens a store at start-up: a suite that never judges pays for a
few option definitions and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from .runtime import JudgeRuntime, TestContext, activate, deactivate
from .settings import MARKER_KEYS, OPTIONS, SettingError, resolve
from .summary import judgment_lines, summary_details, summary_sentence, user_properties

RUNTIME_KEY = pytest.StashKey[JudgeRuntime]()
CONTEXT_KEY = pytest.StashKey[TestContext]()
RECORDER_KEY = pytest.StashKey["RunRecorder"]()
DRIFT_START_KEY = pytest.StashKey[int]()
# Plain data on the teardown report survives xdist: the controller's RunRecorder sees all of it.
REPORT_ATTRIBUTE = "llmjudge_records"  # one dict per judgment
DRIFT_ATTRIBUTE = "llmjudge_drift"  # refresh mode: verdicts that moved against what was stored
USED_ATTRIBUTE = "llmjudge_used"  # {"ledger": path, "keys": [...]}: what this test read or wrote (for prune)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmjudge", "LLM-judged assertions (pytest-llmjudge)")
    for option in OPTIONS:
        text = f"{option.help} [ini: {option.ini}, env: {option.env}]"
        if option.flag:
            group.addoption(option.cli, action="store_true", dest=option.dest, default=None, help=text)
            parser.addini(option.ini, option.help, type="bool", default=False)
        else:
            group.addoption(option.cli, dest=option.dest, metavar=option.metavar, default=None, help=text)
            parser.addini(option.ini, option.help, default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "judge(model=..., threshold=..., samples=..., rubric=..., ...): judge settings for a test, class or module "
        "(pytest-llmjudge)",
    )
    # litellm's pydantic models warn on import ("ReadOnly" qualifier); under `filterwarnings = error`
    # that warning turned every judge call into a retried connection error.
    config.addinivalue_line("filterwarnings", "ignore:.*ReadOnly.*:UserWarning")
    cli = {o.name: config.getoption(o.dest) for o in OPTIONS}
    ini = {o.name: config.getini(o.ini) for o in OPTIONS}
    try:
        settings = resolve(cli, ini)
    except SettingError as exc:
        raise pytest.UsageError(f"pytest-llmjudge: {exc}") from None
    rootdir = Path(config.rootpath)
    store_root = _under(rootdir, settings.store) if settings.store else None
    runtime = JudgeRuntime(settings, rootdir=rootdir, cache_dir=_cache_dir(config, settings.cache_dir), store_root=store_root)
    config.stash[RUNTIME_KEY] = runtime
    config.stash[RECORDER_KEY] = recorder = RunRecorder(config)
    config.pluginmanager.register(recorder, "llmjudge-recorder")
    activate(runtime)


def _under(rootdir: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else rootdir / path


def _cache_dir(config: pytest.Config, configured: str | None) -> Path | None:
    """The local cache: as configured, else inside pytest's cache dir (git-ignored, --cache-clear)."""
    if configured:
        return _under(Path(config.rootpath), configured)
    cache = getattr(config, "cache", None)
    base = getattr(cache, "_cachedir", None)  # not created here: only a live call opens the cache
    return Path(base) / "d" / "llmjudge" if base is not None else None


def pytest_unconfigure(config: pytest.Config) -> None:
    runtime = config.stash.get(RUNTIME_KEY, None)
    if runtime is not None:
        runtime.close()
        deactivate(runtime)


def _uses_judge(item: pytest.Item) -> bool:
    return item.get_closest_marker("judge") is not None or "judge" in getattr(item, "fixturenames", ())


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> str | None:
    """Say which mode the run judges in, and why, when anything here judges or is configured to."""
    runtime = config.stash.get(RUNTIME_KEY, None)
    if runtime is None:
        return None
    settings = runtime.settings
    configured = any(source != "default" for source in settings.sources.values())
    if not configured and not any(_uses_judge(item) for item in items):
        return None
    # The judge_backend fixture is resolved per test, later: without a model, say only that.
    judge = f"judge {','.join(settings.model)}" if settings.model else "no --judge-model (a judge_backend fixture may supply the judge)"
    store = str(runtime.store_root) if runtime.store_root else "judge_verdicts/ beside each test module"
    return f"llmjudge: mode {settings.mode} ({settings.mode_reason}), {judge}, verdicts in {store}"


def _marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    """Merge every `judge` marker on the item; the closest (function over class over module) wins."""
    merged: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("judge"))):
        if marker.args:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.judge takes keyword arguments only, got {marker.args!r}")
        merged.update(marker.kwargs)
    return merged


def _test_name(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[Any]:
    runtime = item.config.stash.get(RUNTIME_KEY, None)
    if runtime is None:
        return (yield)
    path = Path(item.path) if getattr(item, "path", None) is not None else None
    context = TestContext(
        nodeid=item.nodeid,
        module_path=path if path is not None and path.suffix == ".py" else None,
        test_name=_test_name(item),
        request=getattr(item, "_request", None),
    )
    item.stash[CONTEXT_KEY] = context
    item.stash[DRIFT_START_KEY] = len(runtime.drift)
    runtime.current = context
    try:
        return (yield)
    finally:
        runtime.current = None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    context = item.stash.get(CONTEXT_KEY, None)
    if context is None or item.get_closest_marker("judge") is None:
        return
    try:
        kwargs = _marker_kwargs(item)
    except pytest.UsageError as exc:
        pytest.fail(str(exc), pytrace=False)
    unknown = sorted(set(kwargs) - set(MARKER_KEYS) - {"aggregate", "band"})
    if unknown:
        pytest.fail(
            f"@pytest.mark.judge got unknown argument(s) {', '.join(unknown)}; "
            f"it takes {', '.join(MARKER_KEYS)}, aggregate, band",
            pytrace=False,
        )
    context.marker = kwargs


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    context = item.stash.get(CONTEXT_KEY, None)
    if context is not None and call.when == "teardown":
        for record in context.records:
            item.user_properties.extend(user_properties(record))
    report = yield
    if context is not None:
        if call.when == "call":
            report.sections.extend(context.sections)
            if context.records:  # shown by -rA / -rP and with failures: cost and latency per judgment
                report.sections.append(("llmjudge", "\n".join(judgment_lines(context.records))))
        elif call.when == "teardown":
            _attach_to_teardown(item, context, report)
    return report


def _attach_to_teardown(item: pytest.Item, context: TestContext, report: pytest.TestReport) -> None:
    runtime = item.config.stash.get(RUNTIME_KEY, None)
    drift: list[dict[str, Any]] = []
    if runtime is not None:
        start = item.stash.get(DRIFT_START_KEY, len(runtime.drift))
        drift = [dict(d) for d in runtime.drift[start:] if d.get("test") == context.nodeid]
    if context.records:
        records = [dict(r) for r in context.records]
        for entry in drift:
            for record in records:
                if record.get("key") == entry.get("key"):
                    record["drift"] = {k: entry[k] for k in ("old", "new", "flipped") if k in entry}
        setattr(report, REPORT_ATTRIBUTE, records)
    if drift:
        setattr(report, DRIFT_ATTRIBUTE, drift)
    ledger = context.ledger  # None unless this test judged something
    if ledger is not None and ledger.used:
        setattr(report, USED_ATTRIBUTE, {"ledger": str(ledger.path), "keys": sorted(ledger.used)})


class RunRecorder:
    """Gathers every judgment's record from the test reports, then writes the summary and reports.

    Records, drift and used keys travel on the teardown report, so under xdist the controller
    sees all of them here.  One instance per config keeps nested pytester runs apart.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: list[dict[str, Any]] = []
        self.drift: list[dict[str, Any]] = []
        self.used: dict[str, set[str]] = {}  # ledger path -> keys read or written this run
        self.outcomes: dict[str, str] = {}  # nodeid -> passed / failed / skipped (worst phase wins)
        self.locations: dict[str, str] = {}  # nodeid -> module path relative to rootdir
        self.deselected = 0
        self.exitstatus: int | None = None
        self.written: list[str] = []  # reports written, for the summary
        self.prune_message: str | None = None
        self.worker_notices: list[str] = []  # notices xdist workers handed over

    # -- gathering -------------------------------------------------------------------------

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reads it in pytest_testnodedown
            workeroutput["llmjudge_deselected"] = self.deselected

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist controller: workers report their deselections and notices in workeroutput."""
        output = getattr(node, "workeroutput", None) or {}
        self.deselected = max(self.deselected, int(output.get("llmjudge_deselected", 0) or 0))
        self.worker_notices.extend(str(n) for n in output.get("llmjudge_notices", ()) or ())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = "skipped" if report.skipped else report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "skipped"
        previous = self.outcomes.get(report.nodeid)
        rank = {"passed": 0, "skipped": 1, "failed": 2}
        if previous is None or rank.get(outcome, 2) > rank.get(previous, 2):
            self.outcomes[report.nodeid] = outcome
        if report.location and report.nodeid not in self.locations:
            self.locations[report.nodeid] = report.location[0]
        if report.when != "teardown":
            return
        records = getattr(report, REPORT_ATTRIBUTE, None)
        if records:
            for index, record in enumerate(records):
                self.records.append({**record, "index": index})
        drift = getattr(report, DRIFT_ATTRIBUTE, None)
        if drift:
            self.drift.extend(drift)
        used = getattr(report, USED_ATTRIBUTE, None)
        if used:
            self.used.setdefault(used["ledger"], set()).update(used["keys"])

    # -- after the run -----------------------------------------------------------------------

    def _is_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    def _ordered_records(self) -> list[dict[str, Any]]:
        """Records in a stable order (xdist delivers them in completion order), with the test's outcome."""
        records = sorted(self.records, key=lambda r: (r.get("nodeid", ""), r.get("index", 0)))
        return [{**r, "test_outcome": self.outcomes.get(r.get("nodeid", ""), "unknown")} for r in records]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.exitstatus = int(exitstatus)
        runtime = self.config.stash.get(RUNTIME_KEY, None)
        if self._is_worker():
            # A worker's notices (cache set aside, budget reached) would die with it: hand them over.
            if runtime is not None and runtime.notices:
                self.config.workeroutput["llmjudge_notices"] = list(runtime.notices)  # type: ignore[attr-defined]
            return
        if runtime is None:
            return
        settings = runtime.settings
        if settings.report or settings.html:
            from .report import build_report, write_report

            document = build_report(self._ordered_records(), self.drift, settings=settings, exitstatus=self.exitstatus)
            if settings.report:
                path = _output_path(self.config, settings.report, settings.sources.get("report"))
                write_report(path, document)
                self.written.append(f"JSON report {path}")
            if settings.html:
                from .html_report import write_html

                path = _output_path(self.config, settings.html, settings.sources.get("html"))
                write_html(path, document)
                self.written.append(f"HTML report {path}")
        self._after_full_run(runtime)

    def _after_full_run(self, runtime: JudgeRuntime) -> None:
        """Record which stored verdicts a full run used (for `llmjudge prune`); prune them if asked."""
        settings = runtime.settings
        if not settings.prune and not self.used:
            return  # nothing judged here: leave the manifest and the ledgers alone
        from .cli import full_run_refusal, plan_prune, run_manifest, apply_prune, save_manifest

        refusal = full_run_refusal(self.config, self.exitstatus, self.deselected, settings.mode, self.outcomes)
        if refusal is not None:
            if settings.prune:
                self.prune_message = f"llmjudge prune: nothing removed: {refusal}"
            return
        manifest = run_manifest(runtime.rootdir, runtime.store_root, self.outcomes, self.locations, self.used)
        save_manifest(self.config, manifest)
        if settings.prune:
            plan = plan_prune(manifest)
            apply_prune(plan)
            self.prune_message = "llmjudge prune: " + plan.describe()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._is_worker():
            return
        runtime = self.config.stash.get(RUNTIME_KEY, None)
        sentence = summary_sentence(self.records)
        if sentence is not None:
            terminalreporter.write_line(sentence)
            details = summary_details(self.records)
            if details:
                terminalreporter.write_line(details)
            if self.config.get_verbosity() >= 1:
                for line in judgment_lines(self._ordered_records(), with_nodeid=True):
                    terminalreporter.write_line("  " + line)
            notices = [*(runtime.notices if runtime is not None else []), *self.worker_notices]
            for notice in dict.fromkeys(notices):
                terminalreporter.write_line(notice, yellow=True)
        for drift in sorted(self.drift, key=lambda d: (d.get("test", ""), d.get("key", ""))):
            flip = ", pass/fail flipped" if drift["flipped"] else ""
            terminalreporter.write_line(
                f"llmjudge drift: {drift['test']} key {drift['key'][:12]}: {drift['old']:.2f} -> {drift['new']:.2f}{flip}"
            )
        for written in self.written:
            terminalreporter.write_line(f"llmjudge: wrote {written}")
        if self.prune_message:
            terminalreporter.write_line(self.prune_message)


def _output_path(config: pytest.Config, value: str, source: str | None) -> Path:
    """A report path: relative to where pytest was invoked (like --junitxml), or to rootdir from the ini file."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    base = Path(config.rootpath) if source == "ini" else Path(config.invocation_params.dir)
    return base / path


@pytest.fixture(scope="session")
def judge_backend() -> Any:
    """The judge for live calls: None means LiteLLM with `--judge-model`.

    Override it in a conftest.py to return any callable that takes the chat messages
    (`list[dict]`) and returns the reply text, sync or async; give it a `name` attribute to name
    the judge in verdict keys.
    """
    return None


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Any:
    """A `Judge` bound to this test: the session's settings, the test's `judge` marker, its verdict file."""
    from .judge import Judge

    runtime = request.config.stash[RUNTIME_KEY]
    context = request.node.stash.get(CONTEXT_KEY, None)
    return Judge(runtime=runtime, context=context)
