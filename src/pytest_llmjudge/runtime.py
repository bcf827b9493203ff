"""Per-session state: the resolved settings, the stores, the background loop, the running test.

The pytest layer creates one `JudgeRuntime` per session (per xdist worker) and tells it which test
is running; `assert_judged` finds both here, so it works without a fixture.  A runtime stack,
rather than one global, keeps nested pytest runs (pytester) from clobbering the outer one.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from .errors import BudgetExceeded
from .runner import LoopThread
from .settings import Settings, resolve
from .store import Ledger, LocalCache, ledger_path

_UNSET: Any = object()


@dataclass
class TestContext:
    """The test a judgment belongs to: where its verdicts live and what it has judged so far."""

    nodeid: str
    module_path: Path | None
    test_name: str
    marker: dict[str, Any] = field(default_factory=dict)
    request: Any = None  # the item's FixtureRequest: resolves `judge_backend` on first need
    records: list[dict[str, Any]] = field(default_factory=list)  # one per judgment, for reports
    sections: list[tuple[str, str]] = field(default_factory=list)  # report sections (raw replies)
    backend: Any = _UNSET

    def judge_backend(self) -> Any:
        """The `judge_backend` fixture's value for this test (None: use LiteLLM)."""
        if self.backend is _UNSET:
            self.backend = None
            if self.request is not None:
                self.backend = self.request.getfixturevalue("judge_backend")
        return self.backend


class JudgeRuntime:
    """Everything one process shares across judgments."""

    def __init__(
        self,
        settings: Settings,
        *,
        rootdir: Path,
        cache_dir: Path | None = None,
        store_root: Path | None = None,
    ) -> None:
        self.settings = settings
        self.rootdir = rootdir
        self.store_root = store_root
        # Replay reads the ledger only, and live stores nothing: neither opens the cache.
        use_cache = cache_dir is not None and settings.mode in ("auto", "refresh")
        self.cache = LocalCache(cache_dir) if use_cache else None
        self.loop = LoopThread()
        self.ledgers: dict[Path, Ledger] = {}
        self.current: TestContext | None = None
        self.spent_usd = 0.0
        self.notices: list[str] = []
        self.drift: list[dict[str, Any]] = []
        self._key_locks: dict[str, asyncio.Lock] = {}
        self._semaphore: asyncio.Semaphore | None = None

    @classmethod
    def standalone(cls) -> "JudgeRuntime":
        """A runtime outside pytest: settings from the environment, nothing committed."""
        return cls(resolve({}, {}, os.environ), rootdir=Path.cwd())

    def ledger_for(self, context: TestContext | None) -> Ledger | None:
        if context is None or context.module_path is None:
            return None
        path = ledger_path(context.module_path, context.test_name, store_root=self.store_root, rootdir=self.rootdir)
        ledger = self.ledgers.get(path)
        if ledger is None:
            ledger = self.ledgers[path] = Ledger(path, context.nodeid)
        return ledger

    # -- live-call plumbing, used on the background loop only --------------------------------

    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
        return self._semaphore

    @asynccontextmanager
    async def key_lock(self, key: str) -> AsyncIterator[None]:
        """One live call per key at a time in this process (the second finds the first's result)."""
        lock = self._key_locks.setdefault(key, asyncio.Lock())
        async with lock:
            yield

    def check_budget(self) -> None:
        budget = self.settings.budget
        if budget is not None and self.spent_usd >= budget:
            raise BudgetExceeded(
                f"--judge-budget=${budget:g} is spent (${self.spent_usd:.4f} so far): no further live judge calls. "
                "Raise the budget, or replay stored verdicts."
            )

    def spend(self, cost_usd: float | None) -> None:
        if cost_usd:
            self.spent_usd += cost_usd

    def close(self) -> None:
        self.loop.stop()
        if self.cache is not None:
            self.notices.extend(n for n in self.cache.notices if n not in self.notices)
            self.cache.close()


_ACTIVE: list[JudgeRuntime] = []


def activate(runtime: JudgeRuntime) -> None:
    _ACTIVE.append(runtime)


def deactivate(runtime: JudgeRuntime) -> None:
    if runtime in _ACTIVE:
        _ACTIVE.remove(runtime)


def active() -> JudgeRuntime | None:
    """The innermost running session's runtime, or None outside pytest."""
    return _ACTIVE[-1] if _ACTIVE else None
