"""Finish: parse every reply, combine the samples into the Verdict, note its record, and write back what is
new (noting drift) with what the judgment decided; or, for generations, write back what is new and return
the replies as they came.

Stored replies are parsed again on every replay, so an improved parser re-reads old verdicts, and a
hand-edited score cannot outvote its reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..caller import warn_at_caller
from ..errors import StoreError, VerdictParseError
from ..redact import redact
from ..rubrics.base import Outcome, Reply, Rubric
from ..rubrics.stored import read_reply
from ..store.verdict_file import VerdictFileTooLarge
from ..verdict import Sample, StoredScoreWarning, Verdict
from .aggregate import combine_panel, undecided
from .plan import case_fields, stored_fields
from .record import note_verdict
from .structured import structured_of

if TYPE_CHECKING:
    from pathlib import Path

    from ..parsing.funnel import ParsedVerdict
    from ..runtime import JudgeRuntime
    from ..verdict import PendingRecord
    from .generations import GenerationPlan
    from .lookup import Answer
    from .plan import Call, Plan, Planned


def parse(rubric: Rubric, call: Call, reply: Reply) -> ParsedVerdict:
    """The rubric's reading of one reply; a parse error names the key and the model."""
    try:
        return read_reply(rubric, call.prompt, reply)
    except VerdictParseError as exc:
        exc.key = call.key
        exc.args = (f"{exc.args[0]} (key {call.key[:12]}, model {call.model_id})",)
        raise


def finish(plan: Plan, answers: Mapping[str, Answer], runtime: JudgeRuntime) -> Verdict:
    """Parse every reply, write back what is new, combine the samples into the Verdict."""
    parsed: dict[str, ParsedVerdict] = {}
    for call in plan.calls:
        answer = answers[call.key]
        parsed[call.key] = result = parse(plan.rubric, call, answer.reply)
        stored = answer.stored.get("score") if answer.stored is not None else None
        if isinstance(stored, (int, float)) and abs(stored - result.score) > 1e-6:
            warn_at_caller(  # at the test's line, however deep the pipeline was entered
                StoredScoreWarning(
                    f"{plan.verdict_file.path if plan.verdict_file else ''}: key {call.key[:12]} stores score "
                    f"{stored} but its reply parses to {result.score}; the reply wins "
                    "(re-record, or run `python -m pytest_llmjudge reparse`)"
                )
            )
    entries = new_verdicts(plan, answers, parsed)
    try:
        verdict = (
            _one_call(plan, answers, parsed)
            if len(plan.calls) == 1
            else verdict_of(plan, samples_of(plan, answers, parsed), answers)
        )
    except BaseException:
        write_back(plan, entries, runtime, answers)  # the replies are kept, though no verdict came of them
        raise
    noted = note_verdict(plan, verdict)
    write_back(plan, entries, runtime, answers, outcomes=_decided(plan, verdict, noted))
    return verdict


def _decided(plan: Plan, verdict: Verdict, noted: tuple[PendingRecord, int] | None) -> dict[str, dict[str, Any]]:
    """The judgment's outcome for its verdict file (auto, refresh; in a test): the projection of its record."""
    if noted is None or plan.settings.mode not in ("auto", "refresh") or plan.verdict_file is None:
        return {}
    from ..store.outcomes import outcome_of

    record, position = noted
    return {verdict.key: outcome_of(record.brief(), position)}


def finish_generations(plan: GenerationPlan, answers: Mapping[str, Answer], runtime: JudgeRuntime) -> list[str]:
    """Write back the new replies, and return every reply in the order the generations were asked for."""
    new = [c for c in plan.calls if answers[c.key].source != "replayed"]
    write_back(plan, {c.key: {**c.record(), "reply": answers[c.key].reply.text} for c in new}, runtime, answers)
    return [answers[c.key].reply.text for c in plan.calls]


def write_back(
    plan: Planned[Any],
    entries: Mapping[str, Mapping[str, Any]],
    runtime: JudgeRuntime,
    answers: Mapping[str, Answer],
    *,
    outcomes: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Store the judgment's new entries, and the entries it replayed from other tests' files, in one write
    of its section of the test's verdict file (auto, refresh), with what it decided (`outcomes`, written
    where the stored one differs); one warning if it cannot be written."""
    verdict_file = plan.verdict_file
    if plan.settings.mode not in ("auto", "refresh") or verdict_file is None:
        return
    copies = {k: a.stored for k, a in answers.items() if a.copied_from is not None and a.stored is not None}
    if not entries and not copies and not outcomes:
        return
    try:
        verdict_file.put_many(entries, plan.what, copies=copies, outcomes=outcomes)
    except VerdictFileTooLarge as exc:  # no later run could read it: the test fails now, not every replay after
        raise StoreError(str(exc)) from None  # as the plugin's errors are shown: pytest_llmjudge.StoreError
    except (StoreError, OSError) as exc:
        if not entries and not copies:  # only the outcome: the verdict stands, and nothing judged is lost
            runtime.note(  # once a run, not once a file
                "llmjudge: could not store what some judgments decided in their verdict files (a read-only tree?); "
                "`llmjudge diff` reads it there: record again where they can be written"
            )
            return
        from .unwritten import warn_unwritten  # on a failed write only

        key = next(iter(entries or copies))
        if not entries:  # only copies: the other test's file still holds them
            kept: bool | Path | None = answers[key].copied_from
        else:
            cache = runtime.cache  # None below: it could not store the reply either (a full disk)
            kept = (cache.keeps(key) or None) if cache is not None else False
        warn_unwritten(verdict_file.path, key, exc, kept=kept, what=plan.what)


def new_verdicts(
    plan: Plan, answers: Mapping[str, Answer], parsed: Mapping[str, ParsedVerdict]
) -> dict[str, dict[str, Any]]:
    """The entries of the replies not read from the verdict file (auto, refresh); noting drift against what
    refresh replaces."""
    mode = plan.settings.mode
    verdict_file = plan.verdict_file
    if mode not in ("auto", "refresh") or verdict_file is None:
        return {}
    previous = verdict_file.entries() if mode == "refresh" else {}
    entries: dict[str, dict[str, Any]] = {}
    case = case_fields(plan.case)  # one for all the judgment's entries: stored (and redacted) once
    for call in plan.calls:
        answer = answers[call.key]
        if answer.source == "replayed":
            continue
        result = parsed[call.key]
        entry = {
            **stored_fields(plan, call, answer.result, case),
            "reply": answer.reply.text,
            "logprobs": plan.rubric.stored_logprobs(call.prompt, answer.reply),
            "score": result.score,
            "verdict": result.verdict,
            "confidence": result.confidence,
            "reasoning": result.reasoning,
            **answer.extra,
        }
        old = previous.get(call.key)
        if old is not None and isinstance(old.get("score"), (int, float)):
            moved = abs(old["score"] - result.score)
            flipped = (old["score"] >= plan.threshold) != (result.score >= plan.threshold)
            if (moved > plan.settings.drift or flipped) and plan.context is not None:
                plan.context.drift.append(
                    {
                        "test": redact(verdict_file.nodeid),
                        "key": call.key,
                        "old": old["score"],
                        "new": result.score,
                        "flipped": flipped,
                    }
                )
        entries[call.key] = entry
    return entries


def samples_of(plan: Plan, answers: Mapping[str, Answer], parsed: Mapping[str, ParsedVerdict]) -> list[Sample]:
    """One Sample per (model, sample index): the rubric combines that sample's prompts."""
    samples = []
    for (model_id, sample), calls in plan.chains().items():
        outcome = plan.rubric.combine(plan.case, [(c.prompt, parsed[c.key]) for c in calls])
        source = overall_source({answers[c.key].source for c in calls})
        keys = tuple(c.key for c in calls)
        samples.append(
            Sample(
                model_id,
                sample,
                outcome.score,
                outcome.reasoning,
                outcome.verdict,
                outcome.confidence,
                source,
                keys,
                dict(outcome.details),
            )
        )
    return samples


def verdict_of(plan: Plan, samples: Sequence[Sample], answers: Mapping[str, Answer]) -> Verdict:
    """Combine the samples (each model's first, then the panel) and decide pass, fail or undecided."""
    threshold = plan.threshold
    per_model: dict[str, list[float]] = {}
    for s in samples:
        per_model.setdefault(s.model, []).append(s.score)
    combined = combine_panel(per_model, threshold, plan.aggregate)
    score = combined.score
    representative = samples[0] if len(samples) == 1 else min(samples, key=lambda s: abs(s.score - score))
    is_undecided = undecided([s.score for s in samples], score, threshold, plan.band)
    details = dict(representative.details)
    if len(per_model) > 1:
        details["per_model"] = combined.per_model
    outcome = Outcome(
        representative.score,
        representative.reasoning,
        representative.verdict,
        representative.confidence,
        representative.details,
    )
    verdicts = {s.verdict for s in samples}
    live = [result for result in (answers[c.key].result for c in plan.calls) if result is not None]
    costs = [r.cost_usd for r in live if r.cost_usd is not None]
    prompt_tokens = [r.prompt_tokens for r in live if r.prompt_tokens is not None]
    completion_tokens = [r.completion_tokens for r in live if r.completion_tokens is not None]
    first = plan.calls[0]
    return Verdict(
        score=score,
        passed=score >= threshold and not is_undecided,
        threshold=threshold,
        reasoning=representative.reasoning,
        verdict=verdicts.pop() if len(verdicts) == 1 else None,
        confidence=representative.confidence if len(samples) == 1 else None,
        model=",".join(dict.fromkeys(s.model for s in samples)),
        source=overall_source({s.source for s in samples}),
        key=first.key,
        cost_usd=round(sum(costs), 8) if costs else (None if live else 0.0),
        latency_s=round(plan.live_s(), 4) if live else None,
        raw=answers[first.key].reply.text,
        criteria=plan.case.criteria,
        rubric=plan.rubric.name,
        keys=tuple(c.key for c in plan.calls),
        samples=tuple(samples),
        agreement=combined.agreement,
        spread=combined.spread,
        undecided=is_undecided,
        details=details,
        notes=tuple(plan.rubric.failure_details(outcome)),
        structured=structured_of(answers[c.key].extra or answers[c.key].stored or {} for c in plan.calls),
        prompt_tokens=sum(prompt_tokens) if prompt_tokens else None,
        completion_tokens=sum(completion_tokens) if completion_tokens else None,
    )


def _one_call(plan: Plan, answers: Mapping[str, Answer], parsed: Mapping[str, ParsedVerdict]) -> Verdict:
    """`samples_of` and `verdict_of` for a judgment of one call (most of them): the same Verdict, without
    the panel's bookkeeping (a replay's cost is mostly this kind of work, repeated for every judgment)."""
    call = plan.calls[0]
    answer = answers[call.key]
    rubric = plan.rubric
    outcome = rubric.combine(plan.case, [(call.prompt, parsed[call.key])])
    sample = Sample(
        model=call.model_id,
        sample=call.sample,
        score=outcome.score,
        reasoning=outcome.reasoning,
        verdict=outcome.verdict,
        confidence=outcome.confidence,
        source=answer.source,
        keys=(call.key,),
        details=dict(outcome.details),
    )
    threshold = plan.threshold
    score = round(outcome.score, 6)  # as combine_panel rounds a lone score
    result = answer.result
    # The default says nothing more on failure: no call for it.
    notes = () if type(rubric).failure_details is Rubric.failure_details else tuple(rubric.failure_details(outcome))
    return Verdict(
        score=score,
        passed=score >= threshold,  # one sample is never undecided
        threshold=threshold,
        reasoning=outcome.reasoning,
        verdict=outcome.verdict,
        confidence=outcome.confidence,
        model=call.model_id,
        source=answer.source,
        key=call.key,
        cost_usd=(None if result.cost_usd is None else round(result.cost_usd, 8)) if result is not None else 0.0,
        latency_s=round(plan.live_s(), 4) if result is not None else None,
        raw=answer.reply.text,
        criteria=plan.case.criteria,
        rubric=rubric.name,
        keys=(call.key,),
        samples=(sample,),
        details=dict(outcome.details),
        notes=notes,
        structured=structured_of((answer.extra or answer.stored or {},)),
        prompt_tokens=result.prompt_tokens if result is not None else None,
        completion_tokens=result.completion_tokens if result is not None else None,
    )


def overall_source(sources: set[str]) -> str:
    """The costliest way any part was answered: live, then cached, then replayed."""
    for source in ("live", "cached", "replayed"):
        if source in sources:
            return source
    return "replayed"
