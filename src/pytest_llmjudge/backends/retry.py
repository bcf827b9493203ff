"""The retry policy: what is worth retrying, how long to wait, and one deadline over all attempts.

Retries are ours, not LiteLLM's: its own `num_retries` also retries 400/401/404 with no backoff,
and the OpenAI SDK under it retries twice on its own.  Both are switched off, and `call_with_retries`
retries only what a backend classifies as retryable (429, 5xx, timeouts, dropped connections), with
exponential backoff and jitter, honouring Retry-After, all inside one deadline per judgment.
"""

from __future__ import annotations

import asyncio
import random
import time

from ..errors import BackendError
from ..redact import redact
from .protocol import Backend, CallRequest, CallResult

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def error_detail(exc: BaseException) -> str:
    """The first line of an error's message, redacted and bounded, for our own messages."""
    text = str(exc).strip()
    return redact(text.splitlines()[0] if text else "")[:300]


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header on the error, where the provider sent one."""
    for headers in (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(exc, "headers", None),
    ):
        if not headers:
            continue
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except AttributeError:
            continue
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except (TypeError, ValueError):
            return None  # an HTTP date: fall back to our own backoff
    return None


def backoff_delay(attempt: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: half the step fixed, half random, capped."""
    step = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0**attempt)
    uniform = rng.uniform if rng is not None else random.uniform
    return step / 2 + uniform(0, step / 2)


async def call_with_retries(
    backend: Backend, request: CallRequest, *, retries: int, timeout: float, limit_s: float | None = None
) -> CallResult:
    """One judge call with our retry policy, all inside `timeout` seconds.

    `limit_s` is the configured --judge-timeout, named in messages (`timeout` may be what is left of it).
    """
    limit_s = timeout if limit_s is None else limit_s
    started = time.monotonic()
    deadline = started + timeout
    attempt = 0
    while True:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError()
            # LiteLLM gets the configured timeout, which stays the same from call to call: its client
            # cache is keyed on it, and a per-call value built a new client, aiohttp session and TCP
            # connection for every call (and leaked them). The remaining deadline is ours to enforce.
            result = await asyncio.wait_for(backend.attempt(request, limit_s), remaining)
        except asyncio.CancelledError:
            raise
        except BackendError as exc:
            failure = exc
        except Exception as exc:  # noqa: BLE001 - classified below: nothing escapes unexplained
            if isinstance(exc, TimeoutError) and time.monotonic() >= deadline - 1e-3:
                raise BackendError(
                    f"no reply from {request.model} within --judge-timeout={limit_s:g}s "
                    f"({attempt + 1} attempt{'s' if attempt else ''}); raise --judge-timeout or check the server",
                    retryable=True,
                ) from None
            failure = backend.classify(exc, request)
        else:
            return CallResult(
                text=result.text,
                logprobs=result.logprobs,
                finish_reason=result.finish_reason,
                cost_usd=result.cost_usd,
                latency_s=time.monotonic() - started,
                attempts=attempt + 1,
            )
        if not failure.retryable or attempt >= retries:
            if failure.retryable:
                failure.args = (f"{failure.args[0]} (gave up after {attempt + 1} attempts; --judge-retries={retries})",)
            raise failure
        wait = failure.retry_after if failure.retry_after is not None else backoff_delay(attempt)
        if time.monotonic() + wait >= deadline:
            raise BackendError(
                f"{failure.args[0]}; the next retry (in {wait:.1f}s) would pass --judge-timeout={limit_s:g}s",
                retryable=True,
                status=failure.status,
            )
        await asyncio.sleep(wait)
        attempt += 1
