"""Judge backends: LiteLLM (imported only when a live call is about to happen) or a user callable.

Retries are ours, not LiteLLM's: its own `num_retries` also retries 400/401/404 with no backoff,
and the OpenAI SDK under it retries twice on its own.  Both are switched off, and `call_with_retries`
retries only what is worth retrying (429, 5xx, timeouts, dropped connections), with exponential
backoff and jitter, honouring Retry-After, all inside one deadline per judgment.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .errors import BackendError
from .redact import redact

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})

# The environment variable that holds each provider's key, for "check X" hints.
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "azure": "AZURE_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "cohere": "COHERE_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "bedrock": "AWS_ACCESS_KEY_ID",
}


@dataclass(frozen=True)
class CallRequest:
    """One judge call, as sent."""

    model: str
    messages: Sequence[Mapping[str, str]]
    api_base: str | None = None
    temperature: float = 0.0
    params: Mapping[str, Any] | None = None

    def prompt_chars(self) -> int:
        return sum(len(m.get("content") or "") for m in self.messages)


@dataclass(frozen=True)
class CallResult:
    """What one call returned."""

    text: str
    logprobs: Any = None
    finish_reason: str | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    attempts: int = 1


def provider_of(model: str) -> str:
    if "/" in model:
        return model.split("/", 1)[0]
    if model.startswith("claude"):
        return "anthropic"
    return "openai"


def key_variable(model: str) -> str:
    provider = provider_of(model)
    return KEY_VARIABLES.get(provider, f"{provider.upper()}_API_KEY")


def import_litellm() -> Any:
    """Import LiteLLM without its import-time network fetch, banners or tokenizer downloads."""
    # Unless set before the first import, litellm fetches a price list from the internet at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.disable_hf_tokenizer_download = True
    return litellm


class LiteLLMBackend:
    """Calls any provider LiteLLM supports; the key comes from the provider's usual variable."""

    name: str | None = None  # the configured model names the judge

    async def attempt(self, request: CallRequest, timeout: float) -> CallResult:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": request.temperature,
            "timeout": timeout,
            "num_retries": 0,  # litellm's retries: off (they also retry 4xx)
            "max_retries": 0,  # the OpenAI SDK's own retries: off
        }
        if request.api_base:
            kwargs["api_base"] = request.api_base
        kwargs.update(request.params or {})
        response = await litellm.acompletion(**kwargs)
        choice = response.choices[0]
        logprobs = getattr(choice, "logprobs", None)
        if logprobs is not None and hasattr(logprobs, "model_dump"):
            logprobs = logprobs.model_dump()
        return CallResult(
            text=choice.message.content or "",
            logprobs=logprobs,
            finish_reason=getattr(choice, "finish_reason", None),
            cost_usd=_cost_of(litellm, response),
        )

    def classify(self, exc: BaseException, request: CallRequest) -> BackendError:
        return classify_litellm_error(exc, request)


def _cost_of(litellm: Any, response: Any) -> float | None:
    """The call's cost in USD where LiteLLM knows the model's price; None where it does not."""
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if cost is None:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # noqa: BLE001 - unknown models raise a plain Exception
            return None
    try:
        return float(cost)
    except (TypeError, ValueError):
        return None


def _retry_after(exc: BaseException) -> float | None:
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


def classify_litellm_error(exc: BaseException, request: CallRequest) -> BackendError:
    """Turn a LiteLLM exception into a BackendError that says whether to retry and what to do."""
    litellm = import_litellm()
    where = f"{request.model}" + (f" at {request.api_base}" if request.api_base else "")
    detail = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else "")[:300]
    status = getattr(exc, "status_code", None)
    kind = exc.__class__.__name__

    def fatal(message: str) -> BackendError:
        return BackendError(redact(message), retryable=False, status=status)

    def retry() -> BackendError:
        error = BackendError(redact(f"{kind} from {where}: {detail}"), retryable=True, status=status)
        error.retry_after = _retry_after(exc)  # type: ignore[attr-defined]
        return error

    if isinstance(exc, litellm.ContextWindowExceededError):
        chars = request.prompt_chars()
        return fatal(
            f"the prompt is too long for {request.model}: {chars} characters (about {chars // 4} tokens). "
            "Judge a shorter output, or use a judge model with a longer context."
        )
    # Decide by HTTP status first: LiteLLM names the class after the error body's "type", so an
    # "invalid_request_error" body on a 500 or 503 arrives as a BadRequestError.
    if status == 403 or (status is None and isinstance(exc, litellm.PermissionDeniedError)):
        return fatal(
            f"{kind} from {where}: the key in {key_variable(request.model)} is not allowed to use model "
            f"{request.model!r} (as sent to LiteLLM). Use a key with access to it, or another --judge-model. {detail}"
        )
    if status == 401 or isinstance(exc, litellm.AuthenticationError) or (
        status is None and ("credentials" in detail.lower() or "api_key" in detail.lower())
    ):
        return fatal(
            f"{kind} from {where}: the judge refused the credentials. "
            f"Set {key_variable(request.model)} to a valid key (for a local server any value works). {detail}"
        )
    if status == 404 or isinstance(exc, litellm.NotFoundError):
        return fatal(
            f"{kind} from {where}: model {request.model!r} (as sent to LiteLLM) was not found. "
            f"Check --judge-model (and --judge-api-base). {detail}"
        )
    if isinstance(status, int) and status in RETRYABLE_STATUS:
        return retry()
    if isinstance(status, int) and 400 <= status < 500 or isinstance(exc, litellm.BadRequestError):
        return fatal(
            f"{kind} from {where}: the judge rejected the request (HTTP {status if status is not None else '4xx'}, "
            f"not retried; prompt {request.prompt_chars()} characters). Check --judge-model ({request.model!r} as sent "
            f"to LiteLLM) and the parameters your rubric sends. {detail}"
        )
    if "credentials" in detail.lower() or "api_key" in detail.lower():
        return fatal(
            f"{kind} from {where}: no usable credentials. "
            f"Set {key_variable(request.model)} (for a local server any value works). {detail}"
        )
    if isinstance(
        exc,
        (
            litellm.RateLimitError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.BadGatewayError,
            litellm.Timeout,
            litellm.APIConnectionError,
            TimeoutError,
            ConnectionError,
        ),
    ):
        return retry()
    return fatal(f"{kind} from {where}: {detail}")


class CallableBackend:
    """A user's `judge_backend`: any callable taking the chat messages and returning the reply text."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        self.fn = fn
        self.name = getattr(fn, "name", None) or name

    async def attempt(self, request: CallRequest, timeout: float) -> CallResult:
        messages = [dict(m) for m in request.messages]
        if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(getattr(self.fn, "__call__", None)):
            result = await self.fn(messages)
        else:
            result = await asyncio.get_running_loop().run_in_executor(None, self.fn, messages)
            if inspect.isawaitable(result):
                result = await result
        if not isinstance(result, str):
            raise BackendError(
                f"judge_backend {self.name or self.fn!r} returned {type(result).__name__}; it must return the reply text (str)"
            )
        return CallResult(text=result)

    def classify(self, exc: BaseException, request: CallRequest) -> BackendError:
        retryable = isinstance(exc, (TimeoutError, ConnectionError))
        detail = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else "")[:300]
        return BackendError(f"judge_backend raised {exc.__class__.__name__}: {detail}", retryable=retryable)


def backoff_delay(attempt: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: half the step fixed, half random, capped."""
    step = min(BACKOFF_CAP_S, BACKOFF_BASE_S * (2**attempt))
    return step / 2 + (rng or random).uniform(0, step / 2)


async def close_litellm_clients() -> None:
    """Close LiteLLM's cached async clients and forget them; run on the loop they belong to.

    LiteLLM caches clients per event loop, keyed by `id(loop)`.  Once a loop is closed, a new loop
    may get the same id and be handed a client bound to the dead loop ("Connection error").  So
    before one of our loops stops, its clients are closed (no "Unclosed client session" noise at
    exit) and evicted.
    """
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return
    try:
        from litellm.llms.custom_httpx.async_client_cleanup import close_litellm_async_clients

        await close_litellm_async_clients()
    except Exception:  # noqa: BLE001 - cleanup must never fail a run; other litellm versions differ
        pass
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    flush = getattr(cache, "flush_cache", None)
    if callable(flush):
        try:
            flush()
        except Exception:  # noqa: BLE001
            pass


async def call_with_retries(
    backend: Any, request: CallRequest, *, retries: int, timeout: float, limit_s: float | None = None
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
        except Exception as exc:  # noqa: BLE001 - classified below; nothing escapes unexplained
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
        wait = getattr(failure, "retry_after", None)
        if wait is None:
            wait = backoff_delay(attempt)
        if time.monotonic() + wait >= deadline:
            raise BackendError(
                f"{failure.args[0]}; the next retry (in {wait:.1f}s) would pass --judge-timeout={limit_s:g}s",
                retryable=True,
                status=failure.status,
            )
        await asyncio.sleep(wait)
        attempt += 1
