"""An adaptive concurrency limit for one process's judge calls: rate limits are a speed limit.

AIMD, as TCP does it: a rate-limited call (HTTP 429) halves the number of calls allowed in flight
(never below 1), each successful call adds 1/limit to it (about one more slot per round of calls),
up to the configured maximum.  Calls already in flight when the limit was lowered do not lower it
again: one 429 burst is one decrease.  A Retry-After on the 429 pauses every caller until it has
passed, so the calls behind it are not sent into the same refusal.

One change from TCP: a provider's limit is counted over a window (requests per second or per
minute), far longer than a fast judge's round trip, so increasing per round trip would climb back
over the limit inside every window.  After a decrease the limit is held for one window past the
pause (the Retry-After, or `hold_s` where none was given, at most `max_hold_s`), and rises only
while no 429 has come for that long.

Under xdist, each worker has its own limiter; a `Pace` (store.pace.SharedPace) shares what they
learn: a refusal's pause holds every worker, and once a call was refused every call waits for its
moment in the pace that stays under the judge's limit.

All its state lives on one event loop (the background loop every live call runs on); it is not
thread-safe, and needs no lock there.  `acquire` a slot for one attempt and `release` it saying how the
attempt went (`call_with_retries` does).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

MIN_LIMIT = 1.0


class Pace(Protocol):
    """A judge's rate limit as other processes learned it too (see store.pace)."""

    def wait(self) -> float:
        """Seconds to wait before sending (a moment of the pace is taken)."""
        ...

    def accepted(self) -> None: ...

    def refused(self, retry_after: float | None) -> None: ...


@dataclass(frozen=True)
class Slot:
    """One call's place in the limit; `epoch` is the decrease count when it was granted."""

    epoch: int


class AdaptiveLimiter:
    """At most `limit` calls in flight; `limit` moves between 1 and `max_concurrency`."""

    def __init__(
        self,
        max_concurrency: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        max_pause_s: float = 120.0,
        hold_s: float = 1.0,
        max_hold_s: float = 10.0,
        pace: Pace | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.max_concurrency = max_concurrency
        self.pace = pace
        self.limit = float(max_concurrency)
        self.in_flight = 0
        self.paused_until = 0.0
        self.max_pause_s = max_pause_s
        self.hold_s = hold_s
        self.max_hold_s = max_hold_s
        self.hold_until = 0.0  # no increase before this (one rate-limit window past the last pause)
        self.last_retry_after: float | None = None  # the wait the server last asked for, for messages
        self._clock = clock
        self._sleep = sleep
        self._epoch = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        # Counters, for reports and benchmarks.
        self.rate_limited = 0
        self.decreases = 0

    @property
    def allowed(self) -> int:
        """How many calls may be in flight now."""
        return max(1, int(self.limit))

    def pause_left(self) -> float:
        return max(0.0, self.paused_until - self._clock())

    async def acquire(self, *, first: bool = False) -> Slot:
        """Wait for a free slot (and for any pause to pass); the caller must `release` it.

        `first`: go ahead of every waiting caller.  A call retrying after a rate limit asks for it, so
        the calls the server refused are the first to go when it has room again: a call that waited
        behind fresh ones could be refused again and again, until it ran out of retries.
        """
        while True:
            pause = self.pause_left()
            if pause > 0:
                await self._sleep(pause)
                continue
            if self.in_flight < self.allowed and (first or not self._waiters):
                self.in_flight += 1
                return await self._paced(Slot(self._epoch))
            waiter = asyncio.get_running_loop().create_future()
            if first:
                self._waiters.appendleft(waiter)
            else:
                self._waiters.append(waiter)
            self._wake()  # room now (a pause just ended, nobody in flight to release)? the queue's head goes
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif not waiter.cancelled():
                    self._wake()  # it was woken for a slot it will not take: pass the turn on
                raise
            # Woken: our turn. Take the slot unless a pause began meanwhile (then loop and wait it out).
            if self.pause_left() <= 0 and self.in_flight < self.allowed:
                self.in_flight += 1
                self._wake()  # more room? let the next one in too
                return await self._paced(Slot(self._epoch))
            # Not taken (a pause began, or the limit fell meanwhile): go round again.

    async def _paced(self, slot: Slot) -> Slot:
        """`slot`, once the shared pace lets its call go (the slot is held while it waits)."""
        if self.pace is not None:
            wait = self.pace.wait()
            if wait > 0:
                try:
                    await self._sleep(wait)
                except BaseException:
                    self.release(slot)
                    raise
        return slot

    def release(
        self, slot: Slot, *, succeeded: bool = False, rate_limited: bool = False, retry_after: float | None = None
    ) -> None:
        """Give the slot back, saying how the call went (neither: a failure that says nothing about load)."""
        self.in_flight = max(0, self.in_flight - 1)
        if rate_limited:
            self.on_rate_limit(slot, retry_after)
            if self.pace is not None:
                self.pace.refused(retry_after)
        elif succeeded:
            self.on_success()
            if self.pace is not None:
                self.pace.accepted()
        self._wake()

    def on_success(self) -> None:
        """Additive increase: about one more slot per round of successful calls, once the hold has passed."""
        if self._clock() < self.hold_until:
            return
        self.limit = min(float(self.max_concurrency), self.limit + 1.0 / self.limit)

    def on_rate_limit(self, slot: Slot, retry_after: float | None = None) -> None:
        """Multiplicative decrease, once per burst; a Retry-After pauses every caller."""
        self.rate_limited += 1
        if slot.epoch == self._epoch:
            self.limit = max(MIN_LIMIT, self.limit / 2.0)
            self._epoch += 1
            self.decreases += 1
        now = self._clock()
        if retry_after is not None and retry_after > 0:
            self.paused_until = max(self.paused_until, now + min(retry_after, self.max_pause_s))
            self.last_retry_after = retry_after
        window = min(self.max_hold_s, max(self.hold_s, retry_after or 0.0))
        self.hold_until = max(self.hold_until, max(now, self.paused_until) + window)

    def _wake(self) -> None:
        free = self.allowed - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1
