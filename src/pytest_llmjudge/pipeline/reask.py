"""Asking again for the required format: the follow-up call on a live reply that holds no verdict.

A small judge at temperature 0 gives the same unreadable reply on every rerun, so asking the same
question again is no help; answering in the same conversation is.  The follow-up is the original
messages, the judge's reply as the assistant's turn, then one short user message that asks only
for the format (`--judge-parse-retries`, default 1).  Both calls are paid for and counted; the
stored entry keeps the final reply and, under `retried_from`, the earlier ones.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

from ..backends.protocol import CallRequest, CallResult

__all__ = ["REASK_MESSAGE", "combined", "reask_request"]

REASK_MESSAGE = (
    "Your reply does not give the verdict in the required format. Reply again with only the JSON "
    "object the instructions ask for, and nothing else."
)


def reask_request(request: CallRequest, reply: str) -> CallRequest:
    """`request` continued: the judge's `reply` as the assistant's turn, then the request for the format."""
    messages = [
        *(dict(m) for m in request.messages),
        {"role": "assistant", "content": reply},
        {"role": "user", "content": REASK_MESSAGE},
    ]
    return dataclasses.replace(request, messages=messages)


N = TypeVar("N", int, float)


def _total(first: N | None, second: N | None) -> N | None:
    return None if first is None and second is None else (first or 0) + (second or 0)


def combined(first: CallResult, second: CallResult) -> CallResult:
    """`second`, with the cost, tokens, latency and attempts of both calls: what the judgment paid."""
    return dataclasses.replace(
        second,
        cost_usd=_total(first.cost_usd, second.cost_usd),
        prompt_tokens=_total(first.prompt_tokens, second.prompt_tokens),
        completion_tokens=_total(first.completion_tokens, second.completion_tokens),
        latency_s=first.latency_s + second.latency_s,
        attempts=first.attempts + second.attempts,
    )
