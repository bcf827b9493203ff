"""The user's own judge: a `judge_backend` callable, sync or async, taking messages, returning the reply text.

A sync one runs in a daemon thread of its own, not in the loop's executor: a call that outlives
--judge-timeout is abandoned (the test fails at the timeout), and an abandoned call must not hold the
process at exit, which the executor's threads do (the interpreter joins them), however long it hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable
from typing import Any

from ..errors import BackendError
from .protocol import CallRequest, CallResult


class CallableBackend:
    """A user's `judge_backend`: any callable taking the chat messages and returning the reply text."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        self.fn = fn
        self.name: str | None = getattr(fn, "name", None) or name

    async def attempt(self, request: CallRequest, timeout: float) -> CallResult:
        """Call the function once; a sync one runs in a thread of its own, so the loop keeps serving others."""
        from .request import merge_instructions  # what a call sends loads with the first live call, not at replay

        source = merge_instructions(request.messages) if request.instructions_in_user else request.messages
        messages = [dict(m) for m in source]
        if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(type(self.fn).__call__):
            result = await self.fn(messages)
        else:
            result = await in_daemon_thread(self.fn, messages)
            if inspect.isawaitable(result):
                result = await result
        if not isinstance(result, str):
            raise BackendError(
                f"judge_backend {self.name or self.fn!r} returned {type(result).__name__}; "
                "it must return the reply text (str)"
            )
        return CallResult(text=result)

    def classify(self, exc: BaseException, request: CallRequest) -> BackendError:
        """Timeouts and dropped connections are retried; anything else the function raised is not."""
        from .retry import error_detail

        retryable = isinstance(exc, (TimeoutError, ConnectionError))
        return BackendError(f"judge_backend raised {exc.__class__.__name__}: {error_detail(exc)}", retryable=retryable)


async def in_daemon_thread(fn: Callable[[Any], Any], arg: Any) -> Any:
    """`fn(arg)` in a new daemon thread, awaited: its result or its exception.  Abandoned (the caller timed
    out or was cancelled), the thread runs on unawaited and ends with the process, never holding it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Any, failed: bool) -> None:
        if future.done():  # abandoned: nothing waits for it any more
            return
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def run() -> None:
        try:
            outcome, failed = fn(arg), False
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, as the executor would
            outcome, failed = exc, True
        with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile: the run is over
            loop.call_soon_threadsafe(settle, outcome, failed)

    threading.Thread(target=run, name="llmjudge-judge-backend", daemon=True).start()
    return await future
