"""What a call actually sends: the configured parameters, less what the judge model does not take.

LiteLLM knows, per provider and model, which OpenAI-style parameters a model takes and with which
values (reasoning models take only the default temperature; o-series and gpt-5 want
`max_completion_tokens`; Anthropic takes no logprobs).  `plan_request` asks it, one parameter at a
time, by a dry run of LiteLLM's own parameter mapping (`get_optional_params`, with `drop_params`
off), so no list of model names lives here.  A model LiteLLM does not know gets everything as
configured: its server has the last word (and a refusal is classified as `UnsupportedParamError`).

What the plan decides, and why, is data (`SentRequest`): it belongs in the verdict key and record,
and the run's header can say "temperature not sent: gpt-5-mini only takes its default".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .litellm_import import import_litellm
from .protocol import CallRequest

# Parameters the plugin chooses itself; a model that refuses them judges without them.
DROPPABLE = ("reasoning_effort", "temperature", "max_tokens")


@dataclass(frozen=True)
class SentRequest:
    """The call as it goes to LiteLLM: messages, parameters, and what was dropped or refused."""

    model: str
    provider: str | None  # the LiteLLM provider the model routes to (None: LiteLLM could not tell)
    messages: tuple[Mapping[str, str], ...]
    params: Mapping[str, Any]  # sent beside model and messages (temperature, max_completion_tokens, logprobs...)
    dropped: Mapping[str, str] = field(default_factory=dict)  # configured, not sent: name -> why
    refused: Mapping[str, str] = field(default_factory=dict)  # asked for, not takeable: name -> why

    def notes(self) -> list[str]:
        """One line per dropped parameter, for the run's header."""
        return [f"{name} not sent: {why}" for name, why in self.dropped.items()]


def merge_instructions(messages: Sequence[Mapping[str, str]]) -> tuple[dict[str, str], ...]:
    """The system messages folded into the first user message (for chat templates that drop them)."""
    system = [m.get("content") or "" for m in messages if m.get("role") == "system"]
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return tuple(rest)
    instructions = "\n\n".join(s for s in system if s)
    for message in rest:
        if message.get("role") == "user":
            message["content"] = f"{instructions}\n\n{message.get('content') or ''}"
            return tuple(rest)
    return ({"role": "user", "content": instructions}, *rest)


def plan_request(request: CallRequest) -> SentRequest:
    """Decide what `request` sends (imports LiteLLM: call it only where a live call may follow)."""
    litellm = import_litellm()
    messages = (
        merge_instructions(request.messages)
        if request.instructions_in_user
        else tuple(dict(m) for m in request.messages)
    )
    try:
        bare, provider, _, _ = litellm.get_llm_provider(request.model, api_base=request.api_base)
    except Exception:  # noqa: BLE001 - a model LiteLLM cannot place is sent as given
        bare, provider = request.model, None
    probe = _Probe(litellm, bare, provider)
    params: dict[str, Any] = {}
    dropped: dict[str, str] = {}
    refused: dict[str, str] = {}

    if request.reasoning_effort is not None:
        if probe.refuses({"reasoning_effort": request.reasoning_effort}):
            dropped["reasoning_effort"] = f"{bare} takes no reasoning_effort"
        else:
            params["reasoning_effort"] = request.reasoning_effort
    if request.temperature is not None:
        context = {k: v for k, v in params.items() if k == "reasoning_effort"}
        if probe.refuses({**context, "temperature": request.temperature}):
            dropped["temperature"] = f"{bare} only takes its default"
        else:
            params["temperature"] = request.temperature
    if request.max_tokens is not None:
        mapped = probe.mapped({"max_tokens": request.max_tokens})
        if mapped is not None and "max_completion_tokens" in mapped and "max_tokens" not in mapped:
            params["max_completion_tokens"] = request.max_tokens  # what LiteLLM would send: say it
        elif mapped is not None:
            params["max_tokens"] = request.max_tokens
        elif not probe.refuses({"max_completion_tokens": request.max_tokens}):
            params["max_completion_tokens"] = request.max_tokens
        else:
            dropped["max_tokens"] = f"{bare} takes no limit on reply tokens"
    for source in (request.params, request.extra_params):
        for name, value in (source or {}).items():
            if name in DROPPABLE and (name in params or name in dropped):
                continue
            mapped = probe.mapped({name: value}) if probe.knows(name) else {name: value}
            if mapped is None:
                refused[name] = f"{provider or 'this provider'} does not take {name} for {bare}"
            elif mapped == probe.mapped({}):  # LiteLLM maps it to nothing: it would be left out silently
                dropped[name] = f"LiteLLM sends no {name} to {bare}"
            else:
                params[name] = value
    return SentRequest(request.model, provider, messages, params, dropped, refused)


_VERDICTS: dict[tuple[str, str, str], dict[str, Any] | None] = {}
_VERDICTS_LOCK = threading.Lock()


class _Probe:
    """Dry runs of LiteLLM's parameter mapping for one model, remembered for the process."""

    def __init__(self, litellm: Any, model: str, provider: str | None) -> None:
        self.litellm = litellm
        self.model = model
        self.provider = provider
        self._names: frozenset[str] | None = None

    def knows(self, name: str) -> bool:
        """Whether `name` is an OpenAI-style parameter LiteLLM maps (provider extras are passed as they are)."""
        if self._names is None:
            import inspect

            from litellm.utils import get_optional_params

            signature = inspect.signature(get_optional_params).parameters
            self._names = frozenset(n for n in signature if n not in ("model", "custom_llm_provider", "kwargs"))
        return name in self._names

    def mapped(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """What LiteLLM maps `params` to for this model; None where it refuses them."""
        if self.provider is None:
            return dict(params)
        try:
            key = (self.provider, self.model, json.dumps(params, sort_keys=True, default=repr))
        except (TypeError, ValueError):
            key = None
        if key is not None:
            with _VERDICTS_LOCK:
                if key in _VERDICTS:
                    return _VERDICTS[key]
        from litellm.utils import get_optional_params

        try:
            result: dict[str, Any] | None = dict(
                get_optional_params(
                    model=self.model, custom_llm_provider=self.provider, drop_params=False, **dict(params)
                )
            )
        except self.litellm.UnsupportedParamsError:
            result = None
        except Exception:  # noqa: BLE001 - LiteLLM's mapping failing means: send the parameter as given
            result = dict(params)
        if key is not None:
            with _VERDICTS_LOCK:
                _VERDICTS[key] = result
        return result

    def refuses(self, params: Mapping[str, Any]) -> bool:
        return self.mapped(params) is None
