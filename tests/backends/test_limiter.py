"""The adaptive concurrency limiter (AIMD, Retry-After pauses), on a fake clock; wired into the retries and
into the plugin's judgments."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json

import pytest

from helpers import MODEL
from helpers.openai_server import Reply
from helpers.rate_limit import SlidingWindow
from pytest_llmjudge.backends.limiter import AdaptiveLimiter
from pytest_llmjudge.backends.litellm import LiteLLMBackend
from pytest_llmjudge.backends.protocol import CallRequest
from pytest_llmjudge.backends.retry import call_with_retries
from pytest_llmjudge.errors import BackendError
from pytest_llmjudge.store.pace import SharedPace


class FakeClock:
    """Time moves only when the test says: `sleep` waits until `advance` passes its wake time."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._order), future))
        await future

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        while self._sleepers and self._sleepers[0][0] <= self.now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
        for _ in range(5):  # let the woken tasks run
            await asyncio.sleep(0)


def make(max_concurrency: int = 8) -> tuple[AdaptiveLimiter, FakeClock]:
    clock = FakeClock()
    return AdaptiveLimiter(max_concurrency, clock=clock, sleep=clock.sleep), clock


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@pytest.mark.asyncio
async def test_multiplicative_decrease_once_per_burst_down_to_one():
    limiter, _ = make(8)
    burst = [await limiter.acquire() for _ in range(5)]  # five calls granted before the first 429 came back
    for slot in burst:
        limiter.release(slot, rate_limited=True)
    assert limiter.limit == 4 and limiter.decreases == 1 and limiter.rate_limited == 5
    for _ in range(9):  # each call granted after the last decrease
        limiter.release(await limiter.acquire(), rate_limited=True)
    assert limiter.limit == 1 and limiter.allowed == 1, "floor 1: never stops calling"


def test_additive_increase_up_to_the_maximum():
    limiter, _ = make(4)
    limiter.limit = 1.0
    limiter.on_success()
    assert limiter.limit == 2.0
    limiter.on_success()
    assert limiter.limit == 2.5
    for _ in range(100):
        limiter.on_success()
    assert limiter.limit == 4.0


def test_bad_maximum_is_refused():
    with pytest.raises(ValueError):
        AdaptiveLimiter(0)


@pytest.mark.asyncio
async def test_at_most_allowed_calls_in_flight():
    limiter, _ = make(2)
    first, second = await limiter.acquire(), await limiter.acquire()
    third = asyncio.ensure_future(limiter.acquire())
    await settle()
    assert not third.done() and limiter.in_flight == 2
    limiter.release(first, succeeded=True)
    await settle()
    assert third.done() and limiter.in_flight == 2
    limiter.release(second)
    limiter.release(third.result())
    assert limiter.in_flight == 0


@pytest.mark.asyncio
async def test_a_decrease_holds_new_calls_until_enough_have_finished():
    limiter, _ = make(4)
    slots = [await limiter.acquire() for _ in range(4)]
    limiter.release(slots.pop(), rate_limited=True)  # limit 4 -> 2, three still in flight
    waiting = asyncio.ensure_future(limiter.acquire())
    await settle()
    assert limiter.allowed == 2 and not waiting.done()
    limiter.release(slots.pop())  # 2 in flight: still full
    await settle()
    assert not waiting.done()
    limiter.release(slots.pop())  # 1 in flight: room
    await settle()
    assert waiting.done()


@pytest.mark.asyncio
async def test_retry_after_pauses_every_caller():
    limiter, clock = make(8)
    slot = await limiter.acquire()
    limiter.release(slot, rate_limited=True, retry_after=5.0)
    callers = [asyncio.ensure_future(limiter.acquire()) for _ in range(3)]
    await clock.advance(4.9)
    assert not any(c.done() for c in callers), "nothing goes before the server's Retry-After"
    await clock.advance(0.2)
    assert all(c.done() for c in callers)
    assert limiter.in_flight == 3


@pytest.mark.asyncio
async def test_a_pause_is_capped():
    limiter, clock = make(2)
    limiter.max_pause_s = 10.0
    limiter.release(await limiter.acquire(), rate_limited=True, retry_after=3600)
    assert limiter.pause_left() == 10.0
    waiting = asyncio.ensure_future(limiter.acquire())
    await clock.advance(10.0)
    assert waiting.done()


@pytest.mark.asyncio
async def test_a_cancelled_waiter_leaks_no_slot():
    limiter, _ = make(1)
    slot = await limiter.acquire()
    waiting = asyncio.ensure_future(limiter.acquire())
    later = asyncio.ensure_future(limiter.acquire())
    await settle()
    waiting.cancel()
    await settle()
    limiter.release(slot)
    await settle()
    assert later.done() and limiter.in_flight == 1


@pytest.mark.asyncio
async def test_the_limit_is_held_for_a_window_past_the_pause_and_each_429_renews_it():
    limiter, clock = make(8)
    limiter.release(await limiter.acquire(), rate_limited=True, retry_after=0.5)  # pause to 0.5, hold to 1.5
    clock.now = 1.4
    limiter.on_success()
    assert limiter.limit == 4
    limiter.release(await limiter.acquire(), rate_limited=True)  # no hint: the hold is hold_s (1 s) from now
    assert limiter.limit == 2 and limiter.hold_until == pytest.approx(2.4)
    clock.now = 2.4
    limiter.on_success()
    assert limiter.limit == 2.5
    limiter.release(await limiter.acquire(), rate_limited=True, retry_after=60)
    assert limiter.hold_until == pytest.approx(2.4 + 60 + 10), "pause, then at most max_hold_s"


@pytest.mark.asyncio
async def test_concurrent_callers_keep_to_the_limit():
    limiter, _ = make(3)
    peak = 0

    async def worker() -> None:
        nonlocal peak
        slot = await limiter.acquire()
        peak = max(peak, limiter.in_flight)
        await asyncio.sleep(0)
        limiter.release(slot, succeeded=True)

    await asyncio.gather(*(worker() for _ in range(30)))
    assert peak == 3 and limiter.in_flight == 0


@pytest.mark.asyncio
async def test_a_call_retrying_after_a_rate_limit_goes_first():
    limiter, _ = make(1)
    held = await limiter.acquire()
    fresh = asyncio.ensure_future(limiter.acquire())
    await settle()
    retrying = asyncio.ensure_future(limiter.acquire(first=True))
    await settle()
    limiter.release(held)
    await settle()
    assert retrying.done() and not fresh.done(), "the refused call goes ahead of the fresh one"
    limiter.release(retrying.result())
    await settle()
    assert fresh.done()


# -- wired into call_with_retries, against the local server ---------------------------------------------


def test_call_with_retries_reports_to_the_limiter(loop, openai_server):
    # A hold longer than the test can take: the success below lands inside it however slow the
    # machine (with the default 1 s hold, a cold LiteLLM import plus a 500's backoff outlasted it).
    limiter = AdaptiveLimiter(8, hold_s=60.0, max_hold_s=60.0)
    openai_server.enqueue(Reply(status=429, retry_after=0), Reply(status=500))
    request = CallRequest(
        model=MODEL, messages=[{"role": "user", "content": "SCORE=0.9"}], api_base=openai_server.base_url
    )
    result = loop.run(call_with_retries(LiteLLMBackend(), request, retries=3, timeout=10, limiter=limiter))
    assert result.attempts == 3
    assert limiter.rate_limited == 1 and limiter.decreases == 1, "the 500 says nothing about the rate"
    assert limiter.limit == 4, "halved by the 429; the success came within the hold"
    assert limiter.in_flight == 0


def test_waiting_for_the_limiter_counts_against_the_deadline(loop, openai_server):
    limiter = AdaptiveLimiter(1)
    limiter.release(loop.run(limiter.acquire()), rate_limited=True, retry_after=60)
    request = CallRequest(
        model=MODEL, messages=[{"role": "user", "content": "SCORE=0.9"}], api_base=openai_server.base_url
    )
    with pytest.raises(BackendError, match="--judge-timeout=1s") as raised:
        loop.run(call_with_retries(LiteLLMBackend(), request, retries=3, timeout=1, limiter=limiter))
    assert openai_server.request_count == 0 and limiter.in_flight == 0
    # It says why it did not wait: the rate limit, and the wait the server asked for.
    assert "rate limit" in str(raised.value) and "60.0s" in str(raised.value)
    assert raised.value.status == 429


@pytest.mark.asyncio
async def test_callers_queued_behind_a_pause_all_get_through():
    limiter, clock = make(2)
    first, second = await limiter.acquire(), await limiter.acquire()
    queued = [asyncio.ensure_future(limiter.acquire()) for _ in range(4)]
    await settle()
    limiter.release(first, rate_limited=True, retry_after=1.0)  # limit 1, pause 1 s
    limiter.release(second)
    await settle()
    assert limiter.in_flight == 0 and not any(q.done() for q in queued)
    await clock.advance(1.0)
    for _ in range(4):
        done = [q for q in queued if q.done()]
        assert len(done) == 1 and limiter.in_flight == 1, "one at a time: the limit is 1"
        queued.remove(done[0])
        limiter.release(done[0].result())
        await settle()
    assert limiter.in_flight == 0


# -- wired into the plugin's judgments -------------------------------------------------------------------

MANY = """
def test_many(judge):
    verdicts = judge.score_many([(f"Answer {i}", "Is an answer") for i in range(40)])
    assert len(verdicts) == 40 and all(v.score == 0.9 for v in verdicts)
"""


def test_judgments_beyond_the_rate_limit_slow_down_and_all_succeed(pytester, openai_server, live_args):
    # 40 judgments at once (concurrency 8) against a judge that allows 5 requests a second; each
    # call may retry 3 times. Without a limit shared by all calls, the retries collide with fresh
    # calls and some judgments run out of retries.
    window = SlidingWindow(5)
    openai_server.set_responder(window)
    pytester.makepyfile(test_many=MANY)
    result = pytester.runpytest(*live_args, "--judge-mode=live", "--judge-retries=3", "--judge-timeout=60")
    result.assert_outcomes(passed=1)
    assert window.limited > 0, "the server's limit was reached: the test tests something"


# -- shared by the xdist workers of a run ----------------------------------------------------------------


def _worker_paces(tmp_path, clock: FakeClock, workers: int = 2) -> list[SharedPace]:
    """The pace each of `workers` xdist workers of one run would see, for one judge."""
    environ = {"PYTEST_XDIST_TESTRUNUID": "run1", "PYTEST_XDIST_WORKER": "gw0"}
    paces = [SharedPace.for_run(tmp_path / "cache", MODEL, "http://judge/v1", environ) for _ in range(workers)]
    assert all(p is not None for p in paces)
    for pace in paces:
        pace._clock = clock
    return paces  # type: ignore[return-value]


def test_outside_xdist_nothing_is_shared(tmp_path):
    assert SharedPace.for_run(tmp_path, MODEL, None, {}) is None


def test_a_refusal_in_one_worker_pauses_the_others_and_sets_a_pace_for_all(tmp_path):
    clock = FakeClock()
    first, second = _worker_paces(tmp_path, clock)
    assert second.wait() == 0.0, "nothing learned yet: no wait"
    for _ in range(10):  # ten calls accepted within the last second, then one refused
        first.accepted()
        clock.now += 0.05
    first.refused(0.4)
    waits = [second.wait(), first.wait(), second.wait()]
    assert waits[0] == pytest.approx(0.4), "the other worker waits out the pause the refusal asked for"
    gap = 1.05 / 10
    assert waits[1] == pytest.approx(0.4 + gap) and waits[2] == pytest.approx(0.4 + 2 * gap), "one call per moment"
    clock.now += 5.0
    assert second.wait() == 0.0 and first.wait() == pytest.approx(gap), "the pace holds after the pause"


def test_still_refused_at_the_pace_slows_it_down_once_per_window(tmp_path):
    clock = FakeClock()
    (pace,) = _worker_paces(tmp_path, clock, workers=1)
    pace.accepted()
    pace.refused(None)
    state = json.loads(pace.path.read_text())[pace.route]
    pace.refused(None)  # refused in the same window: sent before the pace was known
    assert json.loads(pace.path.read_text())[pace.route]["gap"] == state["gap"]
    clock.now += 2.0
    pace.refused(None)
    assert json.loads(pace.path.read_text())[pace.route]["gap"] > state["gap"]


@pytest.mark.asyncio
async def test_a_limiter_with_a_pace_waits_for_its_moment_and_reports_back(tmp_path):
    clock = FakeClock()
    first, second = _worker_paces(tmp_path, clock)
    limiter = AdaptiveLimiter(4, clock=clock, sleep=clock.sleep, pace=second)
    first.accepted()
    first.refused(2.0)  # another worker was asked to wait 2 s
    task = asyncio.ensure_future(limiter.acquire())
    await settle()
    assert not task.done(), "held by the other worker's pause"
    await clock.advance(2.0)
    slot = task.result()
    limiter.release(slot, succeeded=True)
    assert len(json.loads(second.path.read_text())[second.route]["ok"]) == 2, "its success is shared"


@pytest.mark.asyncio
async def test_a_call_cancelled_while_it_waits_for_the_pace_gives_its_slot_back(tmp_path):
    clock = FakeClock()
    (pace,) = _worker_paces(tmp_path, clock, workers=1)
    limiter = AdaptiveLimiter(1, clock=clock, sleep=clock.sleep, pace=pace)
    pace.refused(5.0)
    task = asyncio.ensure_future(limiter.acquire())
    await settle()
    task.cancel()
    await settle()
    assert limiter.in_flight == 0
