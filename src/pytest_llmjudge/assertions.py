"""`assert_judged`, `assert_judged_async` and `assert_better`: judged assertions that need no fixture."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .judge import Judge, passed_or_raise, user_facing
from .pipeline.plan import Options
from .runtime import active, standalone_runtime
from .verdict import Verdict

if TYPE_CHECKING:
    from .rubrics.pairwise import Comparison, Pairwise

__all__ = ["assert_better", "assert_judged", "assert_judged_async"]


def _current_judge() -> Judge:
    """A Judge bound to the running test (or, outside pytest, to the process's standalone runtime)."""
    runtime = active() or standalone_runtime()
    return Judge(runtime=runtime, context=runtime.current)


@user_facing
def assert_judged(
    output: Any,
    criteria: str,
    *,
    input: Any = None,
    expected: Any = None,
    threshold: float | None = None,
    model: str | Sequence[str] | None = None,
    rubric: Any = None,
    samples: int | None = None,
    aggregate: str | None = None,
    band: float | None = None,
    context: str | Sequence[str] | None = None,
) -> Verdict:
    """Judge `output` against `criteria`; raise JudgmentFailed (with the judge's reasoning) under the threshold.

    Works anywhere inside a test, no fixture needed.  Returns the Verdict when it passes.
    With `samples` > 1 and `band`, a combined score within `band` of the threshold on which the
    samples disagree fails as "judge undecided" rather than passing or failing by chance.
    `context`: what a RAG application retrieved for its answer (a string, or a list of passages in
    rank order), shown to the judge as data; the RAG rubrics (`Faithfulness()`, ...) judge against it.
    """
    __tracebackhide__ = True
    options = Options(input, expected, threshold, model, rubric, samples, aggregate, band, context)
    return passed_or_raise(_current_judge()._judged(output, criteria, options, asserts=True))


@user_facing
async def assert_judged_async(
    output: Any,
    criteria: str,
    *,
    input: Any = None,
    expected: Any = None,
    threshold: float | None = None,
    model: str | Sequence[str] | None = None,
    rubric: Any = None,
    samples: int | None = None,
    aggregate: str | None = None,
    band: float | None = None,
    context: str | Sequence[str] | None = None,
) -> Verdict:
    """`assert_judged`, awaitable; safe inside a running event loop."""
    __tracebackhide__ = True
    options = Options(input, expected, threshold, model, rubric, samples, aggregate, band, context)
    return passed_or_raise(await _current_judge()._ajudged(output, criteria, options, asserts=True))


@user_facing
def assert_better(
    candidate: Any,
    baseline: Any,
    criteria: str,
    *,
    allow_tie: bool = True,
    input: Any = None,
    model: str | Sequence[str] | None = None,
    samples: int | None = None,
    aggregate: str | None = None,
    rubric: Pairwise | None = None,
) -> Comparison:
    """Judge `candidate` against `baseline` in both orders; raise JudgmentFailed (with both orders'
    reasoning) unless the candidate wins, or ties when `allow_tie`.  Orders that disagree are a tie.
    `rubric`: a `Pairwise` of your own (your comparison prompt, and what it asks the judge for).
    """
    __tracebackhide__ = True
    return _current_judge().assert_better(
        candidate,
        baseline,
        criteria,
        allow_tie=allow_tie,
        input=input,
        model=model,
        samples=samples,
        aggregate=aggregate,
        rubric=rubric,
    )
