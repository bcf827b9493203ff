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
from .summary import summary_sentence, user_properties

RUNTIME_KEY = pytest.StashKey[JudgeRuntime]()
CONTEXT_KEY = pytest.StashKey[TestContext]()
RECORDER_KEY = pytest.StashKey["RunRecorder"]()
REPORT_ATTRIBUTE = "llmjudge_records"  # plain data on the teardown report: survives xdist


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
    model = ",".join(settings.model) if settings.model else "(none: --judge-model)"
    store = str(runtime.store_root) if runtime.store_root else "judge_verdicts/ beside each test module"
    return f"llmjudge: mode {settings.mode} ({settings.mode_reason}), judge {model}, verdicts in {store}"


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
        elif call.when == "teardown" and context.records:
            setattr(report, REPORT_ATTRIBUTE, list(context.records))
    return report


class RunRecorder:
    """Gathers every judgment's record from the test reports, then writes the summary.

    Records travel on the teardown report, so under xdist the controller sees all of them here.
    One instance per config keeps nested pytester runs apart.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: list[dict[str, Any]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        records = getattr(report, REPORT_ATTRIBUTE, None)
        if records and report.when == "teardown":
            self.records.extend(records)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        sentence = summary_sentence(self.records)
        if sentence is None:
            return
        terminalreporter.write_line(sentence)
        runtime = self.config.stash.get(RUNTIME_KEY, None)
        if runtime is None:
            return
        for notice in runtime.notices:
            terminalreporter.write_line(notice, yellow=True)
        for drift in runtime.drift:
            flip = ", pass/fail flipped" if drift["flipped"] else ""
            terminalreporter.write_line(
                f"llmjudge drift: {drift['test']} key {drift['key'][:12]}: {drift['old']:.2f} -> {drift['new']:.2f}{flip}"
            )


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
