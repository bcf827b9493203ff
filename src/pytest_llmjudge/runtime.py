"""Per-session state: the resolved settings, the stores, the background loop, the running test.

The pytest layer creates one `JudgeRuntime` per session (per xdist worker) and tells it which test
is running; `assert_judged` finds both here, so it works without a fixture.  A runtime stack,
rather than one global, keeps nested pytest runs (pytester) from clobbering the outer one.
This module is loaded at every pytest start-up: it defines plain classes and imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from .backends import CallResult, LoopThread
    from .backends.limiter import AdaptiveLimiter
    from .settings import Settings
    from .store import Ledger, LocalCache
    from .store.spend import SharedSpend
    from .verdict import DriftRecord, JudgmentRecord, PendingRecord

_UNSET: Any = object()
# Files whose tests have verdict files: modules, and text files of doctests (--doctest-glob).
STORED_SUFFIXES = (".py", ".txt", ".md", ".rst")


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
        self.ledger: Ledger | None = None  # this test's verdict file, once a judgment asked for it
        self.backend: Any = _UNSET
        # True: pytest would give this test the plugin's own `judge_backend` (None), so it is not resolved
        self.default_backend = False
        self.attempt = 1  # a rerun (pytest-rerunfailures) is attempt 2, 3, ...
        self.used_file: str | None = None  # where the test's subprocesses list the verdict keys they used
        self.whole_records = True  # False: the run only counts this test's judgments (see JudgeRuntime.whole_records)

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
        self.ledgers: dict[str, Ledger] = {}  # by location (`Ledger.location`)
        self.current: TestContext | None = None
        self.configured = True  # False: the session set no option (the plugin then resolves settings lazily)
        # Does a report read every judgment's whole record (JSON or HTML report, -v, JUnit, xdist)?  Else
        # the summary counts brief records, and no record is redacted.
        self.whole_records = True
        self.spent_usd = 0.0  # this process's live calls
        self.spent_tokens = 0  # this process's live calls, prompt + completion, where the server counted them
        self._uncountable: str | None = None  # why a budget can no longer be kept (then every live call is refused)
        self._shared_spend: SharedSpend | None = None
        self._notices: list[str] = []
        self._key_locks: dict[str, asyncio.Lock] = {}
        self._semaphore: asyncio.Semaphore | None = None
        self.limiters: dict[tuple[str, str | None], AdaptiveLimiter] = {}  # by judge model and api base
        self.child_settings: str | None = None  # LLMJUDGE_TEST's session part (JSON), once settings are resolved

    @property
    def settings(self) -> Settings:
        """The session's resolved settings."""
        settings = self._settings
        if callable(settings):
            settings = self._settings = settings()
            if _ACTIVE and _ACTIVE[-1] is self:
                _redact_named_variables()
        return settings

    @property
    def settings_resolved(self) -> bool:
        return not callable(self._settings)

    @classmethod
    def standalone(cls) -> JudgeRuntime:
        """A runtime outside pytest: settings from the environment, nothing committed."""
        from .settings import resolve

        return cls(resolve({}, {}, os.environ), rootdir=Path.cwd())

    def _cache_dir(self) -> Path | None:
        source = self._cache_dir_source
        if callable(source):
            source = self._cache_dir_source = source()
        return source

    def ledger_for(self, context: TestContext | None, clean: Callable[[str], str] | None = None) -> Ledger | None:
        """The test's verdict file, found once per test and shared by every judgment in it.  `clean`:
        the judgment's redactor, for a file name made of parametrize ids."""
        if context is None or (context.ledger is None and context.module_path is None):
            return None
        if context.ledger is None and context.module_path is not None:
            _, location_of = _ledger_functions()
            location = location_of(
                context.module_path, context.test_name, store_root=self.store_root, rootdir=self.rootdir, clean=clean
            )
            context.ledger = self.ledger_at(location, context.nodeid)
        return context.ledger

    def ledger_at(self, path: str | Path, nodeid: str = "") -> Ledger:
        """The one Ledger of the verdict file at `path` in this process, made on first need: every
        judgment reading or writing that file shares it, so its `used` keys are all there for prune."""
        location = os.fspath(path)
        ledger = self.ledgers.get(location)
        if ledger is None:
            ledger_type, _ = _ledger_functions()
            ledger = self.ledgers[location] = ledger_type(path, nodeid)
        return ledger

    def finish_attempt(self, context: TestContext) -> None:
        """The test's attempt has been reported: forget its judgments (a rerun starts afresh) and
        release its verdict file (the keys it used were reported; a rerun reads the file again)."""
        context.records = []
        context.drift = []
        context.sections = []
        context.attempt += 1
        context.request = None  # a rerun's fixture binds its own; a finished test keeps no fixtures alive
        context.backend = _UNSET
        ledger = context.ledger
        if ledger is not None:
            context.ledger = None
            if self.ledgers.get(ledger.location) is ledger:
                del self.ledgers[ledger.location]

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
        judges imports no storage code.  Replay reads the ledger only, and live stores nothing."""
        if self._cache is None and self.settings.mode in ("auto", "refresh"):
            cache_dir = self._cache_dir()
            if cache_dir is not None:
                from .store import LocalCache

                self._cache = LocalCache(cache_dir)
        return self._cache

    @property
    def notices(self) -> list[str]:
        """Things the user should read after the run (cache set aside, budget reached), oldest first."""
        cache_notices = self._cache.notices if self._cache is not None else []
        return list(dict.fromkeys([*self._notices, *cache_notices]))

    @property
    def shared_spend(self) -> SharedSpend | None:
        """The run's spend shared by its xdist workers (with a budget only), made on first need."""
        settings = self.settings
        if self._shared_spend is None and (settings.budget is not None or settings.budget_tokens is not None):
            from .store.spend import SharedSpend

            self._shared_spend = SharedSpend.for_run(self._cache_dir())
        return self._shared_spend

    def total_spent(self) -> float:
        """Dollars spent on live calls in this run: across every xdist worker where it is shared."""
        shared = self.shared_spend
        if shared is not None:
            return max(self.spent_usd, shared.total())
        return self.spent_usd

    def total_tokens(self) -> int:
        """Tokens (prompt + completion) of live calls in this run: across every xdist worker where it is shared."""
        shared = self.shared_spend
        if shared is not None:
            return max(self.spent_tokens, shared.tokens())
        return self.spent_tokens

    def check_budget(self) -> None:
        """Refuse a live call once --judge-budget or --judge-budget-tokens is spent, or can no longer be
        counted (calls already in flight still finish)."""
        settings = self.settings
        budget, budget_tokens = settings.budget, settings.budget_tokens
        if budget is None and budget_tokens is None:
            return
        from .errors import BudgetExceeded

        if self._uncountable is not None:
            raise BudgetExceeded(self._uncountable)
        shared = self.shared_spend
        where = " by all xdist workers" if shared is not None and shared.shared else ""
        spent = self.total_spent() if budget is not None else 0.0
        if budget is not None and spent >= budget:
            self._refuse(
                f"--judge-budget=${budget:g} is spent (${spent:.4f} so far{where}): no further live judge calls "
                "this run. Raise --judge-budget, or replay stored verdicts.",
                f"llmjudge: --judge-budget=${budget:g} reached",
                f"(${spent:.4f} spent); later live judge calls were refused",
            )
        used = self.total_tokens() if budget_tokens is not None else 0
        if budget_tokens is not None and used >= budget_tokens:
            self._refuse(
                f"--judge-budget-tokens={budget_tokens} is used up ({used} tokens so far{where}): no further live "
                "judge calls this run. Raise --judge-budget-tokens, or replay stored verdicts.",
                f"llmjudge: --judge-budget-tokens={budget_tokens} reached",
                f"({used} tokens used); later live judge calls were refused",
            )

    def _refuse(self, message: str, reached: str, how_far: str) -> None:
        """Note, once, that a budget stopped live calls; raise BudgetExceeded with `message`."""
        from .errors import BudgetExceeded

        if not any(n.startswith(reached) for n in self._notices):
            self._notices.append(f"{reached} {how_far}")
        raise BudgetExceeded(message)

    def spend(self, cost_usd: float | None, tokens: int | None = None) -> None:
        """Count a live call's cost and tokens against the budgets."""
        if cost_usd or tokens:
            self.spent_usd += cost_usd or 0.0
            self.spent_tokens += tokens or 0
            shared = self.shared_spend
            if shared is not None:
                shared.add(cost_usd or 0.0, tokens or 0)

    def count(self, result: CallResult, model: str) -> CallResult:
        """Count a live call against the budgets and return it priced: LiteLLM's price, else --judge-price.

        A budget that this call cannot be counted against (no price for `model`, or no token usage
        from its server) is never silently ignored: BudgetExceeded names the options that fix it,
        for this judgment and every later live call of the run.
        """
        import dataclasses

        settings = self.settings
        if not result.prompt_tokens and not result.completion_tokens:  # LiteLLM fills in 0s where no usage came back
            result = dataclasses.replace(result, prompt_tokens=None, completion_tokens=None)
        prompt, completion = result.prompt_tokens, result.completion_tokens
        tokens = prompt + completion if prompt is not None and completion is not None else None
        if result.cost_usd is None and settings.price is not None and prompt is not None and completion is not None:
            result = dataclasses.replace(result, cost_usd=round(settings.price.of(prompt, completion), 10))
        self.spend(result.cost_usd, tokens)
        why = budget = ""
        if settings.budget is not None and result.cost_usd is None:
            unknown = "no token usage came back to price it with" if settings.price else "LiteLLM has no price for it"
            budget = f"--judge-budget=${settings.budget:g}"
            why = (
                f"{budget} cannot be kept: a call to {model} could not be priced "
                f"({unknown}). Give the judge's price with --judge-price=input=X,output=Y (US dollars per million "
                "tokens; judge_price in the ini file, LLMJUDGE_PRICE), or budget tokens with --judge-budget-tokens=N"
            )
        elif settings.budget_tokens is not None and tokens is None:
            budget = f"--judge-budget-tokens={settings.budget_tokens}"
            why = (
                f"{budget} cannot be kept: {model}'s server reported no token usage. Use a judge server that "
                "reports usage, or set no token budget"
            )
        if why:
            self._uncountable = f"{why}. No further live judge calls this run."
            self._refuse(
                self._uncountable,
                f"llmjudge: {budget} could not be kept",
                "(a live call could not be counted against it); live judge calls were refused",
            )
        return result

    def close(self) -> None:
        """Stop the background loop and close the cache, keeping its notices."""
        if self._loop is not None:
            self._loop.stop()
        if self._cache is not None:
            self._notices[:] = self.notices
            self._cache.close()


# -- a test's subprocess: LLMJUDGE_TEST --------------------------------------------------------

TEST_ENV = "LLMJUDGE_TEST"
# What a test's subprocess needs to judge as the test would: never a key, never a report path.
_CHILD_SETTINGS = (
    "model",
    "mode",
    "threshold",
    "api_base",
    "temperature",
    "timeout",
    "retries",
    "samples",
    "budget",
    "structured",
    "parse_retries",
    "generate_model",
    "generate_api_base",
    "budget_tokens",
    "price",
    "max_tokens",
    "reasoning_effort",
    "params",
    "instructions_in_user",
    "redact_env",
)


def test_environment(runtime: JudgeRuntime, context: TestContext, used_file: str | os.PathLike[str]) -> str | None:
    """The value of LLMJUDGE_TEST while `context`'s test runs (None when the test has no verdict file).

    JSON: the node id, the verdict file, the settings a child process needs (mode, model, api base
    without credentials, sampling), the test's JSON-safe marker arguments, and a file where the child
    lists the verdict keys it used (so prune keeps them).  No key or secret is in it.
    """
    if context.module_path is None:
        return None
    import json
    from json.encoder import encode_basestring_ascii as quoted

    marker = {}
    for name, value in context.marker.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        marker[name] = value
    part = runtime.child_settings
    if part is None:
        # The session's part is the same for every test: encoded once, and joined to the test's part.
        part = json.dumps(_child_settings(runtime))
        if runtime.settings_resolved:  # kept once final (an unconfigured session resolves its settings late)
            runtime.child_settings = part
    # Every test of the session pays for this (it cannot know whether the test starts a child that
    # judges): the test's few strings are quoted directly rather than through json.dumps.
    return (
        f'{{"nodeid": {quoted(context.nodeid)}, "test_name": {quoted(context.test_name)}, '
        f'"module": {quoted(str(context.module_path))}, "marker": {json.dumps(marker) if marker else "{}"}, '
        f'"used": {quoted(os.fspath(used_file))}, {part[1:]}'
    )


def _child_settings(runtime: JudgeRuntime) -> dict[str, Any]:
    """LLMJUDGE_TEST's part that is the session's, not the test's: where the store is, and the settings."""
    part: dict[str, Any] = {
        "store_root": str(runtime.store_root) if runtime.store_root is not None else None,
        "rootdir": str(runtime.rootdir),
    }
    if runtime.settings_resolved:  # else nothing was configured: the child resolves the same from its environment
        settings = runtime.settings
        values = {name: getattr(settings, name) for name in _CHILD_SETTINGS}
        values["api_base"] = _without_credentials(values["api_base"])
        values["generate_api_base"] = _without_credentials(values["generate_api_base"])
        part["settings"] = values
        part["sources"] = {name: settings.sources.get(name, "default") for name in _CHILD_SETTINGS}
    return part


def _without_credentials(url: str | None) -> str | None:
    if not url or "@" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host))


def _ledger_functions() -> tuple[type[Ledger], Callable[..., str]]:
    """The store's Ledger and ledger_location, imported on the first judgment (this module loads at
    every start-up, and an import statement per judgment costs as much as the lookup it serves).

    Found in sys.modules each time, not kept here: an in-process pytest run (pytester) imports the
    store afresh, and a test that patches its Ledger must patch the one judgments use."""
    module: Any = sys.modules.get(_LEDGER_MODULE)
    if module is None:
        from .store import ledger as module
    return module.Ledger, module.ledger_location


_LEDGER_MODULE = __name__.rpartition(".")[0] + ".store.ledger"


def read_used_file(path: str) -> set[str]:
    """The verdict keys a test's subprocesses used (one per line), the file removed."""
    # Asked first without raising: most tests start no child that judges, and a FileNotFoundError
    # for each of them cost more than the rest of the plugin's per-test bookkeeping.
    if not os.access(path, os.F_OK):
        return set()
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return set()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return {line.strip() for line in text.splitlines() if line.strip()}


def _from_test_environment(value: str) -> JudgeRuntime | None:
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
    runtime.current = context
    used_file = payload.get("used")

    def finish() -> None:
        ledger = context.ledger
        if used_file and ledger is not None and ledger.used:
            try:
                with open(used_file, "a", encoding="utf-8") as handle:
                    handle.write("".join(f"{key}\n" for key in sorted(ledger.used)))
            except OSError:
                pass
        runtime.close()

    atexit.register(finish)
    return runtime


_ACTIVE: list[JudgeRuntime] = []
_CHILD: list[JudgeRuntime] = []  # a test's subprocess: the runtime LLMJUDGE_TEST describes, made once


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
    from .redact import redact_variables

    innermost = _ACTIVE[-1] if _ACTIVE else None
    resolved = innermost is not None and innermost.settings_resolved
    redact_variables(innermost.settings.redact_env if innermost is not None and resolved else ())


def active() -> JudgeRuntime | None:
    """The innermost running session's runtime; in a test's subprocess (LLMJUDGE_TEST set), the
    test's; else None (outside pytest)."""
    if _ACTIVE:
        return _ACTIVE[-1]
    if not _CHILD:
        value = os.environ.get(TEST_ENV)
        runtime = _from_test_environment(value) if value else None
        if runtime is None:
            return None
        _CHILD.append(runtime)
    return _CHILD[0]


_STANDALONE: list[JudgeRuntime] = []
_STANDALONE_LOCK = threading.Lock()


def standalone_runtime() -> JudgeRuntime:
    """Outside pytest: the process's one runtime (settings from the environment, nothing stored),
    made on first need.  Every Judge, assertion and generation there shares it: one resolution of
    the settings, one background loop, one budget."""
    with _STANDALONE_LOCK:
        if not _STANDALONE:
            from .redact import redact_variables

            runtime = JudgeRuntime.standalone()
            redact_variables(runtime.settings.redact_env)
            _STANDALONE.append(runtime)
        return _STANDALONE[0]
