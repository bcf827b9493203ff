"""Recorded generations: the model under test, called through LiteLLM, its replies kept in the verdict file.

`generate(prompt)` asks the model under test (`model=`, else `--generate-model`) and returns its
reply, recorded in the test's verdict file in its own "generations" section (a generation is not a
verdict).  Its key hashes everything that changes the reply: the model, the messages, the
parameters sent and the index of a batch member; never how the call travels (api base, key,
timeout).  The judge's modes apply unchanged: `auto` reuses a stored reply, `replay` never calls out
and a miss fails naming what differs, `refresh` asks again and overwrites, `live` stores nothing.
The same call made twice returns the same recorded reply; `generate_batch` asks for several.

Here are the forms and their arguments; the calls run down the judgment's pipeline (plan -> lookup
-> live -> finish, `pipeline/generations.py` saying what a generation does differently): the
LiteLLM backend, the runtime's background loop, its concurrency bound, limiter and budget.  So,
like the judge's, they are neither recorded into nor answered from an HTTP cassette: the verdict
file is their record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .backends.protocol import CallRequest
from .errors import JudgeError
from .judge import user_facing
from .pipeline.generations import Generation, generation_key, plan_generations
from .pipeline.run import agenerate as arun_generations
from .pipeline.run import generate as run_generations
from .runtime import JudgeRuntime, TestContext, active, standalone_runtime

__all__ = [
    "Generate",
    "Generation",
    "agenerate",
    "generate",
    "generate_batch",
    "generate_variations",
    "generation_key",
    "spread_temperatures",
    "variation_prompt",
]

# How a call travels, never what it asks: sent as given, kept out of the key and the verdict file.
TRANSPORT_PARAMS = frozenset(
    {
        "api_key",
        "api_base",
        "base_url",
        "api_version",
        "organization",
        "timeout",
        "num_retries",
        "max_retries",
        "extra_headers",
        "headers",
    }
)
# Parameters that would change what a call returns beyond one reply text: generate() sets or refuses them.
REFUSED_PARAMS = {
    "messages": "generate() builds the messages from the prompt and `system`",
    "stream": "generate() reads whole replies",
    "n": "generate() keeps one reply per call: use generate_batch(prompt, n=...)",
}
TASK_PLACEHOLDER = "{task}"


def build(
    prompt: str,
    *,
    model: str,
    system: str | None,
    temperature: float | None,
    params: Mapping[str, Any],
    api_base: str | None,
    index: int = 0,
) -> Generation:
    """Key one generation; transport parameters are sent and left out of the key."""
    if not isinstance(prompt, str):
        raise JudgeError(f"generate() takes the prompt as a str, got {type(prompt).__name__}")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))):
        raise JudgeError(f"generate() temperature must be a number or None, got {temperature!r}")
    for name in params:
        if name in REFUSED_PARAMS:
            raise JudgeError(f"generate() does not take {name}=...: {REFUSED_PARAMS[name]}")
    messages: list[dict[str, str]] = [{"role": "system", "content": system}] if system is not None else []
    messages.append({"role": "user", "content": prompt})
    asked = {k: v for k, v in params.items() if k not in TRANSPORT_PARAMS}
    transport = {k: v for k, v in params.items() if k in TRANSPORT_PARAMS and k not in ("api_base", "base_url")}
    api_base = params.get("api_base") or params.get("base_url") or api_base
    keyed = {**({"temperature": temperature} if temperature is not None else {}), **asked}
    request = CallRequest(
        model=model,
        messages=messages,
        api_base=api_base,
        temperature=temperature,
        extra_params={**asked, **transport},
    )
    key = generation_key(model, messages, keyed, index)
    return Generation(model, tuple(messages), keyed, index, key, request)


def spread_temperatures(n: int, temperature: float | tuple[float, float]) -> list[float]:
    """`n` temperatures evenly spread over `temperature` (low, high), both ends included; one value repeats."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise JudgeError(f"generate_batch() n must be a whole number >= 1, got {n!r}")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
        return [float(temperature)] * n
    if (
        not isinstance(temperature, (tuple, list))
        or len(temperature) != 2
        or any(isinstance(t, bool) or not isinstance(t, (int, float)) for t in temperature)
    ):
        raise JudgeError(f"generate_batch() temperature must be a number or a (low, high) pair, got {temperature!r}")
    low, high = float(temperature[0]), float(temperature[1])
    if n == 1:
        return [low]
    # Rounded: the temperature is part of each member's key, and must be the same number in every run.
    return [round(low + (high - low) * i / (n - 1), 6) for i in range(n)]


def variation_prompt(task: str, prompt: str) -> str:
    """One prompt variation applied to the task: `{task}` in the variation is replaced by the task;
    a variation without it is an instruction, followed by a blank line and the task."""
    if not isinstance(task, str) or not isinstance(prompt, str):
        raise JudgeError("generate_variations() takes the task and each prompt variation as a str")
    if TASK_PLACEHOLDER in prompt:
        return prompt.replace(TASK_PLACEHOLDER, task)
    return f"{prompt}\n\n{task}"


# -- the bound callable (the fixture): each form plans its generations and runs them down the pipeline --


class Generate:
    """`generate` and friends bound to one test's runtime and verdict file (the `generate` fixture).

    Call it as `generate(prompt, ...)`; `generate.batch(...)`, `generate.variations(...)` and
    `await generate.agenerate(...)` are the other forms.
    """

    def __init__(self, runtime: JudgeRuntime | None = None, context: TestContext | None = None) -> None:
        self._runtime = runtime
        self._context = context

    def _bound(self) -> tuple[JudgeRuntime, TestContext | None]:
        if self._runtime is not None:
            return self._runtime, self._context
        runtime = active() or standalone_runtime()
        return runtime, runtime.current

    @user_facing
    def __call__(
        self,
        prompt: str,
        *,
        model: str | None = None,
        system: str | None = None,
        temperature: float | None = None,
        **params: Any,
    ) -> str:
        """The model's reply to `prompt` (recorded; see `generate`)."""
        __tracebackhide__ = True
        return self._run_sync(_single(prompt, system, temperature, params), model)[0]

    @user_facing
    async def agenerate(
        self,
        prompt: str,
        *,
        model: str | None = None,
        system: str | None = None,
        temperature: float | None = None,
        **params: Any,
    ) -> str:
        """`generate`, awaitable: the live call is awaited, so the caller's event loop keeps running."""
        __tracebackhide__ = True
        runtime, context = self._bound()
        plan = plan_generations(runtime, context, model, _single(prompt, system, temperature, params))
        return (await arun_generations(plan, runtime))[0]

    @user_facing
    def batch(
        self,
        prompt: str,
        n: int = 5,
        temperature: float | tuple[float, float] = (0.5, 0.9),
        *,
        model: str | None = None,
        system: str | None = None,
        **params: Any,
    ) -> list[str]:
        """`n` replies to `prompt`, the temperatures spread over `temperature`; each recorded under its index."""
        __tracebackhide__ = True
        temperatures = spread_temperatures(n, temperature)
        return self._run_sync(
            lambda m, base: [
                build(prompt, index=i, **_args(m, system, t, params, base)) for i, t in enumerate(temperatures)
            ],
            model,
        )

    @user_facing
    def variations(
        self,
        task: str,
        prompts: Sequence[str],
        *,
        model: str | None = None,
        system: str | None = None,
        temperature: float | None = None,
        **params: Any,
    ) -> list[str]:
        """One reply per prompt variation, in order (see `variation_prompt` for how task and variation combine)."""
        __tracebackhide__ = True
        if isinstance(prompts, str) or not prompts:
            raise JudgeError("generate_variations() takes prompts=[...], a non-empty list of prompt variations")
        texts = [variation_prompt(task, p) for p in prompts]
        return self._run_sync(
            lambda m, base: [build(text, **_args(m, system, temperature, params, base)) for text in texts], model
        )

    def _run_sync(self, make: Callable[[str, str | None], list[Generation]], model: str | None) -> list[str]:
        runtime, context = self._bound()
        return run_generations(plan_generations(runtime, context, model, make), runtime)


def _single(
    prompt: str, system: str | None, temperature: float | None, params: Mapping[str, Any]
) -> Callable[[str, str | None], list[Generation]]:
    return lambda model, base: [build(prompt, **_args(model, system, temperature, params, base))]


def _args(
    model: str, system: str | None, temperature: float | None, params: Mapping[str, Any], api_base: str | None
) -> dict[str, Any]:
    return {"model": model, "system": system, "temperature": temperature, "params": params, "api_base": api_base}


# -- the public functions: bound to the running test ---------------------------------------------


_UNBOUND = Generate()


@user_facing
def generate(
    prompt: str,
    *,
    model: str | None = None,
    system: str | None = None,
    temperature: float | None = None,
    **params: Any,
) -> str:
    """The reply of the model under test to `prompt`, recorded in the test's verdict file.

    `model` defaults to `--generate-model`; `system` adds a system message; `temperature` (None:
    the model's default) and any other `params` (max_tokens, seed, ...) are sent and keyed.
    Transport parameters (api_key, api_base, timeout, headers) are sent and never keyed or stored.
    Modes as for verdicts: auto reuses, replay never calls out, refresh asks again, live stores nothing.
    """
    __tracebackhide__ = True
    return _UNBOUND(prompt, model=model, system=system, temperature=temperature, **params)


@user_facing
async def agenerate(
    prompt: str,
    *,
    model: str | None = None,
    system: str | None = None,
    temperature: float | None = None,
    **params: Any,
) -> str:
    """`generate`, awaitable from an async test."""
    __tracebackhide__ = True
    return await _UNBOUND.agenerate(prompt, model=model, system=system, temperature=temperature, **params)


@user_facing
def generate_batch(
    prompt: str,
    n: int = 5,
    temperature: float | tuple[float, float] = (0.5, 0.9),
    *,
    model: str | None = None,
    system: str | None = None,
    **params: Any,
) -> list[str]:
    """`n` replies to `prompt`, temperatures evenly spread over (low, high), ends included.

    Each member is recorded under its own key (its index and temperature), so a replay returns the
    same `n` replies in the same order.  A single number as `temperature` asks `n` times at it.
    """
    __tracebackhide__ = True
    return _UNBOUND.batch(prompt, n, temperature, model=model, system=system, **params)


@user_facing
def generate_variations(
    task: str,
    prompts: Sequence[str],
    *,
    model: str | None = None,
    system: str | None = None,
    temperature: float | None = None,
    **params: Any,
) -> list[str]:
    """One reply per prompt variation, in the order of `prompts`, each recorded.

    A variation holding `{task}` has it replaced by `task` (other braces stay as they are); a
    variation without it is an instruction, sent before the task with a blank line between.
    """
    __tracebackhide__ = True
    return _UNBOUND.variations(task, prompts, model=model, system=system, temperature=temperature, **params)
