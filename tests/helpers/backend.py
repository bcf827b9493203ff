"""Calling a judge backend directly, as the pipeline does: one request through `call_with_retries`.

The tests that check what a backend sends and how it meets faults call it this way, on the `loop`
fixture's background event loop.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_llmjudge.backends.litellm import LiteLLMBackend
from pytest_llmjudge.backends.loop import LoopThread
from pytest_llmjudge.backends.protocol import CallRequest, CallResult
from pytest_llmjudge.backends.retry import call_with_retries
from pytest_llmjudge.errors import BackendError

__all__ = ["CONTEXT_OVERFLOW", "call", "fail"]

# An OpenAI-style context-length error, with the figures a user needs.
CONTEXT_OVERFLOW = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."


def call(loop: LoopThread, request: CallRequest, *, retries: int = 0, timeout: float = 10.0) -> CallResult:
    """`request` through the LiteLLM backend with up to `retries` retries inside `timeout` seconds."""
    return loop.run(call_with_retries(LiteLLMBackend(), request, retries=retries, timeout=timeout))


def fail(loop: LoopThread, request: CallRequest, **kwargs: Any) -> BackendError:
    """The BackendError that `call(loop, request, **kwargs)` must raise."""
    with pytest.raises(BackendError) as info:
        call(loop, request, **kwargs)
    return info.value
