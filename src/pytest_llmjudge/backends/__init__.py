"""Backends: how a judge call reaches a model.

`protocol` says what a backend is (`Backend`, `CallRequest`, `CallResult`); `retry` holds the retry
policy every backend shares; `litellm` and `callable` are the two backends; `loop` is the background
event loop every live call runs on.  Nothing here imports LiteLLM until a live call needs it.
"""

from __future__ import annotations

from .callable import CallableBackend
from .litellm import LiteLLMBackend, import_litellm
from .loop import LoopThread
from .protocol import Backend, CallRequest, CallResult
from .retry import backoff_delay, call_with_retries

__all__ = [
    "Backend",
    "CallRequest",
    "CallResult",
    "CallableBackend",
    "LiteLLMBackend",
    "LoopThread",
    "backoff_delay",
    "call_with_retries",
    "import_litellm",
]
