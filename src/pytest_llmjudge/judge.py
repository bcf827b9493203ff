"""The judgment pipeline: case -> prompts -> keys -> stored or live replies -> parse -> Verdict.

One direction, plain data between stages.  Stored replies are looked up synchronously (a replay
never starts the background loop or imports LiteLLM); only the calls that must go live are sent,
concurrently, on the runtime's background loop.  Stored replies are parsed again on every replay,
so an improved parser re-reads old verdicts, and a hand-edited score cannot outvote its reply.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Mapping, Sequence, TypeVar

from .aggregate import AGGREGATES, combine_scores, undecided
from .backends import CallableBackend, CallRequest, LiteLLMBackend, call_with_retries
from .errors import BackendError, JudgeError, JudgmentFailed, ReplayMiss, VerdictParseError
from .pairwise import Comparison, Pairwise, comparison_from
from .parsing import ParsedVerdict
from .prompts import Case
from .redact import redact
from .rubrics import Outcome, Prompt, Reply, Rubric, resolve_rubric
from .runtime import JudgeRuntime, TestContext, active
from .settings import MARKER_KEYS, Settings, SettingError
from .keys import canonical_json, judgment_key, messages_sha256

__all__ = ["Comparison", "Judge", "Sample", "StoredScoreWarning", "Verdict"]

F = TypeVar("F", bound=Callable[..., Any])
_MISS_FIELDS = ("model", "criteria", "output", "input", "expected", "rubric", "sample", "messages_sha256")


class StoredScoreWarning(UserWarning):
    """A stored verdict's score differs from what its stored reply parses to; the reply won."""


@dataclass(frozen=True)
class Sample:
    """One model's judgment in one sample (after its rubric combined that call's prompts)."""

    model: str
    sample: int
    score: float
    reasoning: str
    verdict: str | None
    confidence: str | None
    source: str
    keys: tuple[str, ...]
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """The outcome of one judgment.  `passed` means `score >= threshold`."""

    score: float
    passed: bool
    threshold: float
    reasoning: str
    verdict: str | None
    confidence: str | None
    model: str
    source: str  # "replayed" (ledger), "cached" (local cache) or "live"
    key: str
    cost_usd: float | None
    latency_s: float | None
    raw: str = field(repr=False)
    criteria: str = ""
    rubric: str = "score"
    keys: tuple[str, ...] = field(default=(), repr=False)
    samples: tuple[Sample, ...] = field(default=(), repr=False)
    agreement: float | None = None
    spread: float | None = None
    undecided: bool = False
    details: Mapping[str, Any] = field(default_factory=dict, repr=False)
    notes: tuple[str, ...] = field(default=(), repr=False)  # the rubric's failure details (failed constraints, ...)

    @property
    def per_model(self) -> dict[str, float]:
        """Each judge model's score (its samples combined); one entry unless a panel judged."""
        return dict(self.details.get("per_model") or {self.model: self.score})

    def failure_message(self, extra: Sequence[str] = ()) -> str:
        """The text a failed judgment shows: score, criteria, the judge's reasoning, where it came from."""
        head = f"judged {self.score:.2f} < threshold {self.threshold:.2f}"
        if self.undecided:
            head = f"judge undecided: {self.score:.2f} is within the inconclusive band around {self.threshold:.2f}"
        lines = [head, f"  criteria:  {_indent(self.criteria)}", f"  reasoning: {_indent(self.reasoning or '(none given)')}"]
        lines.extend(f"  {line}" for line in (*self.notes, *extra))
        per_model = self.details.get("per_model")
        if per_model:
            lines.append("  panel:     " + ", ".join(f"{m}={s:.2f}" for m, s in per_model.items()))
        if len(self.samples) > 1:
            spread = f", spread {self.spread:.2f}" if self.spread is not None else ""
            agreement = f"agreement {self.agreement:.0%}" if self.agreement is not None else ""
            lines.append(f"  samples:   {len(self.samples)} ({agreement}{spread}): " + ", ".join(f"{s.model}#{s.sample}={s.score:.2f}" for s in self.samples))
        lines.append(f"  judge:     {self.model} ({self.source}, key {self.key[:12]})")
        return redact("\n".join(lines))


def _indent(text: str) -> str:
    return text.strip().replace("\n", "\n             ")


@dataclass
class _Call:
    model_id: str
    sample: int
    prompt: Prompt
    request: CallRequest
    key: str
    messages_sha256: str


@dataclass
class _Job:
    case: Case
    rubric: Rubric
    settings: Settings
    threshold: float
    aggregate: str
    band: float
    calls: list[_Call]
    backend: Any
    ledger: Any
    context: TestContext | None
    replies: dict[str, tuple[Reply, str, dict[str, Any] | None]] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)  # key -> CallResult of live calls
    started: float = field(default_factory=time.monotonic)


def _public(fn: F) -> F:
    """Show a plugin error where the test called us, not as a traceback into the plugin."""

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            try:
                return await fn(*args, **kwargs)
            except (JudgeError, JudgmentFailed) as exc:
                raise exc.with_traceback(None) from None

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        try:
            return fn(*args, **kwargs)
        except (JudgeError, JudgmentFailed) as exc:
            raise exc.with_traceback(None) from None

    return wrapper  # type: ignore[return-value]


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
        self._runtime = runtime or active() or JudgeRuntime.standalone()
        self._context = context if context is not None else (self._runtime.current if runtime is None else None)
        self._backend = backend
        unknown = set(overrides) - set(MARKER_KEYS) - {"aggregate", "band"}
        if unknown:
            raise JudgeError(f"Judge() got unknown setting(s) {', '.join(sorted(unknown))}; known: {', '.join(MARKER_KEYS)}, aggregate, band")
        self._overrides = overrides

    # -- public API -----------------------------------------------------------------------

    @_public
    def score(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """Judge `output` against `criteria`; return the Verdict (a low score does not raise)."""
        job = self._prepare(output, criteria, **options)
        return self._record(job, lambda: self._run(job))

    @_public
    async def ascore(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """`score`, awaitable: safe inside a running event loop (the calls run on a background loop)."""
        job = self._prepare(output, criteria, **options)
        return await self._record_async(job, self._arun(job))

    @_public
    def assert_judged(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """Judge and fail the test (JudgmentFailed) when the score is under the threshold."""
        __tracebackhide__ = True
        return self._check(self.score(output, criteria, **options))

    @_public
    async def aassert_judged(self, output: Any, criteria: str, **options: Any) -> Verdict:
        """`assert_judged`, awaitable."""
        __tracebackhide__ = True
        return self._check(await self.ascore(output, criteria, **options))

    @_public
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
    ) -> Comparison:
        """Judge which of two outputs better meets `criteria`, asking in both orders (position bias).

        Each order is its own call and key; orders that disagree make a tie.  Returns a
        `Comparison` (winner "candidate", "baseline" or "tie", both orders' reasoning, keys).
        """
        job = self._pair_job(candidate, baseline, criteria, input=input, model=model, samples=samples, aggregate=aggregate)
        return comparison_from(self._record(job, lambda: self._run(job)))

    @_public
    async def acompare(self, candidate: Any, baseline: Any, criteria: str, **options: Any) -> Comparison:
        """`compare`, awaitable."""
        job = self._pair_job(candidate, baseline, criteria, **options)
        return comparison_from(await self._record_async(job, self._arun(job)))

    @_public
    def assert_better(self, candidate: Any, baseline: Any, criteria: str, *, allow_tie: bool = True, **options: Any) -> Comparison:
        """`compare`, and fail (JudgmentFailed, with both orders' reasoning) unless the candidate wins
        (or ties, with `allow_tie=True`)."""
        __tracebackhide__ = True
        job = self._pair_job(candidate, baseline, criteria, strict=not allow_tie, **options)
        return _check_comparison(comparison_from(self._record(job, lambda: self._run(job))), allow_tie)

    def _pair_job(self, candidate: Any, baseline: Any, criteria: Any, *, strict: bool = False, **options: Any) -> _Job:
        # The verdict's threshold encodes what passes: not worse (0.5), or strictly better (just above).
        threshold = math.nextafter(0.5, 1.0) if strict else 0.5
        if baseline is None:
            raise JudgeError("baseline is None: pass the output to compare the candidate against")
        return self._build(candidate, criteria, expected=baseline, rubric=Pairwise(), threshold=threshold, **options)

    @_public
    def score_many(self, cases: Iterable[Mapping[str, Any] | Sequence[Any]]) -> list[Verdict]:
        """Judge several cases concurrently; each is a dict of `score` arguments or an (output, criteria) pair.

        Returns the verdicts in order; if any judgment errs, the first error is raised after all finish.
        """
        jobs = [self._prepare(*c) if not isinstance(c, Mapping) else self._prepare(**c) for c in cases]
        errors: list[BaseException] = []
        pending: list[tuple[_Job, list[_Call]]] = []
        for job in jobs:
            try:
                missing = self._record(job, lambda job=job: self._lookup(job), finish=False)
            except (JudgeError, JudgmentFailed) as exc:
                errors.append(exc)
                continue
            pending.append((job, missing))

        async def run_all() -> list[Any]:
            return await asyncio.gather(*(self._live_all(job, missing) for job, missing in pending if missing), return_exceptions=True)

        failed_jobs: set[int] = set()
        if any(missing for _, missing in pending):
            outcomes = self._runtime.loop.run(run_all())
            for (job, _), outcome in zip([p for p in pending if p[1]], outcomes):
                if isinstance(outcome, BaseException):
                    self._note_error(job, outcome)
                    errors.append(outcome)
                    failed_jobs.add(id(job))
        verdicts = []
        for job, _ in pending:
            if id(job) in failed_jobs:
                continue
            try:
                verdicts.append(self._record(job, lambda job=job: self._finish(job)))
            except (JudgeError, JudgmentFailed) as exc:
                errors.append(exc)
        if errors:
            raise errors[0]
        return verdicts

    # -- preparing a judgment ---------------------------------------------------------------

    def _settings(self) -> tuple[Settings, dict[str, Any]]:
        marker = dict(self._context.marker) if self._context is not None else {}
        settings = self._runtime.settings
        try:
            settings = settings.with_marker({k: v for k, v in marker.items() if k in MARKER_KEYS})
        except SettingError as exc:
            raise JudgeError(str(exc)) from None
        return settings, marker

    def _resolve_backend(self) -> Any:
        backend = self._backend
        if backend is None and self._context is not None:
            backend = self._context.judge_backend()
        if backend is None:
            return LiteLLMBackend()
        if hasattr(backend, "attempt") and hasattr(backend, "classify"):
            return backend
        if callable(backend):
            return CallableBackend(backend)
        raise JudgeError(f"judge_backend must be a callable taking the chat messages, or None; got {backend!r}")

    def _prepare(self, output: Any, criteria: Any, **options: Any) -> _Job:
        """`_build`, after checking that a library criterion got the input or reference it needs."""
        _check_requires(criteria, input=options.get("input"), expected=options.get("expected"))
        return self._build(output, criteria, **options)

    def _build(
        self,
        output: Any,
        criteria: Any,
        *,
        input: Any = None,
        expected: Any = None,
        threshold: float | None = None,
        model: str | Sequence[str] | None = None,
        rubric: Any = None,
        samples: int | None = None,
        aggregate: str | None = None,
        band: float | None = None,
    ) -> _Job:
        settings, marker = self._settings()
        overrides = {**self._overrides}
        for name, value in (("threshold", threshold), ("model", model), ("samples", samples)):
            if value is not None:
                overrides[name] = value
        try:
            settings = settings.with_marker(
                {k: v for k, v in overrides.items() if k in MARKER_KEYS and k != "rubric"}, force=True, where="assert_judged"
            )
        except SettingError as exc:
            raise JudgeError(str(exc)) from None
        if threshold is not None and isinstance(threshold, bool):
            raise JudgeError("threshold must be a number in [0, 1], not a bool")
        aggregate = aggregate or overrides.get("aggregate") or marker.get("aggregate") or "mean"
        if aggregate not in AGGREGATES:
            raise JudgeError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {aggregate!r}")
        band = _check_band(next((b for b in (band, overrides.get("band"), marker.get("band")) if b is not None), 0.0))
        case = Case.build(output, criteria, input, expected)
        chosen_rubric = resolve_rubric(rubric if rubric is not None else overrides.get("rubric", marker.get("rubric")))
        backend = self._resolve_backend()
        models = self._judge_ids(settings, backend)
        prompts = chosen_rubric.prompts(case)
        calls = []
        for model_id, send_model in models:
            for sample in range(settings.samples):
                for prompt in prompts:
                    calls.append(self._call(model_id, send_model, sample, prompt, settings, chosen_rubric, backend))
        return _Job(
            case=case,
            rubric=chosen_rubric,
            settings=settings,
            threshold=settings.threshold,
            aggregate=aggregate,
            band=band,
            calls=calls,
            backend=backend,
            ledger=self._runtime.ledger_for(self._context),
            context=self._context,
        )

    def _judge_ids(self, settings: Settings, backend: Any) -> list[tuple[str, str]]:
        """(id in the key, model sent) per judge.  A custom backend's name, or the model, is the id."""
        models = settings.model
        if isinstance(backend, LiteLLMBackend):
            if not models:
                raise JudgeError(
                    "no judge model configured: pass --judge-model=MODEL (or set judge_model in the ini file, "
                    "or LLMJUDGE_MODEL). The model is part of every verdict's key, so set it where recording "
                    "and replay both see it."
                )
            return [(m, m) for m in models]
        name = getattr(backend, "name", None)
        if not models:
            fn = getattr(backend, "fn", backend)
            return [(name or f"custom:{getattr(fn, '__qualname__', type(fn).__name__)}", "")]
        if name and len(models) == 1:
            return [(name, models[0])]
        return [(f"{name}:{m}" if name else m, m) for m in models]

    def _call(self, model_id: str, send_model: str, sample: int, prompt: Prompt, settings: Settings, rubric: Rubric, backend: Any) -> _Call:
        api_base = settings.api_base if isinstance(backend, LiteLLMBackend) else None
        params = {"temperature": settings.temperature, **dict(prompt.params)}
        messages = [dict(m) for m in prompt.messages]
        key = judgment_key(
            {"model": model_id, "api_base": api_base, "messages": messages, "params": params, "sample": sample, "rubric": rubric.describe()}
        )
        request = CallRequest(
            model=send_model or model_id, messages=messages, api_base=api_base, temperature=settings.temperature, params=dict(prompt.params)
        )
        sha = messages_sha256(messages)
        return _Call(model_id, sample, prompt, request, key, sha)

    # -- stored replies ---------------------------------------------------------------------

    def _lookup(self, job: _Job) -> list[_Call]:
        """Fill in stored replies; return the calls that must go live (replay: raise on a miss)."""
        mode = job.settings.mode
        missing: list[_Call] = []
        for call in job.calls:
            if call.key in job.replies:
                continue
            if mode in ("auto", "replay") and job.ledger is not None:
                entry = job.ledger.get(call.key)
                if entry is not None:
                    job.replies[call.key] = (Reply(entry["reply"], entry.get("logprobs")), "replayed", entry)
                    continue
            if mode == "replay":
                raise self._replay_miss(job, call)
            if mode == "auto" and self._runtime.cache is not None:
                value = self._runtime.cache.get(call.key)
                if value is not None:
                    job.replies[call.key] = (Reply(value["reply"], value.get("logprobs")), "cached", None)
                    continue
            missing.append(call)
        return missing

    def _replay_miss(self, job: _Job, call: _Call) -> ReplayMiss:
        settings = job.settings
        test = job.context.nodeid if job.context else "(outside a test)"
        lines = [
            f"no stored verdict for this judgment (mode replay: {settings.mode_reason})",
            f"  test: {test}",
            f"  key:  {call.key[:12]}",
        ]
        if job.ledger is None:
            lines.append("  nothing is stored outside a pytest test")
        else:
            entries = job.ledger.entries()
            if not entries:
                lines.append(f"  no verdicts are stored for this test (looked in {job.ledger.path})")
            else:
                wanted = self._entry_fields(job, call)
                best_key, best_diff = min(
                    ((k, [f for f in _MISS_FIELDS if e.get(f) != wanted.get(f)]) for k, e in entries.items()),
                    key=lambda kv: len(kv[1]),
                )
                lines.append(f"  nearest stored: key {best_key[:12]}, which differs in {', '.join(best_diff) or 'the prompt template'}")
        command = f"pytest '{test}' --judge-mode=auto"
        if settings.model and settings.sources.get("model") in ("cli", "default"):
            command += f" --judge-model={','.join(settings.model)}"
        lines.append(f"  record it with a reachable judge: {command}  (then commit the verdict file)")
        return ReplayMiss(redact("\n".join(lines)), key=call.key)

    @staticmethod
    def _entry_fields(job: _Job, call: _Call) -> dict[str, Any]:
        return {
            "model": call.model_id,
            "rubric": job.rubric.name,
            "prompt": call.prompt.name or None,
            "sample": call.sample,
            "criteria": job.case.criteria,
            "input": job.case.input,
            "expected": job.case.expected,
            "output": job.case.output,
            "messages_sha256": call.messages_sha256,
        }

    # -- live calls (on the background loop) ---------------------------------------------------

    def _run(self, job: _Job) -> Verdict:
        missing = self._lookup(job)
        if missing:
            self._runtime.loop.run(self._live_all(job, missing))
        return self._finish(job)

    async def _arun(self, job: _Job) -> Verdict:
        """`_run`, awaitable: the live calls are awaited, so the caller's own event loop keeps running."""
        missing = self._lookup(job)
        if missing:
            await self._runtime.loop.wrap(self._live_all(job, missing))
        return self._finish(job)

    async def _live_all(self, job: _Job, missing: list[_Call]) -> None:
        deadline = job.started + job.settings.timeout
        results = await asyncio.gather(*(self._live_one(job, call, deadline) for call in missing), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _live_one(self, job: _Job, call: _Call, deadline: float) -> None:
        runtime = self._runtime
        mode = job.settings.mode
        cache = runtime.cache if mode in ("auto", "refresh") else None
        async with runtime.key_lock(call.key), runtime.semaphore():
            handle = await asyncio.to_thread(cache.acquire, call.key, deadline) if cache is not None else None
            try:
                if mode == "auto" and cache is not None:
                    value = await asyncio.to_thread(cache.get, call.key)
                    if value is not None:  # another worker paid for it while we waited
                        job.replies[call.key] = (Reply(value["reply"], value.get("logprobs")), "cached", None)
                        return
                runtime.check_budget()
                remaining = max(0.001, deadline - time.monotonic())
                result = await call_with_retries(job.backend, call.request, retries=job.settings.retries, timeout=remaining, limit_s=job.settings.timeout)
                runtime.spend(result.cost_usd)
                reply = Reply(result.text, result.logprobs)
                if result.finish_reason == "length":
                    raise VerdictParseError(
                        f"the judge's reply was cut off at max_tokens (finish_reason=length), key {call.key[:12]}; "
                        "allow the judge more tokens. Nothing was stored.",
                        result.text,
                        key=call.key,
                    )
                self._parse(job, call, reply)  # an unparseable reply is never stored
                job.replies[call.key] = (reply, "live", None)
                job.results[call.key] = result
                if cache is not None:
                    value = {"reply": result.text, "logprobs": result.logprobs, "model": call.model_id, "cost_usd": result.cost_usd}
                    await asyncio.to_thread(cache.set, call.key, {k: v for k, v in value.items() if v is not None})
            finally:
                if handle is not None:
                    cache.release(handle)  # type: ignore[union-attr]

    # -- finishing ---------------------------------------------------------------------------

    def _parse(self, job: _Job, call: _Call, reply: Reply) -> ParsedVerdict:
        try:
            return job.rubric.parse(call.prompt, reply)
        except VerdictParseError as exc:
            exc.key = call.key
            exc.args = (f"{exc.args[0]} (key {call.key[:12]}, model {call.model_id})",)
            raise

    def _finish(self, job: _Job) -> Verdict:
        parsed: dict[str, ParsedVerdict] = {}
        for call in job.calls:
            reply, source, entry = job.replies[call.key]
            parsed[call.key] = result = self._parse(job, call, reply)
            if entry is not None and isinstance(entry.get("score"), (int, float)) and abs(entry["score"] - result.score) > 1e-6:
                warnings.warn(
                    StoredScoreWarning(
                        f"{job.ledger.path}: key {call.key[:12]} stores score {entry['score']} but its reply parses to "
                        f"{result.score}; the reply wins (re-record, or run `python -m pytest_llmjudge reparse`)"
                    ),
                    stacklevel=4,
                )
        self._store(job, parsed)

        groups: dict[tuple[str, int], list[_Call]] = {}
        for call in job.calls:
            groups.setdefault((call.model_id, call.sample), []).append(call)
        samples = []
        for (model_id, sample), calls in groups.items():
            outcome: Outcome = job.rubric.combine(job.case, [(c.prompt, parsed[c.key]) for c in calls])
            sources = {job.replies[c.key][1] for c in calls}
            samples.append(
                Sample(model_id, sample, outcome.score, outcome.reasoning, outcome.verdict, outcome.confidence,
                       _overall_source(sources), tuple(c.key for c in calls), dict(outcome.details))
            )
        return self._verdict(job, samples, parsed)

    def _store(self, job: _Job, parsed: Mapping[str, ParsedVerdict]) -> None:
        mode = job.settings.mode
        if mode not in ("auto", "refresh") or job.ledger is None:
            return
        previous = job.ledger.entries() if mode == "refresh" else {}
        for call in job.calls:
            reply, source, _ = job.replies[call.key]
            if source == "replayed":
                continue
            result = parsed[call.key]
            entry = {
                **self._entry_fields(job, call),
                "reply": reply.text,
                "logprobs": reply.logprobs,
                "score": result.score,
                "verdict": result.verdict,
                "confidence": result.confidence,
                "reasoning": result.reasoning,
            }
            old = previous.get(call.key)
            if old is not None and isinstance(old.get("score"), (int, float)):
                moved = abs(old["score"] - result.score)
                flipped = (old["score"] >= job.threshold) != (result.score >= job.threshold)
                if moved > job.settings.drift or flipped:
                    self._runtime.drift.append(
                        {"test": job.ledger.nodeid, "key": call.key, "old": old["score"], "new": result.score, "flipped": flipped}
                    )
            job.ledger.put(call.key, entry)

    def _verdict(self, job: _Job, samples: list[Sample], parsed: Mapping[str, ParsedVerdict]) -> Verdict:
        threshold = job.threshold
        per_model: dict[str, list[float]] = {}
        for s in samples:
            per_model.setdefault(s.model, []).append(s.score)
        if len(samples) == 1:
            representative = samples[0]
            score, agreement, spread = representative.score, None, None
        else:
            # Each model's samples first, then the panel: a model judging 5 times outvotes no one.
            model_scores = {m: combine_scores(v, threshold, job.aggregate).score for m, v in per_model.items()}
            combined = list(model_scores.values())
            score = combine_scores(combined, threshold, job.aggregate).score if len(combined) > 1 else combined[0]
            everyone = [s.score for s in samples]
            agreement = round(sum((x >= threshold) == (score >= threshold) for x in everyone) / len(everyone), 6)
            spread = round(max(everyone) - min(everyone), 6)
            representative = min(samples, key=lambda s: abs(s.score - score))
        score = round(score, 6)
        is_undecided = undecided([s.score for s in samples], score, threshold, job.band)
        details = dict(representative.details)
        if len(per_model) > 1:
            details["per_model"] = {m: round(combine_scores(v, threshold, job.aggregate).score, 6) for m, v in per_model.items()}
        outcome = Outcome(representative.score, representative.reasoning, representative.verdict, representative.confidence, representative.details)
        verdicts = {s.verdict for s in samples}
        live = [job.results[c.key] for c in job.calls if c.key in job.results]
        costs = [r.cost_usd for r in live if r.cost_usd is not None]
        first = job.calls[0]
        return Verdict(
            score=score,
            passed=score >= threshold and not is_undecided,
            threshold=threshold,
            reasoning=representative.reasoning,
            verdict=verdicts.pop() if len(verdicts) == 1 else None,
            confidence=representative.confidence if len(samples) == 1 else None,
            model=",".join(dict.fromkeys(s.model for s in samples)),
            source=_overall_source({s.source for s in samples}),
            key=first.key,
            cost_usd=round(sum(costs), 8) if costs else (None if live else 0.0),
            latency_s=round(time.monotonic() - job.started, 4) if live else None,
            raw=job.replies[first.key][0].text,
            criteria=job.case.criteria,
            rubric=job.rubric.name,
            keys=tuple(c.key for c in job.calls),
            samples=tuple(samples),
            agreement=agreement,
            spread=spread,
            undecided=is_undecided,
            details=details,
            notes=tuple(job.rubric.failure_details(outcome)),
        )

    # -- recording for reports ---------------------------------------------------------------

    def _check(self, verdict: Verdict) -> Verdict:
        __tracebackhide__ = True
        if not verdict.passed:
            raise JudgmentFailed(verdict.failure_message(), verdict)
        return verdict

    def _record(self, job: _Job, step: Callable[[], Any], finish: bool = True) -> Any:
        try:
            result = step()
        except (JudgeError, JudgmentFailed) as exc:
            self._note_error(job, exc)
            raise
        if finish and isinstance(result, Verdict):
            self._note_verdict(job, result)
        return result

    async def _record_async(self, job: _Job, awaitable: Awaitable[Any]) -> Any:
        """`_record` for an awaitable step."""
        try:
            result = await awaitable
        except (JudgeError, JudgmentFailed) as exc:
            self._note_error(job, exc)
            raise
        if isinstance(result, Verdict):
            self._note_verdict(job, result)
        return result

    def _note_verdict(self, job: _Job, verdict: Verdict) -> None:
        if job.context is None:
            return
        job.context.records.append(
            {
                "nodeid": job.context.nodeid,
                "criteria": verdict.criteria,
                "rubric": verdict.rubric,
                "score": verdict.score,
                "threshold": verdict.threshold,
                "passed": verdict.passed,
                "verdict": verdict.verdict,
                "confidence": verdict.confidence,
                "reasoning": redact(verdict.reasoning),
                "model": verdict.model,
                "source": verdict.source,
                "key": verdict.key,
                "samples": [
                    {"model": s.model, "sample": s.sample, "score": s.score, "reasoning": redact(s.reasoning), "source": s.source}
                    for s in verdict.samples
                ],
                "agreement": verdict.agreement,
                "spread": verdict.spread,
                "undecided": verdict.undecided,
                "cost_usd": verdict.cost_usd,
                "latency_s": verdict.latency_s,
                "output": redact(job.case.output[:4000]),
            }
        )

    def _note_error(self, job: _Job, exc: BaseException) -> None:
        if job.context is None or getattr(exc, "_llmjudge_noted", False):
            return
        exc._llmjudge_noted = True  # type: ignore[attr-defined]
        if isinstance(exc, JudgmentFailed):
            return  # its verdict was already recorded
        job.context.records.append(
            {
                "nodeid": job.context.nodeid,
                "criteria": job.case.criteria,
                "rubric": job.rubric.name,
                "error": type(exc).__name__,
                "message": redact(str(exc)),
                "key": getattr(exc, "key", "") or (job.calls[0].key if job.calls else ""),
                "threshold": job.threshold,
                "output": redact(job.case.output[:4000]),
            }
        )
        if isinstance(exc, VerdictParseError) and exc.text:
            job.context.sections.append((f"llmjudge: unparseable judge reply (key {exc.key[:12]})", redact(exc.text)))


def _overall_source(sources: set[str]) -> str:
    for source in ("live", "cached", "replayed"):
        if source in sources:
            return source
    return "replayed"


def _check_requires(criteria: Any, **given: Any) -> None:
    """A library criterion (see criteria.py) names the arguments it cannot be judged without."""
    for name in getattr(criteria, "requires", ()):
        if given.get(name) is None:
            raise JudgeError(f"criteria {getattr(criteria, 'name', '?')} needs {name}=... to judge against; pass it to assert_judged")


def _check_band(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 0.5:
        raise JudgeError(f"band must be a number in [0, 0.5] (the inconclusive margin around the threshold), got {value!r}")
    return float(value)


def _check_comparison(comparison: Comparison, allow_tie: bool) -> Comparison:
    __tracebackhide__ = True
    if comparison.winner == "candidate" or (allow_tie and comparison.winner == "tie"):
        return comparison
    error = JudgmentFailed(comparison.failure_message(allow_tie), comparison.verdict)
    error.comparison = comparison  # type: ignore[attr-defined]
    raise error
