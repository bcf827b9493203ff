"""The LiteLLM backend: any provider LiteLLM supports, imported only when a live call is about to happen.

Importing LiteLLM costs seconds and, unless told otherwise, fetches a price list from the internet,
so nothing here imports it at module level: a replay never does.  LiteLLM is untyped at this
boundary (`Any`): only the few attributes read here are relied on.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any

from ..errors import BackendError
from ..redact import redact
from .protocol import CallRequest, CallResult
from .retry import RETRYABLE_STATUS, error_detail, retry_after

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


def provider_of(model: str) -> str:
    """The LiteLLM provider a model name routes to (`openai/x` -> `openai`)."""
    if "/" in model:
        return model.split("/", 1)[0]
    if model.startswith("claude"):
        return "anthropic"
    return "openai"


def key_variable(model: str) -> str:
    """The environment variable that holds the key for `model`'s provider."""
    provider = provider_of(model)
    return KEY_VARIABLES.get(provider, f"{provider.upper()}_API_KEY")


def import_litellm() -> Any:
    """Import LiteLLM without its import-time network fetch, banners or tokenizer downloads."""
    # Unless set before the first import, litellm fetches a price list from the internet at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm: Any = importlib.import_module("litellm")
    litellm.suppress_debug_info = True
    litellm.disable_hf_tokenizer_download = True
    return litellm


class LiteLLMBackend:
    """Calls any provider LiteLLM supports; the key comes from the provider's usual variable."""

    name: str | None = None  # the configured model names the judge

    async def attempt(self, request: CallRequest, timeout: float) -> CallResult:
        """One `litellm.acompletion`, with LiteLLM's and the OpenAI SDK's own retries off."""
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
        """See `classify_litellm_error`."""
        return classify_litellm_error(exc, request)


def _cost_of(litellm: Any, response: Any) -> float | None:
    """The call's cost in USD where LiteLLM knows the model's price; None where it does not."""
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if cost is None:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # noqa: BLE001 - unknown models raise a plain Exception; cost is optional
            return None
    try:
        return float(cost)
    except (TypeError, ValueError):
        return None


def classify_litellm_error(exc: BaseException, request: CallRequest) -> BackendError:
    """Turn a LiteLLM exception into a BackendError that says whether to retry and what to do."""
    litellm = import_litellm()
    where = f"{request.model}" + (f" at {request.api_base}" if request.api_base else "")
    detail = error_detail(exc)
    status = getattr(exc, "status_code", None)
    kind = exc.__class__.__name__

    def fatal(message: str) -> BackendError:
        return BackendError(redact(message), retryable=False, status=status)

    def retry() -> BackendError:
        message = redact(f"{kind} from {where}: {detail}")
        return BackendError(message, retryable=True, status=status, retry_after=retry_after(exc))

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
    if (
        status == 401
        or isinstance(exc, litellm.AuthenticationError)
        or (status is None and ("credentials" in detail.lower() or "api_key" in detail.lower()))
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
    if (isinstance(status, int) and 400 <= status < 500) or isinstance(exc, litellm.BadRequestError):
        return fatal(
            f"{kind} from {where}: the judge rejected the request (HTTP {status if status is not None else '4xx'}, "
            f"not retried; prompt {request.prompt_chars()} characters). Check --judge-model ({request.model!r} as "
            f"sent to LiteLLM) and the parameters your rubric sends. {detail}"
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
    # Cleanup must never fail a run, and other litellm versions differ: any error is ignored.
    with contextlib.suppress(Exception):
        cleanup: Any = importlib.import_module("litellm.llms.custom_httpx.async_client_cleanup")
        await cleanup.close_litellm_async_clients()
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    flush = getattr(cache, "flush_cache", None)
    if callable(flush):
        with contextlib.suppress(Exception):
            flush()
