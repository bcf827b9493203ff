"""What a judge backend is: the `Backend` contract and the request and result of one call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import BackendError


@dataclass(frozen=True)
class CallRequest:
    """One judge call, as configured (what is actually sent: `plan_request`)."""

    model: str
    messages: Sequence[Mapping[str, str]]
    api_base: str | None = None
    temperature: float | None = 0.0  # None: send none (the model's default)
    params: Mapping[str, Any] | None = None  # extra call parameters a rubric asks for (logprobs, ...)
    max_tokens: int | None = None  # a cap on the reply; None: the provider's default
    reasoning_effort: str | None = None  # for reasoning models ("low", "medium", "high"); dropped elsewhere
    extra_params: Mapping[str, Any] | None = None  # the user's own parameters (seed, penalties, provider extras)
    instructions_in_user: bool = False  # merge system messages into the first user message

    def prompt_chars(self) -> int:
        """The prompt's length in characters, for "too long" messages."""
        return sum(len(m.get("content") or "") for m in self.messages)


@dataclass(frozen=True)
class CallResult:
    """What one call returned.

    A backend's `attempt` fills in the reply; `call_with_retries` stamps `latency_s` and `attempts`
    over all the attempts it made.
    """

    text: str
    logprobs: Any = None  # the OpenAI chat `choice.logprobs` as plain data, where asked for
    finish_reason: str | None = None
    cost_usd: float | None = None  # None where the price is unknown
    latency_s: float = 0.0
    attempts: int = 1
    prompt_tokens: int | None = None  # as the server counted them; None where it gave no usage
    completion_tokens: int | None = None
    sent: Mapping[str, Any] | None = None  # the call parameters actually sent (see `plan_request`)
    dropped: Mapping[str, str] | None = None  # configured parameters not sent, and why


class UnsupportedParamError(BackendError):
    """The judge model does not take a parameter the call asks for (logprobs on Anthropic, ...).

    Raised before anything is sent where LiteLLM knows it, or on the server's own refusal.  Never
    retried; a rubric may catch it and fall back (logprobs scoring -> plain scoring).
    """

    def __init__(self, message: str, *, unsupported_param: str, status: int | None = None) -> None:
        super().__init__(message, retryable=False, status=status)
        self.unsupported_param = unsupported_param


@runtime_checkable
class Backend(Protocol):
    """A judge backend: makes one attempt at a call, and says whether a failure is worth retrying.

    Retries, backoff and the deadline are `call_with_retries`'s job, not the backend's.  A backend
    may also carry a `name` (a str, or None): the judge's id in every verdict key in place of the
    model.  It is optional, so it is read with `getattr` and not declared here (a runtime check
    would then refuse backends without it).
    """

    async def attempt(self, request: CallRequest, timeout: float) -> CallResult:
        """Send `request` once; `timeout` is the configured per-judgment timeout, in seconds."""
        ...

    def classify(self, exc: BaseException, request: CallRequest) -> BackendError:
        """Turn what `attempt` raised into a `BackendError` saying whether to retry and what to do."""
        ...
