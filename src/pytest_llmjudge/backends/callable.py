"""The user's own judge: a `judge_backend` callable, sync or async, taking messages, returning the reply text."""

from __future__ import annotations

import asyncio
import inspect
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
        """Call the function once; a sync one runs in a worker thread, so the loop keeps serving others."""
        from .request import merge_instructions  # what a call sends loads with the first live call, not at replay

        source = merge_instructions(request.messages) if request.instructions_in_user else request.messages
        messages = [dict(m) for m in source]
        if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(type(self.fn).__call__):
            result = await self.fn(messages)
        else:
            result = await asyncio.get_running_loop().run_in_executor(None, self.fn, messages)
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
