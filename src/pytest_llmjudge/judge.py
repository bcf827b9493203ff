"""The `Judge` facade: the public way to judge, delegating every stage to the pipeline.

A Judge binds the session's runtime, the running test and any overrides; each method plans a
judgment and runs it (see the pipeline package for the stages).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from .errors import JudgeError, JudgmentFailed
from .options import MARKER_KEYS
from .pipeline.plan import Options, Plan
from .pipeline.plan import plan as plan_judgment
from .pipeline.run import arun, run, run_many
from .runtime import JudgeRuntime, TestContext, active, standalone_runtime
from .verdict import Sample, StoredScoreWarning, Verdict

if TYPE_CHECKING:
    from .rubrics.pairwise import Comparison, Pairwise

__all__ = ["Judge", "Sample", "StoredScoreWarning", "Verdict", "user_facing"]

P = ParamSpec("P")
R = TypeVar("R")


def user_facing(fn: Callable[P, R]) -> Callable[P, R]:
    """Show a plugin error where the test called us, not as a traceback into the plugin."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
            __tracebackhide__ = True
            try:
                return await fn(*args, **kwargs)
            except (JudgeError, JudgmentFailed) as exc:
                raise exc.with_traceback(None) from None

        return cast("Callable[P, R]", async_wrapper)  # R is the coroutine function's Coroutine[...]

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True
        try:
            return fn(*args, **kwargs)
        except (JudgeError, JudgmentFailed) as exc:
            raise exc.with_traceback(None) from None

    return wrapper


class Judge:
    """Judges outputs against criteria with the session's settings (or overrides).

    Inside a test, use the `judge` fixture or `assert_judged`; both bind to the running test.
    `score` never raises on a low score; `assert_judged` does, with the judge's reasoning.
    """

    def __init__(
        self,
        *,
        runtime: JudgeRuntime | None = None,
        context: TestContext | None = None,
        backend: Any = None,
        **overrides: Any,
    ) -> None:
        self._runtime = runtime or active() or standalone_runtime()
        self._context = context if context is not None else (self._runtime.current if runtime is None else None)
        self._backend = backend
        unknown = set(overrides) - set(MARKER_KEYS) if overrides else None
        if unknown:
            raise JudgeError(
                f"Judge() got unknown setting(s) {', '.join(sorted(unknown))}; known: {', '.join(MARKER_KEYS)}"
            )
        self._overrides = overrides

    @user_facing
    def score(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """Judge `output` against `criteria`; return the Verdict (a low score does not raise)."""
        return self._judged(output, criteria, Options(**options))

    @user_facing
    async def ascore(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """`score`, awaitable: safe inside a running event loop (the calls run on a background loop)."""
        return await self._ajudged(output, criteria, Options(**options))

    @user_facing
    def assert_judged(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """Judge and fail the test (JudgmentFailed) when the score is under the threshold."""
        __tracebackhide__ = True
        return passed_or_raise(self._judged(output, criteria, Options(**options), asserts=True))

    def _judged(self, output: Any, criteria: Any, options: Options, *, asserts: bool = False) -> Verdict:
        """One judgment, its options packed once (the module-level `assert_judged` comes here directly)."""
        return run(self._checked_plan(output, criteria, options, asserts=asserts), self._runtime)

    async def _ajudged(self, output: Any, criteria: Any, options: Options, *, asserts: bool = False) -> Verdict:
        """`judged`, awaitable (`assert_judged_async` comes here directly)."""
        return await arun(self._checked_plan(output, criteria, options, asserts=asserts), self._runtime)

    @user_facing
    async def aassert_judged(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """`assert_judged`, awaitable."""
        __tracebackhide__ = True
        return passed_or_raise(await self._ajudged(output, criteria, Options(**options), asserts=True))

    @user_facing
    def compare(
        self,
        candidate: Any,
        baseline: Any,
        criteria: str,
        *,
        input: Any = None,
        model: str | Sequence[str] | None = None,
        samples: int | None = None,
        aggregate: str | None = None,
        rubric: Pairwise | None = None,
    ) -> Comparison:
        """Judge which of two outputs better meets `criteria`, asking in both orders (position bias).

        Each order is its own call and key; orders that disagree make a tie.  Returns a
        `Comparison` (winner "candidate", "baseline" or "tie", both orders' reasoning and strength, keys).
        `rubric`: a `Pairwise` of your own (your comparison prompt, and what it asks the judge for).
        """
        from .rubrics.pairwise import comparison_from  # loaded by the first comparison, not on import

        plan = self._pair_plan(
            candidate, baseline, criteria, input=input, model=model, samples=samples, aggregate=aggregate, rubric=rubric
        )
        return comparison_from(run(plan, self._runtime))

    @user_facing
    async def acompare(
        self,
        candidate: Any,
        baseline: Any,
        criteria: str,
        *,
        input: Any = None,
        model: str | Sequence[str] | None = None,
        samples: int | None = None,
        aggregate: str | None = None,
        rubric: Pairwise | None = None,
    ) -> Comparison:
        """`compare`, awaitable: the calls are awaited, so the caller's event loop keeps running."""
        from .rubrics.pairwise import comparison_from

        plan = self._pair_plan(
            candidate, baseline, criteria, input=input, model=model, samples=samples, aggregate=aggregate, rubric=rubric
        )
        return comparison_from(await arun(plan, self._runtime))

    @user_facing
    def assert_better(
        self, candidate: Any, baseline: Any, criteria: str, *, allow_tie: bool = True, **options: Any
    ) -> Comparison:
        """`compare` (with its arguments, `rubric` included), and fail (JudgmentFailed, with both orders'
        reasoning) unless the candidate wins (or ties, with `allow_tie=True`)."""
        __tracebackhide__ = True
        from .rubrics.pairwise import comparison_from

        plan = self._pair_plan(candidate, baseline, criteria, strict=not allow_tie, **options)
        return won_or_raise(comparison_from(run(plan, self._runtime)), allow_tie)

    @user_facing
    def score_many(self, cases: Iterable[Mapping[str, Any] | Sequence[Any]]) -> list[Verdict]:
        """Judge several cases concurrently; each is a dict of `score` arguments or an (output, criteria) pair.

        Returns the verdicts in order; if any judgment errs, the first error is raised after all finish.
        """
        plans = [self._prepare(**c) if isinstance(c, Mapping) else self._prepare(*c) for c in cases]
        return run_many(plans, self._runtime)

    def _prepare(self, output: Any, criteria: Any, **options: Any) -> Plan:
        """`score`'s plan, from its arguments (`score_many`)."""
        return self._checked_plan(output, criteria, Options(**options), asserts=False)

    def _checked_plan(self, output: Any, criteria: Any, options: Options, *, asserts: bool) -> Plan:
        """The plan, after checking that a library criterion got the input or reference it needs."""
        _check_requires(criteria, input=options.input, expected=options.expected, context=options.context)
        return self._plan(output, criteria, options, asserts=asserts)

    def _pair_plan(
        self,
        candidate: Any,
        baseline: Any,
        criteria: Any,
        *,
        strict: bool = False,
        rubric: Pairwise | None = None,
        **options: Any,
    ) -> Plan:
        from .rubrics.pairwise import Pairwise

        # The verdict's threshold encodes what passes: not worse (0.5), or strictly better (just above).
        threshold = math.nextafter(0.5, 1.0) if strict else 0.5
        if baseline is None:
            raise JudgeError("baseline is None: pass the output to compare the candidate against")
        if rubric is not None and not isinstance(rubric, Pairwise):
            raise JudgeError(f"rubric must be a Pairwise (your comparison prompt), got {rubric!r}")
        return self._plan(
            candidate,
            criteria,
            Options(expected=baseline, rubric=rubric or Pairwise(), threshold=threshold, **options),
        )

    def _plan(self, output: Any, criteria: Any, options: Options, *, asserts: bool = True) -> Plan:
        return plan_judgment(
            output,
            criteria,
            options,
            runtime=self._runtime,
            context=self._context,
            backend=self._backend,
            overrides=self._overrides,
            asserts=asserts,
        )


def passed_or_raise(verdict: Verdict) -> Verdict:
    """The verdict, if it passed; else JudgmentFailed with its failure message."""
    __tracebackhide__ = True
    if not verdict.passed:
        raise JudgmentFailed(verdict.failure_message(), verdict)
    return verdict


def won_or_raise(comparison: Comparison, allow_tie: bool) -> Comparison:
    """The comparison, if the candidate won (or tied, with `allow_tie`); else JudgmentFailed."""
    __tracebackhide__ = True
    if comparison.winner == "candidate" or (allow_tie and comparison.winner == "tie"):
        return comparison
    raise JudgmentFailed(comparison.failure_message(allow_tie), comparison.verdict, comparison=comparison)


def _check_requires(criteria: Any, **given: Any) -> None:
    """A library criterion (see criteria.py) names the arguments it cannot be judged without."""
    for name in getattr(criteria, "requires", ()):
        if given.get(name) is None:
            raise JudgeError(
                f"criteria {getattr(criteria, 'name', '?')} needs {name}=... to judge against; pass it to assert_judged"
            )
