"""Recorded generations: the model under test, called through LiteLLM, its replies kept in the verdict file.

`generate(prompt)` asks the model under test (`model=`, else `--generate-model`) and returns its
reply, recorded in the test's verdict file in its own "generations" section (a generation is not a
verdict).  Its key hashes everything that changes the reply: the model, the messages, the
parameters sent and the index of a batch member; never how the call travels (api base, key,
timeout).  The judge's modes apply unchanged: `auto` reuses a stored reply, `replay` never calls out
and a miss fails naming what differs, `refresh` asks again and overwrites, `live` stores nothing.
The same call made twice returns the same recorded reply; `generate_batch` asks for several.

Live calls take the judge's path: the LiteLLM backend, `call_with_retries`, the runtime's
background loop, its concurrency bound and its budget.  So, like the judge's, they are neither
recorded into nor answered from an HTTP cassette: the verdict file is their record.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .backends import CallRequest, LiteLLMBackend, call_with_retries
from .errors import BackendError, JudgeError, StoreError
from .generation_miss import NO_MODEL, generation_miss
from .judge import user_facing
from .keys import KEY_VERSION, judgment_key
from .pipeline.lookup import adopt_from_elsewhere
from .pipeline.plan import stored_elsewhere
from .pipeline.recorded import recorded_model
from .pipeline.unwritten import warn_unwritten
from .runtime import JudgeRuntime, TestContext, active, standalone_runtime

if TYPE_CHECKING:
    from .backends import CallResult
    from .settings import Settings
    from .store import Ledger

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


def generation_key(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any], index: int) -> str:
    """The sha256 hex naming one generation: the model, the messages, the parameters sent, the batch index."""
    return judgment_key(
        {"kind": "generation", "model": model, "messages": list(messages), "params": dict(params), "index": index}
    )


@dataclass(frozen=True)
class Generation:
    """One call of the model under test: what it asks, its key, and the request that sends it."""

    model: str
    messages: tuple[dict[str, str], ...]
    params: dict[str, Any]  # as keyed and stored: the temperature (where given) and the caller's parameters
    index: int
    key: str
    request: CallRequest

    def record(self) -> dict[str, Any]:
        """What the verdict file says of the generation beside its reply (and what a miss compares)."""
        return {
            "model": self.model,
            "messages": [dict(m) for m in self.messages],
            "params": dict(self.params),
            "index": self.index,
            "key_version": KEY_VERSION,
        }


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


# -- the bound callable (the fixture), and the stages: plan, lookup, live calls, finish ----------


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
        make = _single(prompt, system, temperature, params)
        plan = _plan(runtime, context, model, make)
        replies, fresh, missing = lookup(plan)
        if missing:
            fresh.update(await runtime.loop.wrap(call_live(plan, missing)))
        return finish(plan, replies, fresh)[0]

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
        plan = _plan(runtime, context, model, make)
        replies, fresh, missing = lookup(plan)
        if missing:
            fresh.update(runtime.loop.run(call_live(plan, missing)))
        return finish(plan, replies, fresh)


def _single(
    prompt: str, system: str | None, temperature: float | None, params: Mapping[str, Any]
) -> Callable[[str, str | None], list[Generation]]:
    return lambda model, base: [build(prompt, **_args(model, system, temperature, params, base))]


def _args(
    model: str, system: str | None, temperature: float | None, params: Mapping[str, Any], api_base: str | None
) -> dict[str, Any]:
    return {"model": model, "system": system, "temperature": temperature, "params": params, "api_base": api_base}


@dataclass(frozen=True)
class GenerationPlan:
    """The generations of one call of `generate` (or a batch), with where they are stored."""

    generations: tuple[Generation, ...]
    runtime: JudgeRuntime
    context: TestContext | None
    ledger: Ledger | None
    settings: Settings


def _plan(
    runtime: JudgeRuntime,
    context: TestContext | None,
    model: str | None,
    make: Callable[[str, str | None], list[Generation]],
) -> GenerationPlan:
    settings = runtime.settings
    ledger = runtime.ledger_for(context)
    base = settings.generate_api_base
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise JudgeError(f"generate() model must name a model, got {model!r}")
    chosen = model or settings.generate_model
    if chosen is None:
        if settings.mode != "replay":
            raise JudgeError(
                "no model under test: pass model=... to generate(), or --generate-model=MODEL (generate_model in "
                "the ini file, or LLMJUDGE_GENERATE_MODEL). The model is part of every generation's key."
            )
        chosen = replayed_model(runtime, ledger, lambda m: make(m, base))
    return GenerationPlan(tuple(make(chosen, base)), runtime, context, ledger, settings)


# The hint when several models under test recorded a replayed generation and none is configured.
SEVERAL_MODELS = (
    "this generation was recorded with several models under test ({models}) and none is configured: pass "
    "model=..., or --generate-model=MODEL"
)


def replayed_model(runtime: JudgeRuntime, ledger: Ledger | None, calls_for: Callable[[str], list[Generation]]) -> str:
    """Replay with no model under test configured: the model these generations were recorded with,
    from the test's own file, else the rest of the store.  None found: a placeholder that makes the
    replay miss."""
    own = ledger.generations() if ledger is not None else {}
    found = recorded_model(own, calls_for, several=SEVERAL_MODELS)
    if found is None and ledger is not None:  # recorded elsewhere (a session fixture, a renamed test)?
        index = stored_elsewhere(runtime)  # walks the store: only when the test's own file has no match
        models = {s.key: s.entry for s in index.generations_by_model().values()}
        found = recorded_model(
            models, calls_for, lambda key: index.find_generation(key) is not None, several=SEVERAL_MODELS
        )
    return NO_MODEL if found is None else found[0]


def lookup(plan: GenerationPlan) -> tuple[dict[str, str], dict[str, str], list[Generation]]:
    """The replies stored in the verdict files, the ones the local cache held (to be written), and the
    generations that must go live (replay: raise on a miss), each by key."""
    mode = plan.settings.mode
    ledger = plan.ledger if mode in ("auto", "replay") else None
    replies: dict[str, str] = {}
    cached: dict[str, str] = {}
    missing: dict[str, Generation] = {}
    for generation in plan.generations:
        key = generation.key
        if key in replies or key in cached or key in missing:
            continue
        entry = ledger.generation(key) if ledger is not None else None
        if entry is None and ledger is not None:
            entry = adopt_from_elsewhere(plan.runtime, ledger, key, copy=mode == "auto", what="generation")
        if entry is not None:
            replies[key] = entry["reply"]
            continue
        if mode == "replay":
            raise generation_miss(
                generation.key,
                generation.record(),
                test=plan.context.nodeid if plan.context is not None else None,
                stored=ledger.generations() if ledger is not None else None,
                ledger_path=ledger.path if ledger is not None else None,
                settings=plan.settings,
            )
        cache = plan.runtime.cache if mode == "auto" else None
        value = cache.get(key) if cache is not None else None
        if value is not None:
            cached[key] = value["reply"]
            continue
        missing[key] = generation
    return replies, cached, list(missing.values())


async def call_live(plan: GenerationPlan, missing: Sequence[Generation]) -> dict[str, str]:
    """Ask the model under test for every missing generation at once; the first error is raised after all end."""
    results = await asyncio.gather(*(_call_one(plan, g) for g in missing), return_exceptions=True)
    replies: dict[str, str] = {}
    for generation, result in zip(missing, results, strict=False):
        if isinstance(result, BaseException):
            raise result
        replies[generation.key] = result.text
    return replies


async def _call_one(plan: GenerationPlan, generation: Generation) -> CallResult:
    """One live call on the background loop, under the process's concurrency bound and budget."""
    runtime, settings = plan.runtime, plan.settings
    deadline = time.monotonic() + settings.timeout
    async with runtime.key_lock(generation.key), runtime.semaphore():
        runtime.check_budget()
        try:
            result = await call_with_retries(
                LiteLLMBackend(),
                generation.request,
                retries=settings.retries,
                timeout=max(0.001, deadline - time.monotonic()),
                limit_s=settings.timeout,
            )
        except BackendError as exc:
            raise _for_generation(exc, generation.model) from None
        runtime.spend(result.cost_usd)
        return result


def _for_generation(exc: BackendError, model: str) -> BackendError:
    """The backend's error, said of the model under test (its hints name the judge's options)."""
    text = str(exc).replace("--judge-model", "--generate-model").replace("--judge-api-base", "--generate-api-base")
    text = text.replace("the judge model", "the model under test").replace("this judge", "this model")
    return BackendError(
        f"generate() could not get a reply from {model}: {text}",
        retryable=exc.retryable,
        status=exc.status,
        retry_after=exc.retry_after,
    )


def finish(plan: GenerationPlan, replies: Mapping[str, str], fresh: Mapping[str, str]) -> list[str]:
    """Store the replies not read from a verdict file (auto, refresh: live mode stores nothing) and
    return every reply in the order the generations were asked for."""
    if plan.settings.mode in ("auto", "refresh") and fresh:
        cache = plan.runtime.cache
        ledger = plan.ledger
        unwritten: tuple[str, BaseException] | None = None
        for generation in plan.generations:
            text = fresh.get(generation.key)
            if text is None:
                continue
            if cache is not None:
                cache.set(generation.key, {"reply": text, "model": generation.model})
            if ledger is not None:
                try:
                    ledger.put_generation(generation.key, {**generation.record(), "reply": text})
                except (StoreError, OSError) as exc:
                    unwritten = unwritten or (generation.key, exc)
        if unwritten is not None and ledger is not None:
            warn_unwritten(ledger.path, *unwritten, kept=cache is not None, what="generation", stacklevel=4)
    every = {**fresh, **replies}
    return [every[g.key] for g in plan.generations]


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
