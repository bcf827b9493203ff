"""Backends: how a judge call reaches a model.

`protocol` says what a backend is (`Backend`, `CallRequest`, `CallResult`); `request` decides what a
call sends; `retry` holds the retry policy every backend shares and `limiter` the adaptive
concurrency limit; `litellm` and `callable` are the two backends; `litellm_import` imports LiteLLM
for the backend and the planner alike; `loop` is the background event loop every live call runs on.
Nothing here imports LiteLLM until a live call needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .callable import CallableBackend
    from .limiter import AdaptiveLimiter
    from .litellm import LiteLLMBackend
    from .litellm_import import import_litellm
    from .loop import LoopThread
    from .protocol import Backend, CallRequest, CallResult, UnsupportedParamError
    from .request import SentRequest, merge_instructions, plan_request
    from .retry import backoff_delay, call_with_retries, retry_after

# Each name loads its module on first use: a replay needs only the LiteLLM backend's class (to
# tell it from a backend of your own), not the protocol's call records, the limiter or the loop.
_MODULE_OF = {
    "AdaptiveLimiter": "limiter",
    "Backend": "protocol",
    "CallRequest": "protocol",
    "CallResult": "protocol",
    "CallableBackend": "callable",
    "LiteLLMBackend": "litellm",
    "LoopThread": "loop",
    "SentRequest": "request",
    "UnsupportedParamError": "protocol",
    "backoff_delay": "retry",
    "call_with_retries": "retry",
    "import_litellm": "litellm_import",
    "merge_instructions": "request",
    "plan_request": "request",
    "retry_after": "retry",
}


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, globals())


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
