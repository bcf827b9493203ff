"""A generation as a recorded call: the model under test asked once, its reply kept as it came.

The stages serve it as they serve a judge call (lookup in the verdict files and the local cache, live
calls under the budget and one lock per key, write back); what differs lives here: the key's inputs
(the model, the messages, the parameters sent, the batch index), the plan (which model recorded it,
in a replay with none configured), the error of a failed call, and that the reply is returned, not
parsed.  Its entries go in the verdict file's own "generations" section.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, JudgeError
from ..keys import KEY_VERSION, judgment_key, messages_sha256
from .plan import Planned, stored_elsewhere
from .recorded import recorded_by

if TYPE_CHECKING:
    from ..backends.protocol import Backend, CallRequest
    from ..runtime import JudgeRuntime, TestContext

NO_MODEL = "(no model under test configured)"  # names the generations of a replay that found no recorded model

# The hint when several models under test recorded a replayed generation and none is configured.
SEVERAL_MODELS = (
    "this generation was recorded with several models under test ({models}) and none is configured: pass "
    "model=..., or --generate-model=MODEL"
)


def generation_key(
    model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any], index: int, run: int = 0
) -> str:
    """The sha256 hex naming one generation: the model, the messages, the parameters sent, the batch index,
    and the run of a repeated test (only when it is not 0: a key made without it never changes)."""
    fields: dict[str, Any] = {
        "kind": "generation",
        "model": model,
        "messages": list(messages),
        "params": dict(params),
        "index": index,
    }
    if run:
        fields["run"] = run
    return judgment_key(fields)


@dataclass(frozen=True)
class Generation:
    """One call of the model under test: what it asks, its key, and the request that sends it."""

    model_id: str
    messages: tuple[dict[str, str], ...]
    params: dict[str, Any]  # as keyed and stored: the temperature (where given) and the caller's parameters
    index: int
    key: str
    request: CallRequest
    # The generation whose conversation this one continues (a simulated user's earlier turn): its key, and how
    # many of these messages were its own.  Stored as what it adds (see `verdict_file`); never keyed.
    follows: tuple[str, int] | None = None
    run: int = 0  # which run of a repeated test asked (see `suites`): part of the key when not 0

    def in_run(self, run: int) -> Generation:
        """This generation as run `run` of a repeated test asks it: its own key, its own recorded reply."""
        if run == self.run:
            return self
        key = generation_key(self.model_id, self.messages, self.params, self.index, run)
        return dataclasses.replace(self, key=key, run=run)

    @property
    def sample(self) -> int:
        """Which draw of the same request (a batch member): what a judge call's sample is to a verdict."""
        return self.index

    @property
    def messages_sha256(self) -> str:
        """What a stored entry that names its messages' hash is checked against (see `check_entry`)."""
        return messages_sha256(self.messages)

    def record(self) -> dict[str, Any]:
        """What the verdict file says of the generation beside its reply (and what a miss compares)."""
        messages = [dict(m) for m in self.messages]
        record: dict[str, Any] = {
            "model": self.model_id,
            "messages": messages,
            "params": dict(self.params),
            "index": self.index,
            "key_version": KEY_VERSION,
        }
        if self.follows is not None:
            key, earlier = self.follows
            record |= {"follows": key, "added": messages[earlier:]}
        if self.run:
            record["run"] = self.run
        return record


@dataclass(frozen=True)
class Target:
    """Whom a kind of generation asks: `generate()` the model under test; the simulated user of
    `simulate()` the judge.  Its model when the call names none, where that is served and through
    which backend; what an error says when there is no model, or several recorded one."""

    caller: str  # what asked, as an error names it: "generate()"
    default: str | None
    api_base: str | None
    backend: Backend
    no_model: str
    several: str
    judge_options: bool = False  # configured by the judge's options: a failure's hints name them as they are
    unconfigured: tuple[str, ...] = ("replay",)  # the modes in which no model means: replay what was recorded


def model_under_test(runtime: JudgeRuntime) -> Target:
    """`generate()`'s target: `model=`, else --generate-model, else (a replay) the model that recorded it."""
    from ..backends.litellm import LiteLLMBackend

    settings = runtime.settings
    return Target(
        "generate()",
        settings.generate_model,
        settings.generate_api_base,
        LiteLLMBackend(),
        "no model under test: pass model=... to generate(), or --generate-model=MODEL (generate_model in "
        "the ini file, or LLMJUDGE_GENERATE_MODEL). The model is part of every generation's key.",
        SEVERAL_MODELS,
    )


@dataclass(slots=True, kw_only=True)
class GenerationPlan(Planned[Generation]):
    """The generations of one call of `generate` (or a batch, or a simulated user's turn), with where they
    are stored and whom they ask."""

    what = "generation"

    target: Target


def plan_generations(
    runtime: JudgeRuntime,
    context: TestContext | None,
    model: str | None,
    make: Callable[[str, str | None], list[Generation]],
    target: Target | None = None,
) -> GenerationPlan:
    """The generations `make(model, api_base)` asks for, of `model`, else the target's default (the
    model under test unless `target` says otherwise), else (a replay) the model they were recorded with."""
    target = target or model_under_test(runtime)
    settings = runtime.settings
    run = context.run if context is not None else 0
    if run:  # a repeated test's run other than the first asks (and records) its own generations
        make = _in_run(make, run)
    verdict_file = runtime.verdict_file_for(context)
    base = target.api_base
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise JudgeError(f"{target.caller} model must name a model, got {model!r}")
    chosen = model or target.default
    if chosen is not None:
        generations: Sequence[Generation] = make(chosen, base)
    elif settings.mode not in target.unconfigured:
        raise JudgeError(target.no_model)
    else:  # the model they were recorded with, whose generations were keyed in finding it
        index = (lambda: stored_elsewhere(runtime)) if context is not None else None
        found = recorded_by(verdict_file, "generation", lambda m: make(m, base), index=index, several=target.several)
        if found is None and settings.mode != "replay":
            raise JudgeError(target.no_model)  # a miss that must go live
        generations = found[1] if found is not None else make(NO_MODEL, base)
    return GenerationPlan(
        calls=tuple(generations),
        settings=settings,
        backend=target.backend,
        verdict_file=verdict_file,
        context=context,
        target=target,
    )


def _in_run(
    make: Callable[[str, str | None], list[Generation]], run: int
) -> Callable[[str, str | None], list[Generation]]:
    """`make`, its generations keyed for run `run` of a repeated test."""
    return lambda model, api_base: [generation.in_run(run) for generation in make(model, api_base)]


def failed(exc: BackendError, model: str, target: Target) -> BackendError:
    """The backend's error, said of the target (the model under test: its hints name the judge's options)."""
    text = str(exc)
    if not target.judge_options:
        text = text.replace("--judge-model", "--generate-model").replace("--judge-api-base", "--generate-api-base")
        text = text.replace("the judge model", "the model under test").replace("this judge", "this model")
    return BackendError(
        f"{target.caller} could not get a reply from {model}: {text}",
        retryable=exc.retryable,
        status=exc.status,
        retry_after=exc.retry_after,
    )
