"""The LiteLLM backend: any provider LiteLLM supports, imported only when a live call is about to happen.

Importing LiteLLM costs seconds and, unless told otherwise, fetches a price list from the internet,
so nothing here imports it at module level: a replay never does.  LiteLLM is untyped at this
boundary (`Any`): only the few attributes read here are relied on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import re
import socket
import sys
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from ..errors import BackendError, VerdictParseError
from ..redact import redact
from .formats import FormatMemory, first_format, recorded_value, schema_format, sent_value
from .litellm_import import import_litellm

if TYPE_CHECKING:  # the protocol's records load with the first live call: a replay makes none
    from collections.abc import Mapping

    from .protocol import CallRequest, CallResult

# The environment variable that holds each provider's key, for "check X" hints.
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "azure": "AZURE_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "ollama": "OLLAMA_API_KEY",
    "ollama_chat": "OLLAMA_API_KEY",
    "hosted_vllm": "HOSTED_VLLM_API_KEY",
    "litellm_proxy": "LITELLM_PROXY_API_KEY",
    "azure_ai": "AZURE_AI_API_KEY",
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


# The key sent to an OpenAI-compatible server at an api base when the provider's key variable is unset:
# a local server (llama.cpp, vLLM, LM Studio, Ollama) wants none, but LiteLLM's OpenAI route sends
# nothing without one ("Missing credentials").  Not key-shaped, never a real key, never stored or keyed.
PLACEHOLDER_KEY = "llmjudge-no-key-set"


def placeholder_key(model: str, api_base: str | None) -> str | None:
    """`PLACEHOLDER_KEY` where a call of `model` to `api_base` would otherwise go without a key, else None."""
    if not api_base or provider_of(model) not in OPENAI_COMPATIBLE or os.environ.get(key_variable(model)):
        return None
    return PLACEHOLDER_KEY


# What each model and api base accepted as response_format, for each run (see `formats`).
FORMAT_MEMORY = FormatMemory()


# How each provider names a safety block, where LiteLLM turns it into finish_reason=content_filter.
SAFETY_NAMES = {
    "gemini": "; Gemini finishReason SAFETY",
    "vertex_ai": "; Gemini finishReason SAFETY",
    "azure": "; Azure OpenAI content filter",
}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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


# Providers that speak the OpenAI API at an api base that usually ends in /v1.
OPENAI_COMPATIBLE = frozenset(
    {"openai", "hosted_vllm", "openai_like", "text-completion-openai", "llamafile", "lm_studio"}
)
_UNSUPPORTED = (
    re.compile(r"Unsupported (?:value|parameter): '(\w+)'"),  # OpenAI's own 400
    re.compile(r"does not support parameters: \['(\w+)'"),  # LiteLLM, before sending
    re.compile(r"(?:doesn't|don't|does not|do not) support (\w+)="),  # LiteLLM: reasoning models' temperature
)
_TOKEN_FIGURES = re.compile(r"\d[\d,]*\s*(?:input\s+|output\s+)?tokens?\b", re.IGNORECASE)


def missing_keys(request: CallRequest) -> list[str]:
    """The key variables LiteLLM would read for `request.model` and finds unset (the provider's own first)."""
    litellm = import_litellm()
    try:
        found = litellm.validate_environment(model=request.model, api_base=request.api_base)
    except Exception:  # noqa: BLE001 - a hint only: LiteLLM's check failing must not fail the call
        return []
    names = [str(n) for n in (found or {}).get("missing_keys") or [] if re.search(r"KEY|TOKEN|CREDENTIAL", str(n))]
    own = key_variable(request.model)
    return sorted(names, key=lambda n: n != own)


def unsupported_param(text: str) -> str | None:
    """The parameter a refusal names ("Unsupported value: 'temperature' ..."), if it names one."""
    for pattern in _UNSUPPORTED:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


def _server_figures(detail: str) -> str:
    """The sentences of a context-overflow message that give token counts, for quoting."""
    sentences = [s.strip() for s in re.split(r"(?<=[.;])\s+", detail) if _TOKEN_FIGURES.search(s)]
    quoted = " ".join(sentences)[:300]
    return f" The server said: {quoted}" if quoted else ""


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from (LiteLLM wraps the socket's error three times over)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in seen) and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def connect_failure(exc: BaseException) -> str | None:
    """Why no connection to the judge's server was made (refused, unknown host), or None if one was.
    LiteLLM reports a refused port as an InternalServerError with status 500: the cause tells."""
    names = set()
    for each in _chain(exc):
        if isinstance(each, ConnectionRefusedError):
            return "connection refused: nothing listens there"
        if isinstance(each, socket.gaierror):
            return "the host name could not be resolved"
        names.add(type(each).__name__)
    if names & {"ConnectError", "ClientConnectorError"}:  # httpx's and aiohttp's: the connect step failed
        return "the connection could not be made"
    return None


class LiteLLMBackend:
    """Calls any provider LiteLLM supports; the key comes from the provider's usual variable.

    `structured` is `--judge-structured` ("auto" or "on"): how a call whose parameters ask for a
    JSON schema (`response_format`) sends it; see `formats`.
    """

    name: str | None = None  # the configured model names the judge

    def __init__(self, structured: str = "auto") -> None:
        self.structured = structured

    async def attempt(self, request: CallRequest, timeout: float) -> CallResult:
        """One `litellm.acompletion` of what `plan_request` sends, with LiteLLM's and the SDK's retries off.

        A schema asked for as `response_format` is sent as `formats` decides (a refusal is asked again
        at once, one format down); `CallResult.sent` says what went.
        """
        from .protocol import CallResult, UnsupportedParamError
        from .request import plan_request  # loaded with the first live call: a replay never plans a request

        litellm = import_litellm()
        reference = (request.params or {}).get("response_format")
        schema = schema_format(reference)
        if schema is not None:  # sent as `formats` decides, never refused up front by the parameter plan
            params = {k: v for k, v in (request.params or {}).items() if k != "response_format"}
            request = dataclasses.replace(request, params=params)
        plan = plan_request(request)
        for name, why in plan.refused.items():
            raise UnsupportedParamError(
                redact(
                    f"{request.model} does not take {name!r} (LiteLLM: {why}); nothing was sent. "
                    "Use a rubric or parameters this judge takes, or another --judge-model."
                ),
                unsupported_param=name,
            )
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [dict(m) for m in plan.messages],
            **plan.params,
            "timeout": timeout,
            "num_retries": 0,  # litellm's retries: off (they also retry 4xx)
            "max_retries": 0,  # the OpenAI SDK's own retries: off
        }
        if request.api_base:
            kwargs["api_base"] = request.api_base
            placeholder = placeholder_key(request.model, request.api_base)
            if placeholder is not None:
                kwargs["api_key"] = placeholder
        sent = dict(plan.params)
        if schema is not None:

            async def send(fmt: str) -> Any:
                value = sent_value(fmt, schema)
                return await litellm.acompletion(**kwargs, **({"response_format": value} if value else {}))

            start = first_format(self.structured, litellm, request.model, plan.provider, request.api_base)
            key = (request.model, request.api_base)
            response, fmt = await FORMAT_MEMORY.send(key, self.structured, start, send)
            value = sent_value(fmt, schema)
            if value is not None:  # a schema is recorded by its reference (name, sha256), as in the key
                sent["response_format"] = recorded_value(fmt, value, cast("Mapping[str, Any]", reference))
        else:
            response = await litellm.acompletion(**kwargs)
        choices = getattr(response, "choices", None)
        if not choices:  # a server bug or a filter: nothing to read (LiteLLM raised a bare IndexError later)
            where = request.model + (f" at {request.api_base}" if request.api_base else "")
            raise BackendError(
                f"the reply from {where} had no choices (an empty 'choices' list): no judge reply to read. "
                "Check the judge's server.",
                retryable=True,
            )
        choice = choices[0]
        logprobs = getattr(choice, "logprobs", None)
        if logprobs is not None and hasattr(logprobs, "model_dump"):
            logprobs = logprobs.model_dump()
        text = choice.message.content or ""
        finish_reason = getattr(choice, "finish_reason", None)
        if finish_reason == "content_filter" and not text.strip():
            raise VerdictParseError(
                f"the judge's provider withheld the reply: its safety filter blocked it "
                f"(finish_reason=content_filter{SAFETY_NAMES.get(plan.provider or '', '')}); no verdict, nothing "
                "was stored. Rephrase the case, or use a judge model without that filter."
            )
        usage = getattr(response, "usage", None)
        return CallResult(
            text=text,
            logprobs=logprobs,
            finish_reason=finish_reason,
            cost_usd=_cost_of(litellm, response),
            prompt_tokens=_count(getattr(usage, "prompt_tokens", None)),
            completion_tokens=_count(getattr(usage, "completion_tokens", None)),
            sent=sent,
            dropped=dict(plan.dropped),
        )

    def classify(self, exc: BaseException, request: CallRequest) -> BackendError:
        """Turn a LiteLLM exception into a BackendError that says whether to retry and what to do."""
        from .protocol import UnsupportedParamError
        from .retry import RETRYABLE_STATUS, error_detail, retry_after

        litellm = import_litellm()
        model, base = request.model, request.api_base
        said = f"{exc.__class__.__name__} from {model}" + (f" at {base}" if base else "") + ": "
        detail = error_detail(exc)
        full = redact(str(exc))
        status = getattr(exc, "status_code", None)
        key = key_variable(model)

        def fatal(message: str) -> BackendError:
            return BackendError(redact(message), retryable=False, status=status)

        def retry(status: int | None = status, note: str = "") -> BackendError:
            return BackendError(
                redact(said + note + detail), retryable=True, status=status, retry_after=retry_after(exc)
            )

        if isinstance(exc, litellm.UnsupportedParamsError) or (
            status == 400 and re.search(r"Unsupported (?:value|parameter):", detail)
        ):
            param = unsupported_param(full) or "a parameter"
            return UnsupportedParamError(
                redact(
                    f"{said}the judge model does not take {param!r} as sent (not retried). "
                    f"Check the parameters your rubric and configuration send. {detail}"
                ),
                unsupported_param=param,
                status=status,
            )
        if "llm provider not provided" in full.lower():  # LiteLLM's own refusal, before anything is sent
            return fatal(
                f"LiteLLM cannot tell which provider serves {model!r}: nothing was sent. Name it with a provider "
                f"prefix, e.g. --judge-model=openai/{model} for an OpenAI-compatible server (see LiteLLM's list of "
                "providers)."
            )
        if "credentials encoded in url" in full.lower():  # httpx's own refusal, before anything is sent
            return fatal(
                f"{said}the api base holds credentials (user:password@) and the client also sends the key "
                f"({key}, or a placeholder) as an Authorization header; the HTTP client refuses to send both, so "
                f"nothing reached the server (not retried). Take the credentials out of --judge-api-base, and "
                f"give the server's key in {key}. {detail}"
            )
        refused = connect_failure(exc)
        if refused is not None:
            target = base or f"{provider_of(model)}'s API"
            message = f"could not connect to {target} for {model} ({refused}). Start the judge's server, or check"
            return BackendError(redact(f"{message} --judge-api-base."), retryable=True)
        if isinstance(exc, litellm.ContextWindowExceededError):
            chars = request.prompt_chars()
            return fatal(
                f"the prompt is too long for {model}: {chars} characters (about {chars // 4} tokens). Judge a "
                f"shorter output, or use a judge model with a longer context.{_server_figures(detail)}"
            )
        # A LiteLLM Proxy: every deployment of the alias is at its rpm/tpm limit. A rate limit, whatever the class.
        if "no deployments available" in full.lower():
            return retry(status=429, note="the LiteLLM Proxy has no deployment free (a rate limit): ")
        # A LiteLLM Proxy without a database cannot look a key up: a wrong key comes back as HTTP 400.
        if "no connected db" in full.lower() and status in (400, 401, None):
            return fatal(
                f"{said}the LiteLLM Proxy refused the key (it has no database to look keys up in, so any key but "
                f"its master key fails this way). Set {key} to the proxy's master key. {detail}"
            )
        lower = detail.lower()
        credential_words = any(w in lower for w in ("credential", "api_key", "api key", "unregistered callers"))
        if status in (401, 403) or credential_words or isinstance(exc, litellm.AuthenticationError):
            missing = missing_keys(request)
            if missing:
                alternatives = f" (or {', '.join(missing[1:])})" if len(missing) > 1 else ""
                return fatal(
                    f"{said}no key for this judge: {missing[0]}{alternatives} is not set, and the server refused "
                    f"to judge without one. Set it. {detail}"
                )
        # Decide by HTTP status first: LiteLLM names the class after the error body's "type", so an
        # "invalid_request_error" body on a 500 or 503 arrives as a BadRequestError.
        if status == 403 or (status is None and isinstance(exc, litellm.PermissionDeniedError)):
            return fatal(
                f"{said}the key in {key} is not allowed to use model {model!r} (as sent to LiteLLM). Use a key "
                f"with access to it, or another --judge-model. {detail}"
            )
        if status == 401 or isinstance(exc, litellm.AuthenticationError) or (status is None and credential_words):
            return fatal(
                f"{said}the judge refused the credentials. Set {key} to a valid key (for a local server any value "
                f"works). {detail}"
            )
        if status == 404 or isinstance(exc, litellm.NotFoundError):
            if base and provider_of(model) in OPENAI_COMPATIBLE and not urlsplit(base).path.rstrip("/").endswith("/v1"):
                return fatal(
                    f"{said}HTTP 404. The api base has no /v1, and OpenAI-compatible servers answer at "
                    f"<base>/v1/chat/completions: try --judge-api-base={base.rstrip('/')}/v1. If the base is right, "
                    f"check --judge-model ({model!r} as sent to LiteLLM). {detail}"
                )
            return fatal(
                f"{said}model {model!r} (as sent to LiteLLM) was not found. Check --judge-model (and "
                f"--judge-api-base). {detail}"
            )
        if isinstance(status, int) and status in RETRYABLE_STATUS:
            return retry()
        if (isinstance(status, int) and 400 <= status < 500) or isinstance(exc, litellm.BadRequestError):
            return fatal(
                f"{said}the judge rejected the request (HTTP {status if status is not None else '4xx'}, not "
                f"retried; prompt {request.prompt_chars()} characters). Check --judge-model ({model!r} as sent "
                f"to LiteLLM) and the parameters your rubric sends. {detail}"
            )
        if credential_words:
            return fatal(f"{said}no usable credentials. Set {key} (a local server takes any value). {detail}")
        retried = (
            litellm.RateLimitError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.Timeout,
        )
        if isinstance(
            exc, (*retried, litellm.BadGatewayError, litellm.APIConnectionError, TimeoutError, ConnectionError)
        ):
            return retry(status=429 if isinstance(exc, litellm.RateLimitError) else status)
        return fatal(said + detail)


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
