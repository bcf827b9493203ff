"""Every major provider, through LiteLLM's real adapters, against local servers speaking its wire format.

Each provider's server (tests/helpers/providers/) answers in that provider's public format; the plugin
runs for real inside pytester with `--judge-api-base` pointing at it and the key in the provider's usual
variable (a canary value).  What reached the server is asserted from the server's own record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import litellm
import pytest

from helpers import CANARY_KEY, LIKERT_LOGPROBS
from helpers.providers import (
    PRESENT,
    AnthropicServer,
    AzureServer,
    GeminiServer,
    OllamaServer,
    ProviderServer,
    ReasoningServer,
    Received,
    Turn,
)
from pytest_llmjudge.settings import DEFAULT_MAX_TOKENS

OUTPUT = "Returns are accepted within 30 days."
CRITERIA = "Says returns are accepted within 30 days"
JUDGED = f"""
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged({OUTPUT!r}, {CRITERIA!r}, threshold=0.7)
"""
# A reply cut off at the token limit that a lenient parser would read as a confident 0.
CUT_TO_ZERO = '{"reasoning": "The output", "score": 0'
AZURE_API_VERSION = "2024-10-21"


@dataclass(frozen=True)
class Wire:
    """What one request carried, read the provider's way."""

    model: str
    system: str
    user: str
    temperature: Any
    max_tokens: Any
    credential: str | None


def _texts(blocks: Any) -> str:
    if isinstance(blocks, str):
        return blocks
    return "\n".join(str(b.get("text", "")) for b in blocks or [] if isinstance(b, dict))


def _openai_wire(r: Received, model: str, credential_header: str) -> Wire:
    messages = r.body["messages"]
    return Wire(
        model=model,
        system=_texts([{"text": m["content"]} for m in messages if m["role"] == "system"]),
        user=_texts([{"text": m["content"]} for m in messages if m["role"] == "user"]),
        temperature=r.body.get("temperature"),
        max_tokens=r.body.get("max_tokens", r.body.get("max_completion_tokens")),
        credential=r.headers.get(credential_header),
    )


def anthropic_wire(r: Received) -> Wire:
    user = [_texts(m["content"]) for m in r.body["messages"] if m["role"] == "user"]
    return Wire(
        model=r.body["model"],
        system=_texts(r.body.get("system")),
        user="\n".join(user),
        temperature=r.body.get("temperature"),
        max_tokens=r.body.get("max_tokens"),
        credential=r.headers.get("x-api-key"),
    )


def gemini_wire(r: Received) -> Wire:
    config = r.body.get("generationConfig") or {}
    user = [_texts(c["parts"]) for c in r.body["contents"] if c["role"] == "user"]
    return Wire(
        model=GeminiServer.model_of(r),
        system=_texts((r.body.get("system_instruction") or {}).get("parts")),
        user="\n".join(user),
        temperature=config.get("temperature"),
        max_tokens=config.get("max_output_tokens", config.get("maxOutputTokens")),
        credential=r.headers.get("x-goog-api-key") or r.query.get("key"),
    )


def ollama_wire(r: Received) -> Wire:
    wire = _openai_wire(r, r.body["model"], "authorization")
    options = r.body.get("options") or {}
    return Wire(
        wire.model, wire.system, wire.user, options.get("temperature"), options.get("num_predict"), wire.credential
    )


def azure_wire(r: Received) -> Wire:
    return _openai_wire(r, AzureServer.deployment_of(r), "api-key")


@dataclass(frozen=True)
class Provider:
    name: str
    server: type[ProviderServer]
    model: str  # --judge-model
    wire_model: str  # the model (or deployment) the server must see
    key_variable: str
    wire: Callable[[Received], Wire]
    env: dict[str, str] = field(default_factory=dict)


PROVIDERS = {
    p.name: p
    for p in (
        Provider(
            "anthropic",
            AnthropicServer,
            "anthropic/claude-3-5-haiku-latest",
            "claude-3-5-haiku-latest",
            "ANTHROPIC_API_KEY",
            anthropic_wire,
        ),
        Provider("gemini", GeminiServer, "gemini/gemini-2.5-flash", "gemini-2.5-flash", "GEMINI_API_KEY", gemini_wire),
        Provider("ollama", OllamaServer, "ollama_chat/llama3.2", "llama3.2", "OLLAMA_API_KEY", ollama_wire),
        Provider(
            "azure",
            AzureServer,
            "azure/judge-deploy",
            "judge-deploy",
            "AZURE_API_KEY",
            azure_wire,
            env={"AZURE_API_VERSION": AZURE_API_VERSION},
        ),
    )
}
KEYED = ["anthropic", "gemini", "azure"]  # providers that require a key (local Ollama has no auth)


@pytest.fixture
def keyed(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, no_provider_keys: None
) -> Iterator[tuple[Provider, ProviderServer]]:
    """The provider named by the test's parameter, its server running (expecting the canary key if it takes one)."""
    provider = PROVIDERS[request.param]
    for name, value in provider.env.items():
        monkeypatch.setenv(name, value)
    keyed = provider.name in KEYED
    if keyed:
        monkeypatch.setenv(provider.key_variable, CANARY_KEY)
    with provider.server(key=CANARY_KEY if keyed else None) as server:
        yield provider, server


def run(
    pytester: pytest.Pytester, provider: Provider, server: ProviderServer, *args: str, source: str = JUDGED
) -> pytest.RunResult:
    pytester.makepyfile(test_judged=source)
    result = pytester.runpytest(
        f"--judge-model={provider.model}",
        f"--judge-api-base={server.api_base}",
        "--judge-mode=live",
        "--judge-retries=0",
        "--judge-timeout=10",
        *args,
    )
    assert CANARY_KEY not in result.stdout.str() + result.stderr.str(), "the key leaked into the output"
    return result


def everywhere(*names: str) -> pytest.MarkDecorator:
    """Parametrize `keyed` over the named providers (all of them by default)."""
    return pytest.mark.parametrize("keyed", list(names or PROVIDERS), indirect=True)


# -- a passing judgment, and what reached the server ---------------------------------------------------------


@everywhere()
def test_passing_judgment_and_what_reached_the_server(pytester, keyed):
    provider, server = keyed
    result = run(pytester, provider, server)
    result.assert_outcomes(passed=1)
    (request,) = server.received
    wire = provider.wire(request)
    assert wire.model == provider.wire_model
    assert "impartial evaluator" in wire.system and "Reply with one JSON object" in wire.system
    assert OUTPUT in wire.user and CRITERIA in wire.user
    assert OUTPUT not in wire.system, "the output under test belongs in the user turn only"
    assert wire.temperature == 0
    # The plugin's default cap on the reply, in each provider's own field (Anthropic requires one).
    assert wire.max_tokens == DEFAULT_MAX_TOKENS
    if provider.name == "ollama":
        assert wire.credential is None and request.key_matched is None, "Ollama needs no key: none is sent"
    else:
        assert wire.credential == PRESENT and request.key_matched is True


def test_anthropic_request_shape(pytester, no_provider_keys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY_KEY)
    with AnthropicServer(key=CANARY_KEY) as server:
        run(pytester, PROVIDERS["anthropic"], server).assert_outcomes(passed=1)
    request = server.last
    assert request.path == "/v1/messages"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert [m["role"] for m in request.body["messages"]] == ["user"], "the system prompt travels in `system`"
    assert all(b["type"] == "text" for b in request.body["system"] + request.body["messages"][0]["content"])
    assert "logprobs" not in request.body and "stream" not in request.body


def test_gemini_request_shape_key_in_header_not_url(pytester, no_provider_keys, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", CANARY_KEY)
    with GeminiServer(key=CANARY_KEY) as server:
        run(pytester, PROVIDERS["gemini"], server).assert_outcomes(passed=1)
    request = server.last
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.headers["x-goog-api-key"] == PRESENT and "key" not in request.query
    assert [c["role"] for c in request.body["contents"]] == ["user"]
    assert "system_instruction" in request.body


def test_ollama_request_shape(pytester, no_provider_keys):
    with OllamaServer() as server:
        run(pytester, PROVIDERS["ollama"], server).assert_outcomes(passed=1)
    request = server.last
    assert request.path == "/api/chat"
    assert request.body["stream"] is False
    # Structured output (auto) becomes Ollama's own `format` field: LiteLLM translates response_format.
    assert request.body["format"] == "json"
    assert [m["role"] for m in request.body["messages"]] == ["system", "user"]


def test_azure_request_shape_deployment_and_api_version(pytester, no_provider_keys, monkeypatch):
    monkeypatch.setenv("AZURE_API_KEY", CANARY_KEY)
    monkeypatch.setenv("AZURE_API_VERSION", AZURE_API_VERSION)
    with AzureServer(key=CANARY_KEY) as server:
        run(pytester, PROVIDERS["azure"], server).assert_outcomes(passed=1)
    request = server.last
    assert request.path == "/openai/deployments/judge-deploy/chat/completions"
    assert request.query == {"api-version": AZURE_API_VERSION}
    assert request.headers["api-key"] == PRESENT and "authorization" not in request.headers


# -- a reply cut off at the token limit ---------------------------------------------------------------------


@everywhere()
def test_truncated_reply_is_a_parse_error_never_a_low_score(pytester, keyed):
    provider, server = keyed
    server.enqueue(Turn(text=CUT_TO_ZERO, truncated=True))
    result = run(pytester, provider, server)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*cut off at max_tokens (finish_reason=length)*"])
    assert "JudgmentFailed" not in result.stdout.str()
    assert len(server.received) == 1


# -- credentials ----------------------------------------------------------------------------------------------


@everywhere("anthropic", "gemini", "azure", "ollama")
def test_refused_key_names_the_provider_variable_and_is_not_retried(pytester, keyed, monkeypatch):
    provider, server = keyed
    server.key = "the-right-key"  # the canary in the environment is now the wrong one (Ollama: behind a proxy)
    monkeypatch.setenv(provider.key_variable, CANARY_KEY)
    result = run(pytester, provider, server, "--judge-retries=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*BackendError*{provider.key_variable}*"])
    assert len(server.received) == 1, "a refused key is not worth a retry"


@everywhere(*KEYED)
def test_missing_key_fails_at_once_naming_the_variable(pytester, keyed, monkeypatch):
    provider, server = keyed
    monkeypatch.delenv(provider.key_variable)
    result = run(pytester, provider, server, "--judge-retries=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*BackendError*{provider.key_variable}*"])
    assert "not allowed" not in result.stdout.str() and "gave up after" not in result.stdout.str()
    assert len(server.received) <= 1


# -- rate limits ----------------------------------------------------------------------------------------------


@everywhere()
def test_rate_limit_is_retried_then_judged(pytester, keyed):
    provider, server = keyed
    server.enqueue(Turn(status=429, retry_after_s=0))
    result = run(pytester, provider, server, "--judge-retries=2")
    result.assert_outcomes(passed=1)
    assert len(server.received) == 2


def test_ollama_server_busy_is_retried_then_judged(pytester, no_provider_keys):
    with OllamaServer() as server:
        server.enqueue(Turn(status=503))  # Ollama's own answer when its queue is full
        run(pytester, PROVIDERS["ollama"], server, "--judge-retries=2").assert_outcomes(passed=1)
    assert len(server.received) == 2


@everywhere(*KEYED)
def test_provider_retry_hint_past_the_deadline_gives_up_at_once(pytester, keyed):
    provider, server = keyed
    server.enqueue(*[Turn(status=429, retry_after_s=30)] * 4)
    result = run(pytester, provider, server, "--judge-retries=3", "--judge-timeout=5")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*next retry (in 30.0s) would pass --judge-timeout=5s*"])
    assert len(server.received) == 1


def test_azure_retry_after_ms_alone_is_honoured(pytester, no_provider_keys, monkeypatch):
    monkeypatch.setenv("AZURE_API_KEY", CANARY_KEY)
    monkeypatch.setenv("AZURE_API_VERSION", AZURE_API_VERSION)
    with AzureServer(key=CANARY_KEY) as server:
        server.enqueue(*[Turn(status=429, headers={"retry-after-ms": "30000"})] * 4)
        result = run(pytester, PROVIDERS["azure"], server, "--judge-retries=3", "--judge-timeout=5")
    result.assert_outcomes(failed=1)
    assert len(server.received) == 1, "a 30 s hint past a 5 s deadline: give up at once"


# -- safety blocks --------------------------------------------------------------------------------------------


@everywhere("gemini", "azure")
def test_safety_block_is_an_error_never_a_score(pytester, keyed):
    provider, server = keyed
    server.enqueue(Turn(blocked=True))
    result = run(pytester, provider, server)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*"])
    assert "JudgmentFailed" not in result.stdout.str()


@everywhere("gemini", "azure")
def test_safety_block_says_the_provider_filtered_it(pytester, keyed):
    provider, server = keyed
    server.enqueue(Turn(blocked=True))
    result = run(pytester, provider, server)
    result.assert_outcomes(failed=1)
    named = "Gemini finishReason SAFETY" if provider.name == "gemini" else "Azure OpenAI content filter"
    result.stdout.fnmatch_lines(
        [f"*VerdictParseError*safety filter blocked it (finish_reason=content_filter; {named})*"]
    )
    assert "reply is empty" not in result.stdout.str()


# -- what --judge-max-tokens and logprobs become ----------------------------------------------------------------


@everywhere()
def test_judge_max_tokens_reaches_the_provider_field(pytester, keyed):
    provider, server = keyed
    run(pytester, provider, server, "--judge-max-tokens=300").assert_outcomes(passed=1)
    assert provider.wire(server.last).max_tokens == 300


@everywhere("anthropic", "gemini", "ollama")
def test_logprobs_rubric_on_a_provider_without_logprobs_still_judges(pytester, keyed):
    provider, server = keyed
    server.enqueue(Turn(text='{"reasoning": "Matches.", "score": 5}'))
    result = run(pytester, provider, server, source=LIKERT_LOGPROBS)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*LogprobsFallbackWarning*takes no log-probabilities*scored plainly*"])
    assert len(server.received) == 1, "the refusal comes from LiteLLM before sending: one plain call reaches the server"


def test_logprobs_rubric_on_azure_sends_logprobs(pytester, no_provider_keys, monkeypatch):
    monkeypatch.setenv("AZURE_API_KEY", CANARY_KEY)
    monkeypatch.setenv("AZURE_API_VERSION", AZURE_API_VERSION)
    with AzureServer(key=CANARY_KEY) as server:
        server.enqueue(Turn(text='{"reasoning": "Matches.", "score": 5}'))
        run(pytester, PROVIDERS["azure"], server, source=LIKERT_LOGPROBS).assert_outcomes(passed=1)
    assert server.last.body["logprobs"] is True and server.last.body["top_logprobs"] == 5


# -- structured output through LiteLLM, pinned at the wire ------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "number"}},
    "required": ["reasoning", "score"],
}
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}}


def _complete(provider: Provider, server: ProviderServer, **params: Any) -> Any:
    extra = {"api_version": AZURE_API_VERSION} if provider.name == "azure" else {}
    messages = [{"role": "system", "content": "Judge."}, {"role": "user", "content": "Output: fine."}]
    return litellm.completion(
        model=provider.model,
        messages=messages,
        api_base=server.api_base,
        api_key="k",
        num_retries=0,
        max_retries=0,
        timeout=5,
        **extra,
        **params,
    )


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_structured_output_becomes_the_providers_own_form(name, no_provider_keys):
    provider = PROVIDERS[name]
    with provider.server() as server:
        response = _complete(provider, server, response_format=RESPONSE_FORMAT)
    body = server.last.body
    if name == "anthropic":  # older Claude: a forced tool call, answered with a tool_use block
        assert body["tool_choice"] == {"name": "json_tool_call", "type": "tool"}
        assert body["tools"][0]["input_schema"] == SCHEMA
    elif name == "gemini":
        assert body["generationConfig"]["response_mime_type"] == "application/json"
        assert body["generationConfig"]["response_json_schema"] == SCHEMA
    elif name == "ollama":
        assert body["format"] == SCHEMA
    else:
        assert body["response_format"] == RESPONSE_FORMAT
    assert json.loads(response.choices[0].message.content)["score"] == 0.9


# -- an OpenAI reasoning model ----------------------------------------------------------------------------------


def run_reasoner(pytester, server: ReasoningServer, model: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_judged=JUDGED)
    return pytester.runpytest(
        f"--judge-model={model}",
        f"--judge-api-base={server.api_base}",
        "--judge-mode=live",
        "--judge-retries=0",
        "--judge-timeout=10",
        *args,
    )


def test_reasoning_model_reply_beside_reasoning_content_is_judged(pytester, reasoner):
    reasoner.enqueue(Turn(reasoning='Thinking: maybe {"score": 0.1}? No, it matches.'))
    result = run_reasoner(pytester, reasoner, "openai/judge-reasoner", "--judge-temperature=1")
    result.assert_outcomes(passed=1)
    body = reasoner.last.body
    # It refused the default reply cap (max_tokens, as a reasoning model does), and judged without it.
    assert body["temperature"] == 1 and "max_tokens" not in body
    assert reasoner.last.headers["authorization"] == PRESENT and reasoner.last.key_matched


def test_reasoning_model_cut_off_while_reasoning_is_a_parse_error(pytester, reasoner):
    reasoner.enqueue(Turn(truncated=True))  # content "": the budget went on reasoning
    result = run_reasoner(pytester, reasoner, "openai/judge-reasoner", "--judge-temperature=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*cut off at max_tokens*"])


def test_server_refusing_temperature_zero_is_reported_with_its_reason(pytester, reasoner):
    result = run_reasoner(pytester, reasoner, "openai/judge-reasoner", "--judge-retries=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*UnsupportedParamError*'temperature'*'temperature' does not support 0*"])
    assert len(reasoner.received) == 1 and reasoner.last.body["temperature"] == 0


@pytest.mark.parametrize("model", ["openai/gpt-5-mini", "openai/o3-mini", "openai/o4-mini"])
def test_reasoning_model_judges_with_default_settings(pytester, reasoner, model):
    result = run_reasoner(pytester, reasoner, model)
    result.assert_outcomes(passed=1)
    assert "temperature" not in reasoner.last.body, "the model takes only its default: none is sent"
    assert len(reasoner.received) == 1
