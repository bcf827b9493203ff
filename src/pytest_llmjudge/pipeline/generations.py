"""A generation as a recorded call: the model under test asked once, its reply kept as it came.

The stages serve it as they serve a judge call (lookup in the verdict files and the local cache, live
calls under the budget and one lock per key, write back); what differs lives here: the key's inputs
(the model, the messages, the parameters sent, the batch index), the plan (which model recorded it,
in a replay with none configured), the error of a failed call, and that the reply is returned, not
parsed.  Its entries go in the verdict file's own "generations" section.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, JudgeError
from ..keys import KEY_VERSION, judgment_key, messages_sha256
from .plan import Planned, recorded_by

if TYPE_CHECKING:
    from ..backends.protocol import CallRequest
    from ..runtime import JudgeRuntime, TestContext

NO_MODEL = "(no model under test configured)"  # names the generations of a replay that found no recorded model

# The hint when several models under test recorded a replayed generation and none is configured.
SEVERAL_MODELS = (
    "this generation was recorded with several models under test ({models}) and none is configured: pass "
    "model=..., or --generate-model=MODEL"
)


def generation_key(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any], index: int) -> str:
    """The sha256 hex naming one generation: the model, the messages, the parameters sent, the batch index."""
    return judgment_key(
        {"kind": "generation", "model": model, "messages": list(messages), "params": dict(params), "index": index}
    )


@dataclass(frozen=True)
class Generation:
    """One call of the model under test: what it asks, its key, and the request that sends it."""

    model_id: str
    messages: tuple[dict[str, str], ...]
    params: dict[str, Any]  # as keyed and stored: the temperature (where given) and the caller's parameters
    index: int
    key: str
    request: CallRequest

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
        return {
            "model": self.model_id,
            "messages": [dict(m) for m in self.messages],
            "params": dict(self.params),
            "index": self.index,
            "key_version": KEY_VERSION,
        }


@dataclass(slots=True, kw_only=True)
class GenerationPlan(Planned[Generation]):
    """The generations of one call of `generate` (or a batch), with where they are stored."""

    what = "generation"


def plan_generations(
    runtime: JudgeRuntime,
    context: TestContext | None,
    model: str | None,
    make: Callable[[str, str | None], list[Generation]],
) -> GenerationPlan:
    """The generations `make(model, api_base)` asks for, of `model`, else --generate-model, else (a
    replay) the model they were recorded with."""
    from ..backends.litellm import LiteLLMBackend

    settings = runtime.settings
    verdict_file = runtime.verdict_file_for(context)
    base = settings.generate_api_base
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise JudgeError(f"generate() model must name a model, got {model!r}")
    chosen = model or settings.generate_model
    if chosen is not None:
        generations: Sequence[Generation] = make(chosen, base)
    elif settings.mode != "replay":
        raise JudgeError(
            "no model under test: pass model=... to generate(), or --generate-model=MODEL (generate_model in "
            "the ini file, or LLMJUDGE_GENERATE_MODEL). The model is part of every generation's key."
        )
    else:  # replay: the model they were recorded with, whose generations were keyed in finding it
        found = recorded_by(
            runtime, context, verdict_file, "generation", lambda m: make(m, base), several=SEVERAL_MODELS
        )
        generations = found[1] if found is not None else make(NO_MODEL, base)
    return GenerationPlan(
        calls=tuple(generations),
        settings=settings,
        backend=LiteLLMBackend(),
        verdict_file=verdict_file,
        context=context,
    )


def failed(exc: BackendError, model: str) -> BackendError:
    """The backend's error, said of the model under test (its hints name the judge's options)."""
    text = str(exc).replace("--judge-model", "--generate-model").replace("--judge-api-base", "--generate-api-base")
    text = text.replace("the judge model", "the model under test").replace("this judge", "this model")
    return BackendError(
        f"generate() could not get a reply from {model}: {text}",
        retryable=exc.retryable,
        status=exc.status,
        retry_after=exc.retry_after,
    )
