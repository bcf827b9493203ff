"""The retry policy: what is worth retrying, how long to wait, and one deadline over all attempts.

Retries are ours, not LiteLLM's: its own `num_retries` also retries 400/401/404 with no backoff,
and the OpenAI SDK under it retries twice on its own.  Both are switched off, and `call_with_retries`
retries only what a backend classifies as retryable (429, 5xx, timeouts, dropped connections), with
exponential backoff and jitter, honouring Retry-After, all inside one deadline per judgment.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import email.utils
import random
import re
import time
from collections.abc import Coroutine
from typing import Any

from ..errors import BackendError, VerdictParseError, first_line
from ..redact import redact
from .limiter import AdaptiveLimiter, Slot
from .protocol import Backend, CallRequest, CallResult

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def error_detail(exc: BaseException) -> str:
    """The first line of an error's message, redacted and bounded, for our own messages."""
    return redact(first_line(exc, default=""))[:300]


# Where a server says how long to wait, most precise first.  LiteLLM prefixes the provider's own
# headers with `llm_provider-` (a LiteLLM Proxy sends only those); OpenAI's `x-ratelimit-reset-*`
# are durations such as "1s", "6m0s", "20ms".
_WAIT_HEADERS = ("retry-after-ms", "retry-after", "llm_provider-retry-after-ms", "llm_provider-retry-after")
_RESET_HEADERS = ("requests", "tokens")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
# Gemini: google.rpc.RetryInfo in the 429 body (LiteLLM quotes the body in its message).
_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')


def parse_duration(text: str) -> float | None:
    """Seconds in a Go-style duration ("1s", "6m0s", "20ms", "1h2m3.5s") or a plain number of seconds."""
    text = text.strip().lower()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def _seconds(value: str, *, ms: bool = False) -> float | None:
    """A Retry-After value: seconds (or milliseconds), or an HTTP date."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return max(0.0, number / 1000.0 if ms else number)


def _header_maps(exc: BaseException) -> list[dict[str, str]]:
    maps = []
    for headers in (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(exc, "headers", None),
    ):
        if not headers:
            continue
        try:
            maps.append({str(k).lower(): str(v) for k, v in headers.items()})
        except (AttributeError, TypeError):
            continue
    return maps


def retry_after_from_headers(headers: dict[str, str]) -> float | None:
    """Seconds to wait from one response's headers (lower-case names), where they say."""
    for name in _WAIT_HEADERS:
        value = headers.get(name)
        if value is not None:
            wait = _seconds(value, ms=name.endswith("-ms"))
            if wait is not None:
                return wait
    resets: list[float] = []
    exhausted: list[float] = []
    for prefix in ("", "llm_provider-"):
        for what in _RESET_HEADERS:
            value = headers.get(f"{prefix}x-ratelimit-reset-{what}")
            wait = parse_duration(value) if value is not None else None
            if wait is None:
                continue
            resets.append(wait)
            if (headers.get(f"{prefix}x-ratelimit-remaining-{what}") or "").strip() == "0":
                exhausted.append(wait)
    if exhausted:  # the limit that was hit decides
        return max(exhausted)
    return max(resets) if resets else None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait before retrying, in any form it said it; None where it did not."""
    for headers in _header_maps(exc):
        wait = retry_after_from_headers(headers)
        if wait is not None:
            return wait
    match = _RETRY_DELAY.search(str(exc))
    if match:
        return float(match.group(1))
    return None


def backoff_delay(attempt: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: half the step fixed, half random, capped."""
    step = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0**attempt)
    uniform = rng.uniform if rng is not None else random.uniform
    return step / 2 + uniform(0, step / 2)


async def call_with_retries(
    backend: Backend,
    request: CallRequest,
    *,
    retries: int,
    timeout: float,
    limit_s: float | None = None,
    limiter: AdaptiveLimiter | None = None,
    spent_s: float = 0.0,
) -> CallResult:
    """One judge call with our retry policy, all inside `timeout` seconds.

    `limit_s` is the configured --judge-timeout, named in messages (`timeout` is what is left of it once
    the judgment's earlier steps took `spent_s` of it).  `limiter`, where given, is the process's adaptive
    concurrency limit: every attempt holds one of its slots, a rate-limited attempt lowers it (and
    pauses every caller for the server's Retry-After), a successful one raises it again.
    """
    limit_s = timeout if limit_s is None else limit_s
    started = time.monotonic()
    deadline = started + timeout
    attempt = 0
    spent = _Spent(spent_s)  # where the time went, for the message of a call that runs out of it
    rate_limited = False  # the last attempt was refused for the rate: the next goes first in the limiter
    while True:
        remaining = deadline - time.monotonic()
        if limiter is not None and remaining > 0:  # raised as it is: it already says why no retry can follow
            _refuse_a_pause_past_the_deadline(limiter, request, remaining, limit_s)
        slot: Slot | None = None
        try:
            if remaining <= 0:
                raise TimeoutError()
            if limiter is not None:
                waiting = time.monotonic()
                try:
                    slot = await asyncio.wait_for(limiter.acquire(first=rate_limited), remaining)
                finally:
                    spent.limiter += time.monotonic() - waiting
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError()
            spent.attempts += 1
            # LiteLLM gets the configured timeout, which stays the same from call to call: its client
            # cache is keyed on it, and a per-call value built a new client, aiohttp session and TCP
            # connection for every call (and leaked them). The remaining deadline is ours to enforce.
            sent = time.monotonic()
            try:
                result = await _within(backend.attempt(request, limit_s), remaining)
            finally:
                spent.replies += time.monotonic() - sent
        except asyncio.CancelledError:
            _release(limiter, slot)
            raise
        except (BackendError, VerdictParseError) as exc:
            _release(limiter, slot, exc)
            if isinstance(exc, VerdictParseError):
                raise  # a reply that holds no verdict (a safety block): not the judge being unreachable
            failure = exc
        except Exception as exc:  # noqa: BLE001 - classified below: nothing escapes unexplained
            if isinstance(exc, TimeoutError) and time.monotonic() >= deadline - 1e-3:
                _release(limiter, slot)
                raise BackendError(
                    f"no reply from {request.model} within --judge-timeout={limit_s:g}s ({spent.said()}); "
                    "raise --judge-timeout or check the server",
                    retryable=True,
                ) from None
            failure = backend.classify(exc, request)
            _release(limiter, slot, failure)
        else:
            _release(limiter, slot, succeeded=True)
            return dataclasses.replace(result, latency_s=time.monotonic() - started, attempts=attempt + 1)
        rate_limited = _rate_limited(failure)
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
                retry_after=failure.retry_after,
            )
        await asyncio.sleep(wait)
        spent.backoff += wait
        attempt += 1


async def _within(attempt: Coroutine[Any, Any, CallResult], seconds: float) -> CallResult:
    """The attempt's result, or TimeoutError after `seconds`; an attempt still running then is left to end
    by itself (the backend was given the configured timeout), not cancelled: LiteLLM prepares a request in
    a worker thread, and a cancel there orphans the coroutine the thread returns ("never awaited")."""
    task = asyncio.ensure_future(attempt)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:  # the caller is cancelled (a test interrupted): so is the attempt
        task.cancel()
        raise
    if not done:
        task.add_done_callback(_forget)
        raise TimeoutError()
    return task.result()


def _forget(task: asyncio.Future[CallResult]) -> None:
    """An abandoned attempt's outcome, read so that asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()


class _Spent:
    """Where a call's time went: its requests, the rate limiter's queue, the back-off between attempts,
    and (before it began) the judgment's earlier steps.  A timeout's message says so: it is the judge's
    slowness only where the requests took the time."""

    __slots__ = ("attempts", "backoff", "before", "limiter", "replies")

    def __init__(self, before: float) -> None:
        self.before = before
        self.attempts = 0
        self.replies = self.limiter = self.backoff = 0.0

    def said(self) -> str:
        if not self.attempts:
            parts = ["no request was sent"]
        else:
            plural = "s" if self.attempts > 1 else ""
            parts = [f"{self.attempts} request{plural} to the judge took {self.replies:.1f}s"]
        if self.limiter >= 0.05:
            parts.append(f"waiting for the rate limiter took {self.limiter:.1f}s")
        if self.backoff >= 0.05:
            parts.append(f"backing off between attempts {self.backoff:.1f}s")
        if self.before >= 0.05:
            parts.append(f"this judgment's earlier steps took {self.before:.1f}s of it")
        return ", ".join(parts)


def _refuse_a_pause_past_the_deadline(
    limiter: AdaptiveLimiter, request: CallRequest, remaining: float, limit_s: float
) -> None:
    """Fail at once, saying so, when the rate limit's pause outlasts the deadline: waiting it out in
    the limiter would end in a bare "no reply" that hides the cause."""
    pause = limiter.pause_left()
    if pause < remaining:
        return
    asked = limiter.last_retry_after
    raise BackendError(
        f"{request.model} is rate limited: the server asked to wait {asked if asked is not None else pause:.1f}s "
        f"(Retry-After on an earlier call); the pause ends in {pause:.1f}s, past --judge-timeout={limit_s:g}s. "
        "Raise --judge-timeout, or lower --judge-concurrency to stay under the provider's limit",
        retryable=True,
        status=429,
        retry_after=pause,
    )


def _release(
    limiter: AdaptiveLimiter | None, slot: Slot | None, failure: Exception | None = None, succeeded: bool = False
) -> None:
    """Give an attempt's slot back, saying whether it succeeded or was rate limited (and for how long)."""
    if limiter is not None and slot is not None:
        wait = getattr(failure, "retry_after", None)
        limiter.release(slot, succeeded=succeeded, rate_limited=_rate_limited(failure), retry_after=wait)


def _rate_limited(exc: BaseException | None) -> bool:
    return isinstance(exc, BackendError) and exc.status == 429
