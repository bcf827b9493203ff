"""What a backend sends and what its errors say, through the real LiteLLM client against local servers.

Every test builds a `CallRequest` and calls the backend (through `call_with_retries`), and reads
what reached the server from the server's own record: the request plan (`plan_request`), the
options the pipeline will plumb (max tokens, reasoning effort, extra parameters, instructions in
the user message), token usage, every retry-after form, and errors that say what to do.
"""

from __future__ import annotations

import email.utils
import time

import pytest

from helpers import CANARY_KEY, MODEL
from helpers.backend import CONTEXT_OVERFLOW, call, fail
from helpers.openai_server import Reply
from helpers.providers import AnthropicServer, GeminiServer, OllamaServer, Turn
from pytest_llmjudge.backends import retry
from pytest_llmjudge.backends.protocol import CallRequest, UnsupportedParamError
from pytest_llmjudge.backends.request import merge_instructions, plan_request
from pytest_llmjudge.backends.retry import retry_after
from pytest_llmjudge.errors import VerdictParseError

SYSTEM = {"role": "system", "content": "You are an impartial evaluator."}
USER = {"role": "user", "content": "Output: fine. SCORE=0.9"}


pytestmark = pytest.mark.usefixtures("fast_backoff")


# -- the plan: what the model takes --------------------------------------------------------------------


@pytest.mark.parametrize("model", ["openai/gpt-5-mini", "openai/o3-mini", "openai/o4-mini", "openai/o1"])
def test_reasoning_models_get_no_temperature_and_say_why(model):
    plan = plan_request(CallRequest(model=model, messages=[USER], temperature=0.0))
    bare = model.split("/", 1)[1]
    assert "temperature" not in plan.params
    assert plan.dropped == {"temperature": f"{bare} only takes its default"}
    assert plan.notes() == [f"temperature not sent: {bare} only takes its default"]


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", MODEL, "anthropic/claude-3-5-haiku-latest"])
def test_other_models_get_the_configured_temperature(model):
    plan = plan_request(CallRequest(model=model, messages=[USER], temperature=0.0))
    assert plan.params == {"temperature": 0.0} and plan.dropped == {}


def test_temperature_none_sends_none():
    assert plan_request(CallRequest(model="openai/gpt-4o-mini", messages=[USER], temperature=None)).params == {}


def test_a_temperature_the_reasoning_model_takes_is_sent():
    assert plan_request(CallRequest(model="openai/o3-mini", messages=[USER], temperature=1.0)).params == {
        "temperature": 1.0
    }


@pytest.mark.parametrize("model", ["openai/gpt-5-mini", "openai/o3-mini", "openai/o4-mini"])
def test_reasoning_model_judges_with_default_settings_at_the_server(loop, reasoner, model):
    result = call(loop, CallRequest(model=model, messages=[SYSTEM, USER], api_base=reasoner.api_base))
    assert '"score": 0.9' in result.text
    body = reasoner.last.body
    assert "temperature" not in body and "max_tokens" not in body
    assert result.sent == {} and result.dropped == {"temperature": f"{model.split('/')[1]} only takes its default"}


def test_max_tokens_becomes_max_completion_tokens_for_reasoning_models(loop, reasoner):
    request = CallRequest(model="openai/o3-mini", messages=[USER], api_base=reasoner.api_base, max_tokens=300)
    result = call(loop, request)
    assert reasoner.last.body["max_completion_tokens"] == 300 and "max_tokens" not in reasoner.last.body
    assert result.sent == {"max_completion_tokens": 300}


def test_max_tokens_and_extra_params_reach_an_openai_compatible_server(loop, openai_server):
    request = CallRequest(
        model=MODEL,
        messages=[USER],
        api_base=openai_server.base_url,
        max_tokens=300,
        extra_params={"seed": 7, "presence_penalty": 0.5},
    )
    result = call(loop, request)
    body = openai_server.requests[-1]
    assert body["max_tokens"] == 300 and body["seed"] == 7 and body["presence_penalty"] == 0.5
    assert body["temperature"] == 0
    assert result.sent == {"temperature": 0.0, "max_tokens": 300, "seed": 7, "presence_penalty": 0.5}


def test_reasoning_effort_is_sent_where_taken_and_dropped_where_not(loop, reasoner, openai_server):
    call(loop, CallRequest(model="openai/o3-mini", messages=[USER], api_base=reasoner.api_base, reasoning_effort="low"))
    assert reasoner.last.body["reasoning_effort"] == "low"
    request = CallRequest(
        model="openai/gpt-4o-mini", messages=[USER], api_base=openai_server.base_url, reasoning_effort="low"
    )
    result = call(loop, request)
    assert "reasoning_effort" not in openai_server.requests[-1]
    assert result.dropped == {"reasoning_effort": "gpt-4o-mini takes no reasoning_effort"}


@pytest.mark.parametrize(
    "server_type, model, field",
    [
        (AnthropicServer, "anthropic/claude-3-5-haiku-latest", lambda b: b["max_tokens"]),
        (GeminiServer, "gemini/gemini-2.5-flash", lambda b: b["generationConfig"]["max_output_tokens"]),
        (OllamaServer, "ollama_chat/llama3.2", lambda b: b["options"]["num_predict"]),
    ],
    ids=["anthropic", "gemini", "ollama"],
)
def test_max_tokens_reaches_each_providers_field_and_usage_comes_back(
    loop, no_provider_keys, server_type, model, field
):
    with server_type() as server:
        request = CallRequest(model=model, messages=[SYSTEM, USER], api_base=server.api_base, max_tokens=300)
        # A local server takes any key; Ollama none. The key variable is what LiteLLM reads.
        key_var = {"anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}.get(server.provider)
        with pytest.MonkeyPatch.context() as mp:
            if key_var:
                mp.setenv(key_var, CANARY_KEY)
            result = call(loop, request)
    assert field(server.last.body) == 300
    assert (result.prompt_tokens, result.completion_tokens) == (20, 10)


def test_usage_from_an_openai_compatible_server(loop, openai_server):
    openai_server.enqueue(Reply(content='{"reasoning": "ok", "score": 0.9}', prompt_tokens=123, completion_tokens=45))
    result = call(loop, CallRequest(model=MODEL, messages=[USER], api_base=openai_server.base_url))
    assert (result.prompt_tokens, result.completion_tokens) == (123, 45)


def test_instructions_in_the_user_message(loop, openai_server):
    request = CallRequest(
        model=MODEL, messages=[SYSTEM, USER], api_base=openai_server.base_url, instructions_in_user=True
    )
    call(loop, request)
    (message,) = openai_server.requests[-1]["messages"]
    assert message["role"] == "user"
    assert message["content"] == f"{SYSTEM['content']}\n\n{USER['content']}"


def test_merge_instructions_without_a_user_message_and_without_a_system_one():
    assert merge_instructions([SYSTEM]) == ({"role": "user", "content": SYSTEM["content"]},)
    assert merge_instructions([USER]) == (USER,)


# -- logprobs where the provider has none: a classified refusal ----------------------------------------


@pytest.mark.parametrize(
    "server_type, model, param",
    [
        (AnthropicServer, "anthropic/claude-3-5-haiku-latest", "logprobs"),
        (OllamaServer, "ollama_chat/llama3.2", "logprobs"),
        (GeminiServer, "gemini/gemini-2.5-flash", "top_logprobs"),
    ],
    ids=["anthropic", "ollama", "gemini"],
)
def test_logprobs_on_a_provider_without_them_is_a_distinct_error_before_sending(
    loop, no_provider_keys, monkeypatch, server_type, model, param
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", CANARY_KEY)
    with server_type() as server:
        request = CallRequest(
            model=model, messages=[USER], api_base=server.api_base, params={"logprobs": True, "top_logprobs": 5}
        )
        with pytest.raises(UnsupportedParamError) as info:
            call(loop, request, retries=3)
    assert info.value.unsupported_param == param and not info.value.retryable
    assert f"does not take {param!r}" in str(info.value)
    assert server.received == [], "refused before sending"


def test_a_server_refusing_a_parameter_is_classified_with_its_name(loop, reasoner):
    request = CallRequest(model="openai/judge-reasoner", messages=[USER], api_base=reasoner.api_base)
    with pytest.raises(UnsupportedParamError) as info:
        call(loop, request, retries=3)
    assert info.value.unsupported_param == "temperature" and info.value.status == 400
    assert len(reasoner.received) == 1


# -- retry-after in every form ---------------------------------------------------------------------------


class Refused(Exception):
    """An error for a refused request that keeps the response's headers, as a client's error does."""

    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("rate limited")
        self.headers = headers


@pytest.mark.parametrize(
    "headers, seconds",
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "2500"}, 2.5),
        ({"retry-after-ms": "2500", "retry-after": "3"}, 2.5),
        ({"llm_provider-retry-after": "60"}, 60.0),
        ({"llm_provider-retry-after-ms": "20"}, 0.02),
        ({"x-ratelimit-reset-requests": "6m0s"}, 360.0),
        ({"x-ratelimit-reset-tokens": "20ms"}, 0.02),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 360.0),
        (
            {
                "x-ratelimit-reset-requests": "1s",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-tokens": "6m0s",
                "x-ratelimit-remaining-tokens": "5000",
            },
            1.0,
        ),
        ({"llm_provider-x-ratelimit-reset-requests": "1m30s"}, 90.0),
        ({"retry-after": "-5"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"x-ratelimit-reset-requests": "later"}, None),
        ({}, None),
    ],
)
def test_retry_after_header_forms(headers, seconds):
    assert retry_after(Refused(headers)) == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_as_an_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after(Refused({"retry-after": when})) <= 31
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert retry_after(Refused({"retry-after": past})) == 0.0


@pytest.mark.parametrize(
    "text, seconds", [("1s", 1), ("6m0s", 360), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("1x", None)]
)
def test_a_rate_limit_reset_takes_a_go_style_duration(text, seconds):
    wait = retry_after(Refused({"x-ratelimit-reset-requests": text}))
    assert wait == (pytest.approx(seconds) if seconds is not None else None)


@pytest.mark.parametrize(
    "headers",
    [
        {"llm_provider-retry-after": "30"},
        {"retry-after-ms": "30000"},
        {"x-ratelimit-reset-requests": "30s", "x-ratelimit-remaining-requests": "0"},
        {"retry-after": "HTTP-DATE"},  # 40 s from when the test runs, not from collection
    ],
    ids=["proxy", "ms", "reset-requests", "http-date"],
)
def test_a_hint_past_the_deadline_gives_up_at_once(loop, openai_server, headers):
    if headers.get("retry-after") == "HTTP-DATE":
        headers = {"retry-after": email.utils.formatdate(time.time() + 40, usegmt=True)}
    openai_server.enqueue(*[Reply(status=429, headers=headers)] * 4)
    started = time.monotonic()
    error = fail(loop, CallRequest(model=MODEL, messages=[USER], api_base=openai_server.base_url), retries=3, timeout=5)
    assert time.monotonic() - started < 4
    assert openai_server.request_count == 1
    assert "would pass --judge-timeout=5s" in str(error)


def test_a_short_hint_is_waited_then_judged(loop, openai_server, monkeypatch):
    monkeypatch.setattr(retry, "BACKOFF_BASE_S", 60.0)  # our own backoff would wait 30-60 s
    openai_server.enqueue(Reply(status=429, headers={"retry-after-ms": "300"}))
    started = time.monotonic()
    result = call(loop, CallRequest(model=MODEL, messages=[USER], api_base=openai_server.base_url), retries=2)
    assert 0.3 <= time.monotonic() - started < 5 and result.attempts == 2


def test_gemini_retry_info_in_the_body_is_honoured(loop, no_provider_keys, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", CANARY_KEY)
    with GeminiServer(key=CANARY_KEY) as server:
        server.enqueue(Turn(status=429, retry_after_s=30))
        request = CallRequest(model="gemini/gemini-2.5-flash", messages=[USER], api_base=server.api_base)
        error = fail(loop, request, retries=3, timeout=5)
    assert error.retry_after == 30.0 and error.status == 429
    assert "next retry (in 30.0s)" in str(error)


# -- a LiteLLM Proxy's errors, by what they mean ---------------------------------------------------------

NO_DEPLOYMENTS = "No deployments available for selected model, Try again in 60 seconds. Passed model=judge."


def test_proxy_no_deployments_is_a_rate_limit_with_its_retry_header(loop, openai_server):
    openai_server.enqueue(
        Reply(status=429, error_message=NO_DEPLOYMENTS, headers={"llm_provider-retry-after": "1"}),
        Reply(status=429, error_message=NO_DEPLOYMENTS, headers={"llm_provider-retry-after": "60"}),
    )
    error = fail(loop, CallRequest(model=MODEL, messages=[USER], api_base=openai_server.base_url), retries=3)
    assert openai_server.request_count == 2, "waited the proxy's 1 s, then gave up before its 60 s"
    assert error.status == 429 and error.retryable
    assert "no deployment free (a rate limit)" in str(error) and "in 60.0s" in str(error)


def test_proxy_no_connected_db_is_the_key(loop, openai_server):
    message = "Authentication Error, No connected db."
    openai_server.enqueue(*[Reply(status=400, error_message=message)] * 3)
    error = fail(loop, CallRequest(model=MODEL, messages=[USER], api_base=openai_server.base_url), retries=3)
    assert openai_server.request_count == 1 and not error.retryable
    assert "the LiteLLM Proxy refused the key" in str(error) and "Set OPENAI_API_KEY" in str(error)
    assert "--judge-model" not in str(error)


# -- errors that say what to do --------------------------------------------------------------------------


def test_missing_key_fails_at_once_naming_the_variable(loop, openai_server, monkeypatch):
    # A cloud judge (no api base: the provider's own endpoint) needs its key; nothing is sent without it.
    # (A local judge, at an api base, needs none: see test_local_judge_key.py.)
    monkeypatch.delenv("OPENAI_API_KEY")
    started = time.monotonic()
    error = fail(loop, CallRequest(model="gpt-4o-mini", messages=[USER]), retries=3)
    assert time.monotonic() - started < 3 and not error.retryable
    assert "OPENAI_API_KEY is not set" in str(error)
    assert openai_server.request_count == 0


def test_missing_gemini_key_names_both_variables_litellm_reads(loop, no_provider_keys):
    with GeminiServer(key=CANARY_KEY) as server:
        request = CallRequest(model="gemini/gemini-2.5-flash", messages=[USER], api_base=server.api_base)
        error = fail(loop, request, retries=3)
    assert "GEMINI_API_KEY (or GOOGLE_API_KEY) is not set" in str(error)
    assert len(server.received) <= 1 and not error.retryable


def test_a_404_at_a_base_without_v1_says_so_before_the_model(loop, reasoner):
    request = CallRequest(model="openai/o3-mini", messages=[USER], api_base=reasoner.base_url)
    message = str(fail(loop, request, retries=3))
    assert "The api base has no /v1" in message
    assert f"--judge-api-base={reasoner.base_url}/v1" in message
    assert message.index("/v1") < message.index("--judge-model")
    assert len(reasoner.received) == 0, "the fake serves only /v1/chat/completions: nothing reached a route"


def test_a_404_at_a_base_with_v1_suspects_the_model(loop, openai_server):
    openai_server.enqueue(Reply(status=404))
    base = f"{openai_server.base_url}/v1"
    message = str(fail(loop, CallRequest(model=MODEL, messages=[USER], api_base=base)))
    assert "no /v1" not in message and "was not found" in message


def test_context_overflow_quotes_the_servers_figures(loop, openai_server):
    openai_server.enqueue(Reply(status=400, error_message=CONTEXT_OVERFLOW))
    message = str(fail(loop, CallRequest(model=MODEL, messages=[USER], api_base=openai_server.base_url)))
    assert "The server said:" in message
    assert "maximum context length is 8192 tokens" in message and "resulted in 9000 tokens" in message


def test_safety_block_is_named_not_an_empty_reply(loop, no_provider_keys, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", CANARY_KEY)
    with GeminiServer(key=CANARY_KEY) as server:
        server.enqueue(Turn(blocked=True))
        request = CallRequest(model="gemini/gemini-2.5-flash", messages=[USER], api_base=server.api_base)
        with pytest.raises(VerdictParseError, match=r"finish_reason=content_filter; Gemini finishReason SAFETY"):
            call(loop, request, retries=3)
    assert len(server.received) == 1, "a safety block is not retried"
