"""Backends: how a judge call reaches a model.

`protocol` says what a backend is (`Backend`, `CallRequest`, `CallResult`); `plan` decides what a
call sends; `retry` holds the retry policy every backend shares and `limiter` the adaptive
concurrency limit; `litellm` and `callable` are the two backends; `loop` is the background event
loop every live call runs on.  Nothing here imports LiteLLM until a live call needs it.
"""

from __future__ import annotations

from .callable import CallableBackend
from .limiter import AdaptiveLimiter
from .litellm import LiteLLMBackend, import_litellm
from .loop import LoopThread
from .plan import SentRequest, merge_instructions, plan_request
from .protocol import Backend, CallRequest, CallResult, UnsupportedParamError
from .retry import backoff_delay, call_with_retries, retry_after

__all__ = [
    "AdaptiveLimiter",
    "Backend",
    "CallRequest",
    "CallResult",
    "CallableBackend",
    "LiteLLMBackend",
    "LoopThread",
    "SentRequest",
    "UnsupportedParamError",
    "backoff_delay",
    "call_with_retries",
    "import_litellm",
    "merge_instructions",
    "plan_request",
    "retry_after",
]
