"""Per-session state (the resolved settings, the stores, the background loop, the budget, the running
test) and which runtime a judgment belongs to.

The pytest layer creates one `JudgeRuntime` per session (per xdist worker), activates it and tells
it which test is running; `assert_judged` finds it with `active`: the innermost pytest session's, a
test's subprocess's, or else the `standalone_runtime`.  A stack rather than one global keeps nested
pytest runs (pytester) from clobbering the outer one.  What a run keeps between judgments lives on
its runtime and ends with it.  This module is loaded at every pytest start-up: it defines plain
classes and imports nothing heavy.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from .backends.limiter import AdaptiveLimiter
    from .backends.loop import LoopThread
    from .budget import Budget
    from .settings import Settings
    from .store.cache import LocalCache
    from .store.verdict_file import VerdictFile
    from .verdict import DriftRecord, JudgmentRecord, PendingRecord

_UNSET: Any = object()
_PACKAGE = __name__.rpartition(".")[0]
TEST_ENV = "LLMJUDGE_TEST"  # a test's hand-over to its subprocesses (written by `handover`)
# Files whose tests have verdict files: modules, and text files of doctests (--doctest-glob).
STORED_SUFFIXES = (".py", ".txt", ".md", ".rst")
# The folders of the `llmjudge` commands' own verdict files, in the store's root (`standalone.command_file`).
COMMAND_FOLDERS = ("calibration", "qualification")


class TestContext:
    """The test a judgment belongs to: where its verdicts live and what it has judged so far.

    A plain class rather than a dataclass: one is made per test, and the module loads at start-up.
    """

    def __init__(
        self, nodeid: str, module_path: Path | None, test_name: str, *, marker: dict[str, Any] | None = None
    ) -> None:
        self.nodeid = nodeid
        self.module_path = module_path
        self.test_name = test_name
        self.marker: dict[str, Any] = marker if marker is not None else {}
        self.request: Any = None  # the test's FixtureRequest, bound by a fixture: resolves `judge_backend`
        self.records: list[JudgmentRecord | PendingRecord] = []  # one per judgment, for reports
        self.drift: list[DriftRecord] = []  # refresh mode: verdicts that moved against what was stored
        self.calibrations: list[dict[str, Any]] = []  # assert_judge_agrees' figures, for the reports
        self.sections: list[tuple[str, str]] = []  # report sections (raw replies)
        self.verdict_file: VerdictFile | None = None  # this test's verdict file, once a judgment asked for it
        self.backend: Any = _UNSET
        # True: pytest would give this test the plugin's own `judge_backend` (None), so it is not resolved
        self.default_backend = False
        self.attempt = 1  # a rerun (pytest-rerunfailures) is attempt 2, 3, ...
        self.used_file: str | None = None  # where the test's subprocesses list the verdict keys they used
        self.whole_records = True  # False: the run only counts this test's judgments (see JudgeRuntime.whole_records)
        # How many judgments of each (criteria, rubric) each run of the attempt made: a judgment's position
        # (pipeline.record), by criteria, rubric and run
        self.positions: dict[tuple[str, str, int], int] = {}
        # A repeated test (`runs=`, --judge-runs): the run under way, 0 to runs - 1.  One more field of the
        # test: the keys of a run's judgments and generations hold it when it is not 0.
        self.run = 0
        self.runs = 1
        self.group: str | None = None  # the node id of the pass-rate gate's group this test is a case of
        self.suite: Any = None  # how a repeated or gated test is run and decided (`suites.repeat.SuiteRun`)
        self.setup_error: str | None = None  # what is wrong with its `judge` marker: its setup fails saying so

    def forget_fixtures(self) -> None:
        """The test's fixtures were torn down (its attempt ended, or a repeated test's run did): what was
        bound from them is resolved again from the next ones."""
        self.request = None
        self.backend = _UNSET

    def run_text(self) -> str | None:
        """How a message names the run under way (`2 of runs 0 to 4`); None where the test is not repeated."""
        return f"{self.run} of runs 0 to {self.runs - 1}" if self.runs > 1 else None

    def judge_backend(self) -> Any:
        """The `judge_backend` fixture's value for this test (None: use LiteLLM)."""
        if self.backend is _UNSET:
            self.backend = None
            if self.request is not None and not self.default_backend:
                self.backend = self.request.getfixturevalue("judge_backend")
        return self.backend


class JudgeRuntime:
    """Everything one process shares across judgments."""

    def __init__(
        self,
        settings: Settings | Callable[[], Settings],
        *,
        rootdir: Path,
        cache_dir: Path | Callable[[], Path | None] | None = None,
        store_root: Path | None = None,
    ) -> None:
        """`cache_dir` may be a function giving it, called only when the cache or the spend file is needed
        (pytest's `config.cache.mkdir` creates the directory it names).  `settings` too may be a
        function: a session configured for nothing resolves its (default) settings on first need."""
        self._settings = settings
        self.rootdir = rootdir
        self.store_root = store_root
        self._cache_dir_source = cache_dir
        self._cache: LocalCache | None = None
        self._loop: LoopThread | None = None
        self.verdict_files: dict[str, VerdictFile] = {}  # by location (`VerdictFile.location`)
        self.current: TestContext | None = None
        self.configured = True  # False: the session set no option (the plugin then resolves settings lazily)
        # Does a report read every judgment's whole record (JSON or HTML report, -v, JUnit, xdist)?  Else
        # the summary counts brief records, and no record is redacted.
        self.whole_records = True
        self._budget: Budget | None = None
        self._notices: list[str] = []
        self._key_locks: dict[str, asyncio.Lock] = {}
        self._semaphore: asyncio.Semaphore | None = None
        self.limiters: dict[tuple[str, str | None], AdaptiveLimiter] = {}  # by judge model and api base
        # LLMJUDGE_TEST's session part (JSON), and whether the settings were resolved when it was encoded
        self.child_settings: tuple[bool, str] | None = None
        # What planning keeps for this run (`pipeline.plan.PlanMemo`), made by the first judgment; only
        # planning reads it, so the run holds it without knowing its type (the pipeline stands on the run).
        self.plans: object = None

    @property
    def settings(self) -> Settings:
        """The session's resolved settings."""
        settings = self._settings
        if callable(settings):
            settings = self._settings = settings()
            if _ACTIVE and _ACTIVE[-1] is self:
                _redact_named_variables()  # a session configured late: what they name is known only now
        return settings

    @property
    def settings_resolved(self) -> bool:
        return not callable(self._settings)

    def _cache_dir(self) -> Path | None:
        source = self._cache_dir_source
        if callable(source):
            source = self._cache_dir_source = source()
        return source

    def verdict_file_for(
        self, context: TestContext | None, clean: Callable[[str], str] | None = None
    ) -> VerdictFile | None:
        """The test's verdict file, found once per test and shared by every judgment in it.  `clean`:
        the judgment's redactor, for a file name made of parametrize ids."""
        if context is None or (context.verdict_file is None and context.module_path is None):
            return None
        if context.verdict_file is None and context.module_path is not None:
            _, location_of = _verdict_file_functions()
            location = location_of(
                context.module_path, context.test_name, store_root=self.store_root, rootdir=self.rootdir, clean=clean
            )
            context.verdict_file = self.verdict_file_at(location, context.nodeid)
        return context.verdict_file

    def verdict_file_at(self, path: str | Path, nodeid: str = "") -> VerdictFile:
        """The one `VerdictFile` of the file at `path` in this process, made on first need: every
        judgment reading or writing that file shares it, so its `used` keys are all there for prune."""
        location = os.fspath(path)
        verdict_file = self.verdict_files.get(location)
        if verdict_file is None:
            verdict_file_type, _ = _verdict_file_functions()
            verdict_file = self.verdict_files[location] = verdict_file_type(path, nodeid)
        return verdict_file

    def finish_attempt(self, context: TestContext) -> None:
        """The test's attempt has been reported: forget its judgments (a rerun starts afresh) and
        release its verdict file (the keys it used were reported; a rerun reads the file again)."""
        context.records = []
        context.positions = {}
        context.drift = []
        context.sections = []
        context.attempt += 1
        context.run, context.runs, context.group, context.suite = 0, 1, None, None  # set again at the next setup
        context.forget_fixtures()  # a rerun's fixture binds its own; a finished test keeps no fixtures alive
        verdict_file = context.verdict_file
        if verdict_file is not None:
            context.verdict_file = None
            if self.verdict_files.get(verdict_file.location) is verdict_file:
                del self.verdict_files[verdict_file.location]

    # -- live-call plumbing, used on the background loop only --------------------------------

    @property
    def loop(self) -> LoopThread:
        """The background loop for live calls, started on first need (asyncio stays unimported until then)."""
        if self._loop is None:
            from .backends.loop import LoopThread
            from .cassettes import JUDGE_THREAD_NAME

            self._loop = LoopThread(name=JUDGE_THREAD_NAME)  # vcrpy cassettes tell the judge's calls by it
        return self._loop

    def semaphore(self) -> asyncio.Semaphore:
        """Bounds the judge calls under way in this process (--judge-concurrency), waits and retries included."""
        import asyncio

        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
        return self._semaphore

    def limiter(self, model: str, api_base: str | None) -> AdaptiveLimiter:
        """Bounds the requests in flight to one judge (a model at an api base): --judge-concurrency at
        most, halved on a rate limit (429) and raised again as calls succeed, so a suite larger than the
        provider's limit slows down, not fails.  A pause the server asks for holds that judge only (in
        every xdist worker of the run: see `store.pace`)."""
        route = (model, api_base)
        limiter = self.limiters.get(route)
        if limiter is None:
            from .backends.limiter import AdaptiveLimiter
            from .store.pace import SharedPace

            # xdist workers share what they learn of the judge's limit (as they share the spend)
            pace = SharedPace.for_run(self._cache_dir, model, api_base)
            limiter = self.limiters[route] = AdaptiveLimiter(self.settings.concurrency, pace=pace)
        return limiter

    def note(self, text: str) -> None:
        """Add a line for the run's summary (once, however often it is noted)."""
        if text not in self._notices:
            self._notices.append(text)

    @asynccontextmanager
    async def key_lock(self, key: str) -> AsyncIterator[None]:
        """One live call per key at a time in this process (the second finds the first's result)."""
        import asyncio

        lock = self._key_locks.setdefault(key, asyncio.Lock())
        async with lock:
            yield

    @property
    def cache(self) -> LocalCache | None:
        """The local cache (auto and refresh modes), made on first use: a session that never
        judges imports no storage code.  Replay reads the verdict file only, and live stores nothing."""
        if self._cache is None and self.settings.mode in ("auto", "refresh"):
            cache_dir = self._cache_dir()
            if cache_dir is not None:
                from .store.cache import LocalCache

                self._cache = LocalCache(cache_dir)
        return self._cache

    @property
    def notices(self) -> list[str]:
        """Things the user should read after the run (cache set aside, budget reached), oldest first."""
        cache_notices = self._cache.notices if self._cache is not None else []
        return list(dict.fromkeys([*self._notices, *cache_notices]))

    @property
    def budget(self) -> Budget:
        """The run's budgets and what this process spent, made on the first live call."""
        if self._budget is None:
            from .budget import Budget

            self._budget = Budget(self.settings, self._cache_dir, self.note)
        return self._budget

    def close(self) -> None:
        """Stop the background loop and close the cache, keeping its notices; forget what planning kept."""
        if self._loop is not None:
            self._loop.stop()
        if self._cache is not None:
            self._notices[:] = self.notices
            self._cache.close()
        self.plans = None


# -- which runtime is current ----------------------------------------------------------------

_ACTIVE: list[JudgeRuntime] = []
_CHILD: list[JudgeRuntime] = []  # a test's subprocess: the runtime LLMJUDGE_TEST describes, made once
_STANDALONE: list[JudgeRuntime] = []
_STANDALONE_LOCK = threading.Lock()


def activate(runtime: JudgeRuntime) -> None:
    """Make `runtime` the one `assert_judged` finds, until `deactivate`."""
    _ACTIVE.append(runtime)
    _redact_named_variables()


def deactivate(runtime: JudgeRuntime) -> None:
    """Forget `runtime`: the session that made it has ended."""
    if runtime in _ACTIVE:
        _ACTIVE.remove(runtime)
        _redact_named_variables()


def _redact_named_variables() -> None:
    """Redact the variables the innermost session names (--judge-redact-env), and only those."""
    innermost = _ACTIVE[-1] if _ACTIVE else None
    resolved = innermost is not None and innermost.settings_resolved
    names = innermost.settings.redact_env if innermost is not None and resolved else ()
    # Nothing named and nothing redacted yet: `redact` starts with no names when it loads, so a
    # session that never judges need not load it.
    if names or _PACKAGE + ".redact" in sys.modules:
        from .redact import redact_variables

        redact_variables(names)


def active() -> JudgeRuntime | None:
    """The innermost running session's runtime; in a test's subprocess (LLMJUDGE_TEST set), the
    test's; else None (outside pytest)."""
    if _ACTIVE:
        return _ACTIVE[-1]
    if not _CHILD:
        value = os.environ.get(TEST_ENV)
        runtime = from_test_environment(value) if value else None
        if runtime is None:
            return None
        _CHILD.append(runtime)
    return _CHILD[0]


def from_test_environment(value: str) -> JudgeRuntime | None:
    """The runtime of a test's subprocess: the test's settings, its verdict file, its marker."""
    import atexit
    import json

    from .settings import Price, Settings, resolve

    try:
        payload = json.loads(value)
        if payload.get("settings") is None:
            settings = resolve({}, {}, os.environ)
        else:
            values = dict(payload["settings"])
            if values.get("model") is not None:
                values["model"] = tuple(values["model"])
            values["redact_env"] = tuple(values.get("redact_env") or ())
            if values.get("price") is not None:
                values["price"] = Price(*values["price"])
            settings = Settings(
                **values, mode_reason=f"the test's ({TEST_ENV})", sources=dict(payload.get("sources") or {})
            )
        nodeid, module, test_name = str(payload["nodeid"]), Path(payload["module"]), str(payload["test_name"])
        rootdir = Path(payload["rootdir"])
        store_root = Path(payload["store_root"]) if payload.get("store_root") else None
    except (ValueError, KeyError, TypeError):
        return None  # not ours to judge: fall back to settings from the environment
    runtime = JudgeRuntime(settings, rootdir=rootdir, store_root=store_root)
    from .redact import redact_variables

    redact_variables(settings.redact_env)
    context = TestContext(nodeid, module, test_name, marker=dict(payload.get("marker") or {}))
    run, runs = payload.get("run", 0), payload.get("runs", 1)
    if isinstance(run, int) and isinstance(runs, int) and 0 <= run < runs:  # a repeated test's run: keyed as its
        context.run, context.runs = run, runs
    runtime.current = context
    used_file = payload.get("used")

    def finish() -> None:
        verdict_file = context.verdict_file
        if used_file and verdict_file is not None and verdict_file.used:
            try:
                with open(used_file, "a", encoding="utf-8") as handle:
                    handle.write("".join(f"{key}\n" for key in sorted(verdict_file.used)))
            except OSError:
                pass
        runtime.close()

    atexit.register(finish)
    return runtime


def standalone_runtime() -> JudgeRuntime:
    """Outside pytest: the process's one runtime (settings from the environment, nothing stored),
    made on first need.  Every Judge, assertion and generation there shares it: one resolution of
    the settings, one background loop, one budget."""
    with _STANDALONE_LOCK:
        if not _STANDALONE:
            from .redact import redact_variables
            from .settings import resolve

            runtime = JudgeRuntime(resolve({}, {}, os.environ), rootdir=Path.cwd())
            redact_variables(runtime.settings.redact_env)
            _STANDALONE.append(runtime)
        return _STANDALONE[0]


def _verdict_file_functions() -> tuple[type[VerdictFile], Callable[..., str]]:
    """The store's `VerdictFile` and `verdict_file_location`, imported on the first judgment (this module loads at
    every start-up, and an import statement per judgment costs as much as the lookup it serves).

    Found in sys.modules each time, not kept here: an in-process pytest run (pytester) imports the
    store afresh, and a test that patches its `VerdictFile` must patch the one judgments use."""
    module: Any = sys.modules.get(_VERDICT_FILE_MODULE)
    if module is None:
        from .store import verdict_file as module
    return module.VerdictFile, module.verdict_file_location


_VERDICT_FILE_MODULE = _PACKAGE + ".store.verdict_file"
