"""Judging the pairs: each through the `Pairwise` judgment a test's `judge.compare` makes, recorded like any verdict.

A pair's two orders are the two calls of its comparison, with the keys `compare` gives them; each order is
judged as its own judgment (the comparison's plan with that one call), so that a reply holding no verdict
is that order's alone: counted as unreadable, and kept on record in the qualification file's "unreadable"
section (auto and refresh modes), so a replay counts it again without a call.  Every order of every pair is
in flight at once, bounded by the run's limits (`--judge-concurrency`, the limiter, the budget) on the
runtime's background loop.  Each subset has its qualification file, `<store>/qualification/<subset>.json`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import JudgeError, VerdictParseError, first_line
from ..rubrics.base import Reply, details_of
from .figures import Judged, Report, Thresholds, compute, shortfalls
from .pairs import Pair, QualificationError, Subset

if TYPE_CHECKING:
    from ..judge import Judge
    from ..pipeline.plan import Call, Plan
    from ..rubrics.pairwise import Pairwise
    from ..runtime import JudgeRuntime, TestContext

__all__ = ["COMMAND", "CRITERIA", "PairError", "Tally", "judge_pairs", "judges_for", "qualification_file", "qualify"]

COMMAND = "qualification"  # names the folder of the qualification files in the store
# What the judge is asked to compare by, unless told otherwise (--criteria): following the instruction first,
# as LLMBar's labels decide, then what MT-Bench's experts weighed.
CRITERIA = (
    "Which response follows the instruction in the input better: it does what was asked, honestly, "
    "precisely and completely, no more and no less. Only when both follow it equally well, prefer the more "
    "helpful, accurate and harmless response."
)
_PICK = {"candidate": "1", "baseline": "2", "tie": "tie"}  # output_1 is the comparison's candidate
_SHOWN_FIRST = {"candidate-first": "output 1 shown first", "baseline-first": "output 2 shown first"}


def qualification_file(rootdir: Path, store_root: Path | None, subset: str) -> Path:
    """Where a subset's replies are recorded: `qualification/<subset>.json` in the store."""
    from ..standalone import command_file

    return command_file(COMMAND, subset, rootdir, store_root)


class PairError(QualificationError):
    """One order of one pair could not be judged (a replay miss, an unreachable judge): `.cause` says why,
    and `kind` is its kind (a replay miss is "missing")."""

    def __init__(self, message: str, cause: JudgeError) -> None:
        super().__init__(message)
        self.cause = cause
        self.kind = cause.kind


@dataclass
class Tally:
    """How the answers were had: by source ("live", "cached", "replayed"), who gave them (the judge ids of
    their calls: the configured model, or the one recorded), and the seconds the judging took."""

    sources: Counter[str] = dataclasses.field(default_factory=Counter)
    models: set[str] = dataclasses.field(default_factory=set)
    seconds: float = 0.0


def judges_for(
    runtime: JudgeRuntime, *, model: str | None = None, like: TestContext | None = None
) -> Callable[[Subset], Judge]:
    """A `Judge` per subset, recording into and replaying from its qualification file; `model` overrides the
    configured judge; `like` is the running test whose marker and `judge_backend` the judgments take."""
    from ..judge import Judge
    from ..runtime import TestContext

    def judge_for(subset: Subset) -> Judge:
        nodeid = f"{COMMAND}::{subset.name}"
        context = TestContext(nodeid, None, subset.name, marker=dict(like.marker) if like is not None else None)
        if like is not None:
            context.backend = like.judge_backend()
        path = qualification_file(runtime.rootdir, runtime.store_root, subset.name)
        context.verdict_file = runtime.verdict_file_at(path, nodeid)
        return Judge(runtime=runtime, context=context, **({"model": model} if model is not None else {}))

    return judge_for


def qualify(
    runtime: JudgeRuntime,
    subsets: Sequence[Subset],
    judge_for: Callable[[Subset], Judge],
    thresholds: Thresholds,
    *,
    criteria: str | None = None,
    rubric: Pairwise | None = None,
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Judge `subsets` (see `judge_pairs`) and report the figures against `thresholds`."""
    criteria = CRITERIA if criteria is None else criteria
    if not criteria.strip():
        raise QualificationError("the criteria are empty: give the judge something to compare by")
    judged, tally = judge_pairs(runtime, subsets, judge_for, criteria=criteria, rubric=rubric, progress=progress)
    figures = compute({s.name: (s.source, judged[s.name]) for s in subsets})
    if rubric is None or rubric.template is None:
        prompt = "Pairwise with its default prompt"
    else:
        prompt = f"Pairwise with your template (answer: {rubric.answer})"
    about = {
        "judge": {"model": ", ".join(sorted(tally.models)), "prompt": prompt, "criteria": criteria},
        "run": {
            "quick": quick,
            "pairs": figures.overall.n,
            "data": [s.source for s in subsets if not s.bundled],
            "answers": dict(sorted(tally.sources.items())),
            "seconds": round(tally.seconds, 3),
        },
    }
    return Report(figures, thresholds, shortfalls(figures, thresholds), about)


def judge_pairs(
    runtime: JudgeRuntime,
    subsets: Sequence[Subset],
    judge_for: Callable[[Subset], Judge],
    *,
    criteria: str = CRITERIA,
    rubric: Pairwise | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, list[Judged]], Tally]:
    """Judge every pair of `subsets` in both orders with `judge_for(subset)`; the answers by subset.

    `progress` is called once per answer with its source.  Raises `PairError` (the first, once every order
    has finished, so everything judged is recorded) when an order cannot be judged, and
    `QualificationError` when the judge is not one model with one sample.
    """
    from ..rubrics.pairwise import Pairwise

    rubric = rubric if rubric is not None else Pairwise()
    plans: list[tuple[Pair, Plan]] = []
    for subset in subsets:
        judge = judge_for(subset)
        for pair in subset.pairs:
            # The plan `judge.compare(output_1, output_2, criteria, input=...)` runs: output 1 is its candidate.
            plan = judge._pair_plan(pair.output_1, pair.output_2, criteria, input=pair.input, rubric=rubric)
            if len(plan.calls) != 2:
                raise QualificationError(_one_judge(plan))
            plans.append((pair, plan))
    tally = Tally()
    began = time.monotonic()
    files = {id(plan.verdict_file): plan.verdict_file for _, plan in plans if plan.verdict_file is not None}
    with contextlib.ExitStack() as held:
        for verdict_file in files.values():  # written a few times, not once per answer; on disk when this ends
            held.enter_context(verdict_file.held())
        outcomes = _run(_judge_all(runtime, plans, tally, progress))
    tally.seconds = time.monotonic() - began
    picks: dict[str, str | None] = {}  # by the order's key
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome  # the first, after every order finished: what was judged is recorded
        picks[outcome[0]] = outcome[1]
    judged: dict[str, list[Judged]] = {subset.name: [] for subset in subsets}
    for pair, plan in plans:
        by_order = {call.prompt.name: picks[call.key] for call in plan.calls}
        judged[pair.subset].append(Judged(pair, by_order["candidate-first"], by_order["baseline-first"]))
    return judged, tally


def _said(exc: JudgeError) -> str:
    """An error in one line: its first, and where a replay missed, what the nearest recording differs in (a changed
    judge or prompt)."""
    nearest = [line.strip() for line in str(exc).splitlines() if line.strip().startswith("nearest stored:")]
    return "; ".join([first_line(exc), *nearest])


def _one_judge(plan: Plan) -> str:
    settings = plan.settings
    if settings.model and len(settings.model) > 1:
        return (
            f"a qualification judges with one model, and --judge-model names {len(settings.model)} "
            f"({', '.join(settings.model)}): qualify each on its own"
        )
    return (
        f"a qualification asks each order once, and --judge-samples is {settings.samples}: "
        "pass --judge-samples=1 (each answer of a sampled judge is one of its samples)"
    )


Outcome = tuple[str, str | None] | BaseException  # an order's key and its pick, or why it has none


async def _judge_all(
    runtime: JudgeRuntime,
    plans: Sequence[tuple[Pair, Plan]],
    tally: Tally,
    progress: Callable[[str], None] | None,
) -> list[Outcome]:
    async def one(pair: Pair, plan: Plan, call: Call) -> Outcome:
        try:
            pick, source = await _answer(runtime, plan, call)
        except JudgeError as exc:
            where = f"{pair.subset} pair {pair.index} ({_SHOWN_FIRST.get(call.prompt.name, call.prompt.name)})"
            return PairError(f"{where}: {_said(exc)}", exc)
        tally.sources[source] += 1
        tally.models.add(call.model_id)
        if progress is not None:
            progress(source)
        return call.key, pick

    return await asyncio.gather(*(one(pair, plan, call) for pair, plan in plans for call in plan.calls))


async def _answer(runtime: JudgeRuntime, plan: Plan, call: Call) -> tuple[str | None, str]:
    """One order's pick ("1", "2", "tie", or None: unreadable) and where its reply came from."""
    from ..pipeline.lookup import check_entry
    from ..pipeline.run import arun
    from ..rubrics.pairwise import comparison_from

    verdict_file = plan.verdict_file
    if verdict_file is not None and plan.settings.mode in ("auto", "replay") and not verdict_file.holds(call.key):
        kept = verdict_file.get(call.key, "unreadable")
        if kept is not None:  # an unreadable reply on record: read again (a better parser may read it now)
            check_entry(call, kept, verdict_file.location)
            return _reread(plan, call, kept), "replayed"
    single = _alone(plan, call)
    try:
        verdict = await arun(single, runtime)
    except VerdictParseError as exc:
        _keep_unreadable(single, call, exc)
        return None, "live" if single.live_calls[0] else "replayed"
    return _PICK[comparison_from(verdict).orders[0].preferred], verdict.source


def _alone(plan: Plan, call: Call) -> Plan:
    """`call` as a judgment of its own, with its own counts of the live stage: the two orders share the comparison's
    plan, and its list of live spans shared would make one order's deadline count the other's call and the queue
    that call waited in (`--judge-timeout` times the judgment's own calls only)."""
    own = {field.name: field.default_factory() for field in dataclasses.fields(plan) if callable(field.default_factory)}
    return dataclasses.replace(plan, calls=(call,), **own)


def _reread(plan: Plan, call: Call, entry: Mapping[str, Any]) -> str | None:
    from ..pipeline.finish import parse

    if entry.get("finish_reason") == "length":  # cut off at the token cap: unreadable live, whatever it holds
        return None
    try:
        parsed = parse(plan.rubric, call, Reply(str(entry["reply"]), entry.get("logprobs")))
    except VerdictParseError:
        return None
    return _PICK[str(details_of(parsed)["preferred"])]


def _keep_unreadable(plan: Plan, call: Call, exc: VerdictParseError) -> None:
    """Record an unreadable live reply in the qualification file (auto, refresh), so a replay counts it again."""
    from ..pipeline.plan import stored_fields

    verdict_file = plan.verdict_file
    if verdict_file is None or plan.settings.mode not in ("auto", "refresh") or not plan.live_calls[0]:
        return
    # A reply cut off at the token cap says so: a replay must not read the half it holds.
    cut_off = "length" if exc.cut_off else None
    verdict_file.put_many(
        {call.key: {**stored_fields(plan, call), "reply": exc.text, "finish_reason": cut_off}}, "unreadable"
    )


T = TypeVar("T")


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to its end from synchronous code: here, or in a thread where this one runs an event loop
    (an async test asserting the qualification)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(coroutine))
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target, name="llmjudge-qualify")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
