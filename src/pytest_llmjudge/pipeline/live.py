"""Live calls, on the runtime's background loop: the missing calls sent concurrently, under the budget
and one lock per key, with retries; a judge's reply that holds no verdict is asked for again, and a
generation's reply is kept as it came.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from ..backends.litellm import LiteLLMBackend
from ..backends.litellm_import import import_litellm
from ..backends.protocol import CallRequest, CallResult, UnsupportedParamError
from ..backends.retry import call_with_retries
from ..errors import BackendError, VerdictParseError
from ..redact import redact
from ..rubrics.base import Reply
from .finish import parse
from .generations import failed
from .lookup import Answer, reply_extra
from .plan import Call, Plan
from .reask import combined, reask_request
from .structured import format_used

if TYPE_CHECKING:
    from ..runtime import JudgeRuntime
    from ..store.cache import LocalCache
    from .generations import Generation, GenerationPlan
    from .plan import Planned


async def call_live(
    plan: Planned[Any], runtime: JudgeRuntime, missing: Sequence[Call | Generation]
) -> dict[str, Answer]:
    """Make the missing calls concurrently; the first error is raised once all have finished."""
    if isinstance(plan.backend, LiteLLMBackend) and "litellm" not in sys.modules:
        import_litellm()  # the process's one import of LiteLLM (seconds): no judgment's time, nor its timeout
    began = time.time()
    try:
        results = await asyncio.gather(*(_call_one(plan, runtime, call) for call in missing), return_exceptions=True)
    finally:
        plan.live_spans.append((began, time.time()))
    answers: dict[str, Answer] = {}
    for call, result in zip(missing, results, strict=False):
        if isinstance(result, BaseException):
            raise result
        answers[call.key] = result
    return answers


async def _call_one(plan: Planned[Any], runtime: JudgeRuntime, call: Call | Generation) -> Answer:
    settings = plan.settings
    cache: LocalCache | None = runtime.cache if settings.mode in ("auto", "refresh") else None
    async with runtime.key_lock(call.key), runtime.semaphore():
        # Another process judging the same key is waited for as long as one judgment may take.
        waited = time.monotonic() + settings.timeout
        handle = await asyncio.to_thread(cache.acquire, call.key, waited) if cache is not None else None
        try:
            if settings.mode == "auto" and cache is not None:
                value = await asyncio.to_thread(cache.get, call.key)
                if value is not None:  # another worker paid for it while we waited
                    plan.cached_calls[0] += 1
                    return Answer(Reply(value["reply"], value.get("logprobs")), "cached", extra=reply_extra(value))
            runtime.budget.check()
            # --judge-timeout counts the judge's calls only: from their first request on (not the wait for a
            # slot, lookup or copying), less what the judgment's earlier steps took.
            deadline = time.monotonic() + settings.timeout - plan.live_s()
            result = await _send(plan, runtime, call, deadline)
            plan.live_calls[0] += 1  # paid for, whether or not its reply parses
            note_request(plan, runtime, call, result)
            earlier: list[str] = []
            if isinstance(plan, Plan) and isinstance(call, Call):
                result = runtime.budget.count(result, call.request.model)  # priced, counted against the budgets
                plan.paid.append(result)  # reported even if its reply never parses
                result, earlier = await _until_parsed(plan, runtime, call, result, deadline)
            else:  # the model under test's cost counts; the judge's price (--judge-price) is not its price
                runtime.budget.spend(result.cost_usd)
            reply = Reply(result.text, result.logprobs)
            extra = reply_extra(
                {"structured": format_used(call.request.params, result.sent), "retried_from": earlier or None}
            )
            if cache is not None:
                value = {
                    "reply": result.text,
                    "logprobs": result.logprobs,
                    "model": call.model_id,
                    "cost_usd": result.cost_usd,
                    **extra,
                }
                await asyncio.to_thread(cache.set, call.key, {k: v for k, v in value.items() if v is not None})
            return Answer(reply, "live", result=result, extra=extra)
        finally:
            if cache is not None and handle is not None:
                cache.release(handle)


async def _until_parsed(
    plan: Plan, runtime: JudgeRuntime, call: Call, result: CallResult, deadline: float
) -> tuple[CallResult, list[str]]:
    """The live result whose reply parses, asking again in the same conversation up to
    --judge-parse-retries times (see `reask`); with the earlier replies.  A reply cut off at
    max_tokens is not asked again (the same cap would cut it again); an unparseable reply is never stored."""
    earlier: list[str] = []
    request = call.request
    while True:
        if result.finish_reason == "length":
            raise VerdictParseError(
                f"the judge's reply was cut off at max_tokens (finish_reason=length), key {call.key[:12]}; "
                "allow the judge more tokens. Nothing was stored.",
                result.text,
                key=call.key,
                cut_off=True,
            )
        try:
            parse(plan.rubric, call, Reply(result.text, result.logprobs))
        except VerdictParseError:
            if len(earlier) >= plan.settings.parse_retries:
                raise
        else:
            return result, earlier
        earlier.append(result.text)
        request = reask_request(request, result.text)
        runtime.budget.check()
        again = await _with_retries(plan, runtime, request, deadline)
        plan.live_calls[0] += 1
        again = runtime.budget.count(again, request.model)  # a re-ask is paid and counted like any call
        plan.paid.append(again)
        result = combined(result, again)


async def _send(plan: Planned[Any], runtime: JudgeRuntime, call: Call | Generation, deadline: float) -> CallResult:
    """One call, with retries; a judge that refuses the log-probabilities a rubric asked for is asked
    again without them (the rubric then scores plainly), with a warning; one that refuses the default
    reply cap is asked again without it.  A generation's failure is said of the model under test."""
    request = call.request
    try:
        return await _with_retries(plan, runtime, request, deadline)
    except BackendError as exc:
        from ..rubrics.likert import LogprobsFallbackWarning, without_logprobs  # on a refusal only

        if not isinstance(plan, Plan):  # a plan of generations
            raise failed(exc, call.model_id, cast("GenerationPlan", plan).target) from None
        if not isinstance(exc, UnsupportedParamError):
            raise
        if exc.unsupported_param in _CAPS and request.max_tokens is not None and plan.settings.max_tokens is None:
            # The default cap is the plugin's choice, not the user's: a model that refuses it (an OpenAI
            # reasoning model under a name LiteLLM does not know wants max_completion_tokens) judges without.
            return await _with_retries(plan, runtime, dataclasses.replace(request, max_tokens=None), deadline)
        plain = without_logprobs(request, exc)
        if plain is None:
            raise
        warnings.warn(
            LogprobsFallbackWarning(
                f"llmjudge: {request.model} takes no log-probabilities ({exc.unsupported_param} refused): "
                f"{plan.rubric.name} judgments asking for them are scored plainly (details['scoring'] == 'plain')"
            ),
            stacklevel=1,
        )
    return await _with_retries(plan, runtime, plain, deadline)


_CAPS = ("max_tokens", "max_completion_tokens")


async def _with_retries(plan: Planned[Any], runtime: JudgeRuntime, request: CallRequest, deadline: float) -> CallResult:
    """One request under the run's retry policy, what is left of the deadline, and the rate limiter.

    Its reply is redacted as it arrives, as it will be stored: what is read from it (a verdict's reasoning,
    a claim the next step rules on, a generation, a simulated user's turn) is what a replay reads."""
    result = await call_with_retries(
        plan.backend,
        request,
        retries=plan.settings.retries,
        timeout=deadline - time.monotonic(),
        limit_s=plan.settings.timeout,
        limiter=runtime.limiter(request.model, request.api_base),
        spent_s=plan.live_s(),
    )
    return dataclasses.replace(result, text=redact(result.text))


def note_request(plan: Planned[Any], runtime: JudgeRuntime, call: Call | Generation, result: CallResult) -> None:
    """Keep what a live call sent for the verdict record; say once per run what a model was not sent."""
    if result.sent is None or call.model_id in plan.requests:
        return
    dropped = dict(result.dropped or {})
    plan.requests[call.model_id] = (dict(result.sent), dropped)
    for name, why in dropped.items():
        runtime.note(f"llmjudge: {name} not sent: {why}")
