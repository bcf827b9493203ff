"""Each judgment's record for the reports, added to its test: its verdict, or its error (once)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..errors import BackendError, JudgmentFailed, VerdictParseError
from ..redact import redact
from ..verdict import PendingRecord, Verdict, error_record

if TYPE_CHECKING:
    from .plan import Plan


def note_verdict(plan: Plan, verdict: Verdict) -> tuple[PendingRecord, int] | None:
    """Add the verdict's record to its test's records (nothing outside a test); the record, and the
    judgment's position among its test's judgments of the same criteria and rubric (see `position`)."""
    context = plan.context
    if context is not None:  # built (and redacted) only where a report reads the whole record
        pending = PendingRecord(
            verdict,
            nodeid=context.nodeid,
            output=plan.case.output,
            live_calls=plan.live_calls[0],
            cached_calls=plan.cached_calls[0],
            threshold_given=plan.threshold_given,
            requests=plan.requests,
            whole=context.whole_records,
            clean=plan.clean,
            live_span=plan.live_span(),
            run=context.run,
            group=context.group,
        )
        context.records.append(pending)
        return pending, position(plan)
    return None


def position(plan: Plan) -> int:
    """Which of its run's judgments of the same criteria and rubric this one is (0 for the first), counted in
    the order the test made them, errors included: what pairs a judgment whose output (so key) changed with
    the one it replaces (see `store.outcomes`).  Counted within the run of a repeated test, so each run's
    judgments hold the places a test that is not repeated gives them (the run is paired apart)."""
    context = plan.context
    if context is None:
        return 0
    equals = (plan.case.criteria, plan.rubric.name, context.run)
    taken = context.positions.get(equals, 0)
    context.positions[equals] = taken + 1
    return taken


_NOTED = "_llmjudge_noted"  # set on an error once recorded: the facade and run_many may both see it


def note_error(plan: Plan, exc: BaseException) -> None:
    """Add an error's record (and an unparseable reply as a report section) to its test, once."""
    context = plan.context
    if context is None or getattr(exc, _NOTED, False):
        return
    setattr(exc, _NOTED, True)
    if isinstance(exc, JudgmentFailed):
        return  # its verdict was already recorded
    position(plan)  # a judgment that erred holds its place: the ones after it keep theirs
    key = getattr(exc, "key", "") or (plan.calls[0].key if plan.calls else "")
    record = error_record(
        exc,
        nodeid=context.nodeid,
        criteria=plan.case.criteria,
        rubric=plan.rubric.name,
        key=key,
        threshold=plan.threshold if plan.threshold_given else None,
        output=plan.case.output,
        live_calls=plan.live_calls[0],
        run=context.run,
        group=context.group,
    )
    if plan.live_calls[0] or isinstance(exc, BackendError):
        # Time spent on the judge counts in the run's judging time, whether or not a verdict came of it.
        record["latency_s"] = round(plan.live_s(), 4)
        span = plan.live_span()
        if span is not None:
            record["live_span"] = [round(span[0], 3), round(span[1], 3)]
    if plan.paid:  # the calls were paid for though no verdict came of them: the summary and budgets count them
        from .reask import combined

        paid = functools.reduce(combined, plan.paid)
        record["cost_usd"] = paid.cost_usd
        if paid.prompt_tokens is not None or paid.completion_tokens is not None:
            record["prompt_tokens"] = paid.prompt_tokens or 0
            record["completion_tokens"] = paid.completion_tokens or 0
    context.records.append(record)
    if isinstance(exc, VerdictParseError) and exc.text:
        context.sections.append((f"llmjudge: unparseable judge reply (key {exc.key[:12]})", shown_reply(exc.text)))


SHOWN_REPLY = 4000  # characters of an unparseable reply a report section shows: its start and its end


def shown_reply(text: str) -> str:
    """An unparseable reply as its report section shows it: whole up to `SHOWN_REPLY` characters, else
    its start and its end (where a verdict would be), with how much was left out between."""
    text = redact(text)  # whole, then cut: a secret across a cut is blanked, not left in halves
    if len(text) > SHOWN_REPLY:
        half = SHOWN_REPLY // 2
        text = f"{text[:half]}\n... ({len(text) - 2 * half} characters left out) ...\n{text[-half:]}"
    return text
