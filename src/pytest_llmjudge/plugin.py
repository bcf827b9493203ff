"""pytest hooks, options, fixtures and the `judge` marker: wiring only, the work is elsewhere.

pytest imports this module at every start-up, judging or not, so it imports nothing of its own at
module level: the option table loads when options are registered, the per-session state when
pytest is configured, and reports only when a test judged.  Nothing here imports LiteLLM or opens
a store.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .generation import Generate
    from .judge import Judge
    from .runtime import JudgeRuntime, TestContext
    from .settings import Settings

RUNTIME_KEY: pytest.StashKey[JudgeRuntime] = pytest.StashKey()
CONTEXT_KEY: pytest.StashKey[TestContext] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    from .options import OPTIONS, add_options

    group = parser.getgroup("llmjudge", "LLM-judged assertions (pytest-llmjudge)")
    add_options(group.addoption)
    for option in OPTIONS:
        if option.flag:
            parser.addini(option.ini, option.help, type="bool", default=False)
        else:
            parser.addini(option.ini, option.help, default="")
    group.addoption(
        "--judge-doctor",
        action="store_true",
        default=False,
        help="run no tests: check the configured judge (provider, parameters, key, a live probe per rubric family, "
        "latency and cost) with this run's --judge-* options, ini file and environment; exit 1 on a failed check",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """`--judge-doctor`: the doctor's report instead of the tests (configured as for a run, as --help is)."""
    if not config.getoption("judge_doctor", False):
        return None
    from .doctor import diagnose, doctor_lines

    config._do_configure()
    try:
        runtime = config.stash[RUNTIME_KEY]
        checks = diagnose(runtime.settings, rootdir=runtime.rootdir)
        writer = config.get_terminal_writer()
        for line in doctor_lines(checks):
            writer.line(line, red=line.startswith("FAIL"))
        return 1 if any(c.failed for c in checks) else 0
    finally:
        config._ensure_unconfigure()


def pytest_configure(config: pytest.Config) -> None:
    from .options import OPTIONS, judge_values
    from .runtime import JudgeRuntime, activate
    from .session import RunRecorder

    config.addinivalue_line(
        "markers",
        "judge(model=..., threshold=..., samples=..., rubric=..., ...): judge settings for a test, class or module "
        "(pytest-llmjudge)",
    )
    # litellm's pydantic models warn on import ("ReadOnly" qualifier); under `filterwarnings = error`
    # that warning turned every judge call into a retried connection error.
    config.addinivalue_line("filterwarnings", "ignore:.*ReadOnly.*:UserWarning")
    cli, ini = judge_values(config)
    rootdir = Path(config.rootpath)
    configured = any(value not in (None, "", False) for value in (*cli.values(), *ini.values())) or any(
        option.env in os.environ for option in OPTIONS
    )
    if configured:  # resolve now, so a bad value stops the run before it starts
        from .settings import SettingError, resolve, under

        try:
            settings = resolve(cli, ini)
        except SettingError as exc:
            raise pytest.UsageError(f"pytest-llmjudge: {exc}") from None
        store_root = under(rootdir, settings.store) if settings.store else None
        runtime = JudgeRuntime(
            settings, rootdir=rootdir, cache_dir=_cache_dir(config, settings.cache_dir), store_root=store_root
        )
    else:  # nothing configured: the defaults (and CI detection) are resolved if a test judges
        runtime = JudgeRuntime(_default_settings, rootdir=rootdir, cache_dir=_cache_dir(config, None))
    runtime.configured = configured
    runtime.whole_records = bool(
        hasattr(config, "workerinput")
        or getattr(config.option, "xmlpath", None)
        or config.get_verbosity() >= 1
        or (configured and (runtime.settings.report or runtime.settings.html or runtime.settings.summary))
        or bool(os.environ.get("GITHUB_STEP_SUMMARY"))  # the job summary quotes failed judgments' reasoning
    )
    config.stash[RUNTIME_KEY] = runtime
    config.pluginmanager.register(RunRecorder(config, runtime), "llmjudge-recorder")
    config.pluginmanager.register(SuiteProtocol(), "llmjudge-suites")
    activate(runtime)


def _default_settings() -> Settings:
    from .settings import resolve

    return resolve({}, {})


def _cache_dir(config: pytest.Config, configured: str | None) -> Path | Callable[[], Path | None] | None:
    """The local cache: as configured, else a directory in pytest's cache (git-ignored, --cache-clear),
    asked for only when a live call opens the cache (asking creates it)."""
    if configured:
        from .settings import under

        return under(Path(config.rootpath), configured)
    cache: pytest.Cache | None = getattr(config, "cache", None)  # absent with -p no:cacheprovider
    if cache is None:
        return None

    def in_pytest_cache() -> Path | None:
        try:
            return cache.mkdir("llmjudge")
        except OSError as exc:  # something else sits there: the cache sets it aside and starts afresh
            return Path(exc.filename) if exc.filename else None

    return in_pytest_cache


def pytest_unconfigure(config: pytest.Config) -> None:
    runtime = config.stash.get(RUNTIME_KEY, None)
    if runtime is not None:
        from .runtime import deactivate

        runtime.close()
        deactivate(runtime)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Verdict folders hold only verdict files: pytest need not offer each of them to every plugin
    (a suite of a thousand judged tests has a thousand files there, beside the modules)."""
    if collection_path.name == "judge_verdicts":  # store.finder.VERDICTS_DIR, without importing the store
        return True
    runtime = config.stash.get(RUNTIME_KEY, None)
    if runtime is not None and runtime.store_root is not None and collection_path == runtime.store_root:
        return True
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    runtime = item.config.stash.get(RUNTIME_KEY, None)
    if runtime is None:
        return (yield)
    from .handover import test_environment
    from .runtime import STORED_SUFFIXES, TEST_ENV, TestContext

    path = getattr(item, "path", None)
    context = TestContext(
        nodeid=item.nodeid,
        module_path=path if path is not None and path.suffix in STORED_SUFFIXES else None,
        test_name=item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name,
    )
    context.whole_records = runtime.whole_records
    context.default_backend = _sees_default_backend(item)
    if not context.default_backend:
        _request_fixture(item)
    item.stash[CONTEXT_KEY] = context
    runtime.current = context
    _read_marker(item, context, runtime)
    # A subprocess the test starts judges as the test would, into the test's verdict file.
    previous = os.environ.get(TEST_ENV)
    context.used_file = _used_file()
    value = test_environment(runtime, context, context.used_file)
    if value is not None:
        os.environ[TEST_ENV] = value
    try:
        return (yield)
    finally:
        runtime.current = None
        if previous is None:
            os.environ.pop(TEST_ENV, None)
        else:
            os.environ[TEST_ENV] = previous


# Per collector node (module, class): whether `judge_backend` there is the plugin's own fixture.
_DEFAULT_BACKEND: pytest.StashKey[dict[pytest.Collector, bool]] = pytest.StashKey()


def _sees_default_backend(item: pytest.Item) -> bool:
    """Whether pytest would give `item` this plugin's `judge_backend` fixture (None: LiteLLM).

    Resolving the fixture with `request.getfixturevalue` costs about 0.1 ms a test (a sub-request, a
    finalizer on the session), a third of replaying a verdict.  pytest has no public way to ask which
    definition of a fixture a test would get, so its fixture manager is asked, once per module or
    class; where it cannot answer, or the test parametrizes `judge_backend` itself, False: the
    fixture is resolved as before.
    """
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "judge_backend" in callspec.params:
        return False
    parent = item.parent
    if parent is None:
        return False
    known = item.config.stash.setdefault(_DEFAULT_BACKEND, {})
    answer = known.get(parent)
    if answer is None:
        answer = known[parent] = _only_default_backend(item)
    return answer


def _only_default_backend(item: pytest.Item) -> bool:
    manager = getattr(item.session, "_fixturemanager", None)
    visible = getattr(manager, "getfixturedefs", None)
    if visible is None:
        return False
    try:
        definitions = visible("judge_backend", item)
    except (TypeError, AttributeError):  # another pytest's manager: resolve the fixture instead
        return False
    if not definitions or len(definitions) != 1:
        return False
    func = getattr(definitions[0], "func", None)
    return getattr(func, "__module__", None) == __name__ and getattr(func, "__name__", None) == "judge_backend"


def _request_fixture(item: pytest.Item) -> None:
    """Have pytest set up `_llmjudge_request` for `item`, a test that may get another `judge_backend`
    than the plugin's: only such a test resolves the fixture through its request.

    Not autouse: an autouse fixture costs every test of every suite, judged or not, about as much as
    the rest of the plugin's per-test work.  pytest fills a test's fixtures from `fixturenames` at
    setup, so a name added before then is set up like one the test asked for."""
    names = getattr(item, "fixturenames", None)
    if isinstance(names, list) and "_llmjudge_request" not in names:
        names.append("_llmjudge_request")


_USED_FILES = itertools.count()


def _used_file() -> str:
    """Where the test's subprocesses list the verdict keys they used (read back at teardown): one
    name per test attempt in this process, so nested sessions (pytester) never share one."""
    return os.path.join(tempfile.gettempdir(), f"llmjudge-used-{os.getpid()}-{next(_USED_FILES)}")


def _read_marker(item: pytest.Item, context: TestContext, runtime: JudgeRuntime) -> None:
    """The test's `judge` marker arguments (the closest of each) and, where it is repeated (`runs=`,
    --judge-runs) or gated (`pass_rate=`, `mean_score=`), its suite; a bad argument fails its setup."""
    # --judge-runs (a session that set no option repeats nothing: its settings need not be resolved here)
    runs = runtime.settings.runs if runtime.configured else 1
    if runs == 1 and item.get_closest_marker("judge") is None:
        return
    from .options import MARKER_KEYS, SUITE_KEYS

    kwargs: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("judge"))):  # the closest (function, class, module) wins
        if marker.args:
            context.setup_error = f"{item.nodeid}: @pytest.mark.judge takes keyword arguments only, got {marker.args!r}"
            return
        kwargs.update(marker.kwargs)
    unknown = sorted(set(kwargs) - set(MARKER_KEYS) - set(SUITE_KEYS))
    if unknown:
        context.setup_error = (
            f"@pytest.mark.judge got unknown argument(s) {', '.join(unknown)}; it takes "
            f"{', '.join((*MARKER_KEYS, *SUITE_KEYS))}"
        )
        return
    context.marker = kwargs
    if runs > 1 or not kwargs.keys().isdisjoint(SUITE_KEYS):
        from .errors import JudgeError
        from .suites.marker import suite_of

        try:
            suite = suite_of(item, kwargs, runs)
        except JudgeError as exc:
            context.setup_error = f"{item.nodeid}: {exc}"
            return
        if suite is not None:  # its protocol is run by `SuiteProtocol`
            from .suites.repeat import start

            start(context, suite)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test whose `judge` marker is wrong fails at its setup, saying what is wrong."""
    context = item.stash.get(CONTEXT_KEY, None)
    if context is not None and context.setup_error is not None:
        pytest.fail(context.setup_error, pytrace=False)


class SuiteProtocol:
    """Runs the protocol of a repeated or gated test (see `suites.repeat`); any other test's is pytest's."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        context = item.stash.get(CONTEXT_KEY, None)
        if context is None or context.suite is None:
            return None
        from .suites.repeat import run_protocol

        return run_protocol(item, nextitem, context, item.config.stash[RUNTIME_KEY])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """See `finish_report`; a run of a repeated or gated test is noted, its reports are finished once its
    runs are decided (see `suites.repeat`)."""
    report = yield
    context = item.stash.get(CONTEXT_KEY, None)
    if context is None:
        return report
    suite = context.suite
    if suite is not None and suite.running:
        suite.note(call, report)
        return report
    finish_report(item, context, report)
    return report


def finish_report(item: pytest.Item, context: TestContext, report: pytest.TestReport) -> None:
    """The call report gets the judgments' report sections; the teardown report carries one attempt's
    judgments to the controller (and, with --junitxml, as JUnit properties): a rerun
    (pytest-rerunfailures) starts a new attempt, so nothing is sent twice."""
    if report.when == "call":
        sections = list(context.sections)
        # Shown by -rA / -rP and with failures: cost and latency per judgment (a passing test's
        # section is built only when the run shows passes).
        if context.records and (report.outcome != "passed" or _shows_passes(item.config)):
            from .reporting.terminal import judgment_lines
            from .verdict import record_of

            lines = judgment_lines([record_of(entry, "brief") for entry in context.records])
            sections.append(("llmjudge", "\n".join(lines)))
        if sections:  # redacted on their way out, whatever they quote
            from .redact import redact_value

            report.sections.extend((title, text) for title, text in redact_value(sections))
    elif report.when == "teardown":
        from .handover import read_used_file
        from .session import PAYLOAD_ATTRIBUTE, item_payload

        runtime = item.config.stash.get(RUNTIME_KEY, None)
        child_used = read_used_file(context.used_file) if context.used_file else set()
        if child_used and runtime is not None:  # keys the test's subprocesses used: prune keeps them
            verdict_file = runtime.verdict_file_for(context)
            if verdict_file is not None:
                verdict_file.used.update(child_used)
        if context.records and getattr(item.config.option, "xmlpath", None):
            from .reporting.junit import user_properties
            from .verdict import record_of

            for entry in context.records:
                report.user_properties.extend(user_properties(record_of(entry, "full")))
            suite = context.suite
            if suite is not None and suite.suite.repeated:
                from .redact import redact_value
                from .reporting.suites import runs_properties

                report.user_properties.extend(redact_value(runs_properties(suite.runs_record(context.nodeid))))
        # A run that only counts its judgments hands over brief records (nothing built, nothing redacted).
        payload = item_payload(context, full=context.whole_records)
        if payload:  # plain data on the report crosses the xdist wire to the controller's RunRecorder
            setattr(report, PAYLOAD_ATTRIBUTE, payload)
        if runtime is not None:
            runtime.finish_attempt(context)


def _shows_passes(config: pytest.Config) -> bool:
    chars = getattr(config.option, "reportchars", "") or ""
    return "P" in chars or "A" in chars


@pytest.hookimpl(optionalhook=True)
def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    """pytest-recording: the judge's own calls are neither recorded into nor answered from the test's cassette."""
    from .cassettes import configure_vcr

    configure_vcr(vcr)


@pytest.fixture
def _llmjudge_request(request: pytest.FixtureRequest) -> None:
    """Hands the test's request to its context, so a judgment can resolve `judge_backend` when it needs it
    (set up for the tests that may get another `judge_backend` than the plugin's: see `_request_fixture`)."""
    context = request.node.stash.get(CONTEXT_KEY, None)
    if context is not None:
        context.request = request


@pytest.fixture(scope="session")
def judge_backend() -> Any:
    """The judge for live calls: None means LiteLLM with `--judge-model`.

    Override it in a conftest.py to return any callable that takes the chat messages
    (`list[dict]`) and returns the reply text, sync or async; give it a `name` attribute to name
    the judge in verdict keys.
    """
    return None


@pytest.fixture
def generate(request: pytest.FixtureRequest) -> Generate:
    """The model under test, recorded: `generate(prompt)` returns its reply, kept in the test's verdict file.

    Also `generate.batch(prompt, n, temperature=(low, high))`, `generate.variations(task, prompts)`
    and `await generate.agenerate(prompt)`; see `pytest_llmjudge.generate`.
    """
    from .generation import Generate

    runtime = request.config.stash[RUNTIME_KEY]
    return Generate(runtime, request.node.stash.get(CONTEXT_KEY, None))


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Judge:
    """A `Judge` bound to this test: the session's settings, the test's `judge` marker, its verdict file."""
    from .judge import Judge

    runtime = request.config.stash[RUNTIME_KEY]
    context = request.node.stash.get(CONTEXT_KEY, None)
    return Judge(runtime=runtime, context=context)
