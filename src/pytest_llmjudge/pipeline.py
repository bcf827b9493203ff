"""The judgment pipeline: plan -> lookup (and replay-miss diagnosis) -> live calls -> finish.

Each stage is a function over plain, typed data.  `plan` merges the settings, chooses the backend
and names every call by its key.  `lookup` finds stored replies synchronously (a replay never starts
the background loop or imports LiteLLM).  `call_live` sends only the calls that must go live,
concurrently, on the runtime's background loop, under the budget and one lock per key.  `finish`
parses, writes back, notes drift, aggregates and returns the Verdict.  Stored replies are parsed
again on every replay, so an improved parser re-reads old verdicts, and a hand-edited score cannot
outvote its reply.  `run`, `arun` and `run_many` chain the stages and record each judgment for reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .aggregate import AGGREGATES, combine_panel, undecided
from .backends import (
    Backend,
    CallableBackend,
    CallRequest,
    CallResult,
    LiteLLMBackend,
    UnsupportedParamError,
    call_with_retries,
)
from .case import Case
from .errors import JudgeError, JudgmentFailed, StoreError, VerdictParseError
from .keys import KEY_VERSION, judgment_key, messages_sha256
from .reask import combined, reask_request
from .redact import redact
from .rubrics import Outcome, Prompt, Reply, Rubric, read_reply, resolve_rubric
from .settings import MARKER_KEYS, SamplesWarning, SettingError, Settings
from .structured import format_used, structured_backend, structured_of, structured_prompts
from .verdict import LedgerWriteWarning, PendingRecord, Sample, StoredScoreWarning, Verdict, error_record

if TYPE_CHECKING:
    from .parsing import ParsedVerdict
    from .runtime import JudgeRuntime, TestContext
    from .store import Ledger, LocalCache, VerdictIndex

__all__ = [
    "Answer",
    "Backend",
    "Call",
    "Options",
    "Plan",
    "arun",
    "call_live",
    "finish",
    "lookup",
    "plan",
    "run",
    "run_many",
]


# -- plan --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """What one judgment may set for itself: `assert_judged`'s arguments after output and criteria.

    The public functions spell these out for IDE help; everything inside takes this one definition.
    """

    input: Any = None
    expected: Any = None
    threshold: float | None = None
    model: str | Sequence[str] | None = None
    rubric: Any = None
    samples: int | None = None
    aggregate: str | None = None
    band: float | None = None


@dataclass(frozen=True)
class Call:
    """One judge call: who judges, which sample, which of the rubric's prompts, and its key."""

    model_id: str  # the judge's id in the key (the model, or a custom backend's name)
    sample: int
    prompt: Prompt
    request: CallRequest
    key: str

    @functools.cached_property
    def messages_sha256(self) -> str:
        """Stored beside each verdict; computed only when one is stored or a replay misses."""
        return messages_sha256(self.request.messages)


@dataclass(frozen=True)
class Plan:
    """One judgment, ready to look up: its case, rubric, resolved settings and calls."""

    case: Case
    rubric: Rubric
    settings: Settings
    aggregate: str
    band: float
    calls: tuple[Call, ...]
    backend: Backend
    ledger: Ledger | None
    context: TestContext | None
    started: float
    threshold_given: bool = True  # False: a `score` with no threshold anywhere (no pass/fail of its own)
    live_calls: list[int] = dataclasses.field(default_factory=lambda: [0])  # calls sent, parsed or not
    # model id -> (parameters sent, parameters not sent and why), from its first live call
    requests: dict[str, tuple[dict[str, Any], dict[str, str]]] = dataclasses.field(default_factory=dict)

    @property
    def threshold(self) -> float:
        return self.settings.threshold


def plan(
    output: Any,
    criteria: Any,
    options: Options,
    *,
    runtime: JudgeRuntime,
    context: TestContext | None,
    backend: Any,
    overrides: Mapping[str, Any],
    asserts: bool = True,
) -> Plan:
    """Merge the settings (arguments > Judge overrides > marker > session), choose the backend, key every call.

    `asserts`: the caller decides pass or fail (`assert_judged`); a `score` is recorded without a
    threshold unless one was given somewhere (argument, Judge, marker, option).
    """
    started = time.monotonic()
    marker: Mapping[str, Any] = context.marker if context is not None else {}
    settings = _merged_settings(runtime.settings, marker, overrides, options)
    if settings.samples > 1 and settings.judge_temperature() == 0:
        warn_identical_samples(settings)
    aggregate = options.aggregate or overrides.get("aggregate") or marker.get("aggregate") or "mean"
    if aggregate not in AGGREGATES:
        raise JudgeError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {aggregate!r}")
    band = _check_band(
        next((b for b in (options.band, overrides.get("band"), marker.get("band")) if b is not None), 0.0)
    )
    case = Case.build(output, criteria, options.input, options.expected)
    asked = options.rubric if options.rubric is not None else overrides.get("rubric", marker.get("rubric"))
    if asked is None:  # the default kind: one shared instance, its prompts rendered once per case
        rubric, prompts = _default_prompts(case)
    else:
        rubric = resolve_rubric(asked)
        prompts = rubric.prompts(case)
    chosen, structured = structured_backend(choose_backend(backend, context), settings.structured)
    prompts = structured_prompts(rubric, prompts, structured)
    api_base = settings.api_base if isinstance(chosen, LiteLLMBackend) else None
    described = rubric.describe()
    ledger = runtime.ledger_for(context)

    def keyed(ids: Sequence[tuple[str, str]]) -> tuple[Call, ...]:
        return tuple(
            _call(model_id, send_model, sample, prompt, settings, api_base, described)
            for model_id, send_model in ids
            for sample in range(settings.samples)
            for prompt in prompts
        )

    if not settings.model and settings.mode == "replay" and isinstance(chosen, LiteLLMBackend):
        # CI with no judge configured: replay what was recorded, whichever model recorded it.
        entries = ledger.entries() if ledger is not None else {}
        model = recorded_model(entries, lambda m: keyed([(m, m)]))
        if model is None and context is not None:  # recorded elsewhere (a session fixture, a renamed test)?
            elsewhere = stored_elsewhere(runtime)
            by_model = {s.key: s.entry for s in elsewhere.by_model().values()}
            model = recorded_model(by_model, lambda m: keyed([(m, m)]), elsewhere.has)
        if model is not None:
            settings = settings._replace(model=(model,))
        else:  # a miss: against the one model this test recorded with, so the miss names what changed
            models = {e.get("model") for e in entries.values()}
            only = models.pop() if len(models) == 1 else None
            model = only if isinstance(only, str) else NO_MODEL
        calls = keyed([(model, model)])
    else:
        calls = keyed(judge_ids(settings, chosen))
    given = (
        asserts
        or options.threshold is not None
        or "threshold" in overrides
        or "threshold" in marker
        or settings.sources.get("threshold", "default") != "default"
    )
    return Plan(case, rubric, settings, aggregate, band, calls, chosen, ledger, context, started, given)


def warn_identical_samples(settings: Settings) -> None:
    """Several samples at temperature 0 are one reply asked for again: say so (they cannot vary)."""
    warnings.warn(
        SamplesWarning(
            f"llmjudge: samples={settings.samples} at temperature 0 sends the same request {settings.samples} times: "
            "the samples cannot vary, so their agreement says little. Leave the temperature unset (samples are then "
            "drawn at 1.0) or set one above 0."
        ),
        stacklevel=3,
    )


# The default rubric kind holds no state, so one instance serves every judgment (and the parse memo,
# keyed by the rubric, hits); its prompts for a case are rendered once (a suite judges the same case
# again under several models, samples or tests).
_DEFAULT: list[Rubric] = []
_PROMPTS: dict[Case, list[Prompt]] = {}


def _default_prompts(case: Case) -> tuple[Rubric, list[Prompt]]:
    if not _DEFAULT:
        _DEFAULT.append(resolve_rubric(None))
    rubric = _DEFAULT[0]
    prompts = _PROMPTS.get(case)
    if prompts is None:
        prompts = rubric.prompts(case)
        if len(_PROMPTS) >= 256:
            _PROMPTS.clear()
        _PROMPTS[case] = prompts
    return rubric, list(prompts)


NO_MODEL = "(no judge model configured)"  # names the calls of a replay that found no recorded model


def recorded_model(
    entries: Mapping[str, Mapping[str, Any]],
    calls_for: Callable[[str], Sequence[Call]],
    has: Callable[[str], bool] | None = None,
) -> str | None:
    """The model that recorded this judgment, found without being told: keys are content hashes, so a
    stored entry belongs to this judgment when its key is one this judgment computes with its model.

    One model matches: that model.  None: None (the replay misses as usual).  Several: a JudgeError
    naming them and the option that picks one.
    """
    matching: list[str] = []
    for model in dict.fromkeys(str(e.get("model")) for e in entries.values() if isinstance(e.get("model"), str)):
        keys = {call.key for call in calls_for(model)}
        if any(has(k) for k in keys) if has is not None else not keys.isdisjoint(entries):
            matching.append(model)
    if len(matching) > 1:
        raise JudgeError(
            f"this judgment was recorded by several judge models ({', '.join(sorted(matching))}) and none is "
            "configured: pick one with --judge-model=MODEL (or judge_model in the ini file, or LLMJUDGE_MODEL)"
        )
    return matching[0] if matching else None


# Merged settings by (session settings, marker, arguments): a suite's judgments repeat a few
# combinations, and merging (parsing and copying the settings) is most of planning's own cost.
_MERGED: dict[tuple[Any, ...], tuple[Settings, Settings]] = {}


def _merged_settings(
    base: Settings, marker: Mapping[str, Any], overrides: Mapping[str, Any], options: Options
) -> Settings:
    from_marker = {k: v for k, v in marker.items() if k in MARKER_KEYS} if marker else {}
    given = {k: v for k, v in overrides.items() if k in MARKER_KEYS and k != "rubric"} if overrides else {}
    for name in ("threshold", "model", "samples"):
        value = getattr(options, name)
        if value is not None:
            given[name] = value
    if not from_marker and not given:  # nothing to merge: the session's settings as they are
        return base
    try:
        # The value's type is part of the key: True == 1, but they may not parse alike.
        memo: tuple[Any, ...] | None = (id(base), *_typed(from_marker), None, *_typed(given))
        hash(memo)
    except TypeError:  # an unhashable value (a list of models): merge without the memo
        memo = None
    cached = _MERGED.get(memo) if memo is not None else None
    if cached is not None and cached[0] is base:
        settings = cached[1]
    else:
        try:
            settings = base.with_marker(from_marker).with_marker(given, force=True, where="assert_judged")
        except SettingError as exc:
            raise JudgeError(str(exc)) from None
        if memo is not None:
            if len(_MERGED) >= 256:
                _MERGED.clear()
            _MERGED[memo] = (base, settings)
    if isinstance(options.threshold, bool):
        raise JudgeError("threshold must be a number in [0, 1], not a bool")
    return settings


def _typed(values: Mapping[str, Any]) -> list[tuple[str, type, Any]]:
    return [(k, type(v), v) for k, v in values.items()]


def _check_band(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 0.5:
        raise JudgeError(
            f"band must be a number in [0, 0.5] (the inconclusive margin around the threshold), got {value!r}"
        )
    return float(value)


def choose_backend(given: Any, context: TestContext | None) -> Backend:
    """The Judge's own backend, else the test's `judge_backend` fixture, else LiteLLM."""
    backend = given
    if backend is None and context is not None:
        backend = context.judge_backend()
    if backend is None:
        return LiteLLMBackend()
    # A backend object already speaks the protocol; a bare callable is wrapped.
    if isinstance(backend, Backend):
        return backend
    if callable(backend):
        return CallableBackend(backend)
    raise JudgeError(f"judge_backend must be a callable taking the chat messages, or None; got {backend!r}")


def judge_ids(settings: Settings, backend: Backend) -> list[tuple[str, str]]:
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


def _call(
    model_id: str,
    send_model: str,
    sample: int,
    prompt: Prompt,
    settings: Settings,
    api_base: str | None,
    rubric: Mapping[str, Any],
) -> Call:
    temperature = settings.judge_temperature()
    params = {"temperature": temperature, **dict(prompt.params)}
    messages = [dict(m) for m in prompt.messages]
    # Who judges and what it is asked; how the call travels (api base, proxy, key) stays out.
    # The request options join the key only when set, so a key made without them never changes.
    key = judgment_key(
        {
            "model": model_id,
            "messages": messages,
            "params": params,
            "sample": sample,
            "rubric": rubric,
            **requested(settings),
        }
    )
    request = CallRequest(
        model=send_model or model_id,
        messages=messages,
        api_base=api_base,
        temperature=temperature,
        params=dict(prompt.params),
        max_tokens=settings.max_tokens,
        reasoning_effort=settings.reasoning_effort,
        extra_params=settings.params,
        instructions_in_user=settings.instructions_in_user,
    )
    return Call(model_id, sample, prompt, request, key)


def requested(settings: Settings) -> dict[str, Any]:
    """The request options that are set, as the key and the ledger name them (the configured values:
    what a model then takes is `plan_request`'s to decide, and the replay path never asks LiteLLM)."""
    fields: dict[str, Any] = {}
    if settings.max_tokens is not None:
        fields["max_tokens"] = settings.max_tokens
    if settings.reasoning_effort is not None:
        fields["reasoning_effort"] = settings.reasoning_effort
    if settings.params:
        fields["extra_params"] = dict(settings.params)
    if settings.instructions_in_user:
        fields["instructions_in_user"] = True  # the judge sees other messages
    return fields


def stored_fields(plan: Plan, call: Call, result: CallResult | None = None) -> dict[str, Any]:
    """What a ledger entry says about the judgment beside its reply (and what a replay miss compares).

    A live call's `result` adds what was actually sent, and what was configured but not sent, and why.
    """
    fields = {
        "model": call.model_id,
        "rubric": plan.rubric.name,
        "prompt": call.prompt.name or None,
        "sample": call.sample,
        "criteria": plan.case.criteria,
        "input": plan.case.input,
        "expected": plan.case.expected,
        "output": plan.case.output,
        "messages_sha256": call.messages_sha256,
        "params": {"temperature": plan.settings.judge_temperature(), **dict(call.prompt.params)},
        **requested(plan.settings),
        "key_version": KEY_VERSION,
    }
    if result is not None and result.sent is not None:
        fields["sent"] = dict(result.sent)
        if result.dropped:
            fields["dropped"] = dict(result.dropped)
    return fields


# -- lookup ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """The judge's reply to one call, and where it came from."""

    reply: Reply
    source: str  # "replayed" (ledger), "cached" (local cache) or "live"
    stored: Mapping[str, Any] | None = None  # the ledger entry a replayed reply came from
    result: CallResult | None = None  # a live call's result (its cost)
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # stored beside a new reply (see reply_extra)


def lookup(plan: Plan, runtime: JudgeRuntime) -> tuple[dict[str, Answer], list[Call]]:
    """The stored answers, by key, and the calls that must go live (replay: raise on a miss).

    A key missed in the test's own file is looked up in the rest of the store (keys are content
    hashes: the same key is the same judgment wherever it is filed).  In auto mode an entry found
    there is copied into the test's file, so it migrates; prune later removes the unused copy.
    """
    mode = plan.settings.mode
    ledger = plan.ledger if mode in ("auto", "replay") else None
    answers: dict[str, Answer] = {}
    missing: list[Call] = []
    for call in plan.calls:
        if call.key in answers:
            continue
        entry = ledger.get(call.key) if ledger is not None else None
        if entry is None and ledger is not None:
            entry = adopt_from_elsewhere(runtime, ledger, call.key, copy=mode == "auto")
        if entry is not None:
            answers[call.key] = Answer(Reply(entry["reply"], entry.get("logprobs")), "replayed", entry)
            continue
        if mode == "replay":
            raise _replay_miss(plan, call)
        # The cache is opened on the first ledger miss: a run the ledger answers never imports diskcache.
        cache = runtime.cache if mode == "auto" else None
        value = cache.get(call.key) if cache is not None else None
        if value is not None:
            answers[call.key] = Answer(Reply(value["reply"], value.get("logprobs")), "cached", extra=reply_extra(value))
            continue
        missing.append(call)
    return answers, missing


_INDEXES: weakref.WeakKeyDictionary[JudgeRuntime, VerdictIndex] = weakref.WeakKeyDictionary()


def stored_elsewhere(runtime: JudgeRuntime) -> VerdictIndex:
    """The runtime's index of the whole store, made on first need (a run the test files answer never walks)."""
    index = _INDEXES.get(runtime)
    if index is None:
        from .store import VerdictIndex

        index = _INDEXES[runtime] = VerdictIndex.for_layout(runtime.rootdir, runtime.store_root)
    return index


def adopt_from_elsewhere(runtime: JudgeRuntime, ledger: Ledger, key: str, *, copy: bool) -> dict[str, Any] | None:
    """The entry for `key` from another verdict file, or None; with `copy`, written into `ledger` too.

    The other file's entry is also marked used (through the runtime's Ledger of that file), so a
    prune after a replay that relied on it keeps it.
    """
    found = stored_elsewhere(runtime).find(key)
    if found is None:
        return None
    path, entry = found.path, found.entry
    if path == ledger.path:
        return None
    other = runtime.ledgers.get(path)
    if other is None:
        from .store import Ledger

        other = runtime.ledgers[path] = Ledger(path, "")
    other.used.add(key)
    if copy:
        try:
            ledger.adopt(key, entry)
        except (StoreError, OSError) as exc:  # replayed all the same; a later writable run makes the copy
            warn_unwritten(ledger.path, key, exc, kept=True)
    return dict(entry)


def _replay_miss(plan: Plan, call: Call) -> JudgeError:
    from .replay_miss import replay_miss  # the diagnosis loads only when a replay misses

    ledger = plan.ledger
    return replay_miss(
        call.key,
        stored_fields(plan, call),
        test=plan.context.nodeid if plan.context is not None else None,
        stored=ledger.entries() if ledger is not None else None,
        ledger_path=ledger.path if ledger is not None else None,
        settings=plan.settings,
    )


# -- live calls (on the background loop) -------------------------------------------------------


async def call_live(plan: Plan, runtime: JudgeRuntime, missing: Sequence[Call]) -> dict[str, Answer]:
    """Make the missing calls concurrently; the first error is raised once all have finished."""
    deadline = plan.started + plan.settings.timeout
    results = await asyncio.gather(
        *(_call_one(plan, runtime, call, deadline) for call in missing), return_exceptions=True
    )
    answers: dict[str, Answer] = {}
    for call, result in zip(missing, results, strict=False):
        if isinstance(result, BaseException):
            raise result
        answers[call.key] = result
    return answers


async def _call_one(plan: Plan, runtime: JudgeRuntime, call: Call, deadline: float) -> Answer:
    settings = plan.settings
    cache: LocalCache | None = runtime.cache if settings.mode in ("auto", "refresh") else None
    async with runtime.key_lock(call.key), runtime.semaphore():
        handle = await asyncio.to_thread(cache.acquire, call.key, deadline) if cache is not None else None
        try:
            if settings.mode == "auto" and cache is not None:
                value = await asyncio.to_thread(cache.get, call.key)
                if value is not None:  # another worker paid for it while we waited
                    return Answer(Reply(value["reply"], value.get("logprobs")), "cached", extra=reply_extra(value))
            runtime.check_budget()
            result = await _send(plan, runtime, call, deadline)
            plan.live_calls[0] += 1  # paid for, whether or not its reply parses
            note_request(plan, runtime, call, result)
            result = runtime.count(result, call.request.model)  # priced, counted against the budgets
            result, earlier = await _until_parsed(plan, runtime, call, result, deadline)
            reply = Reply(result.text, result.logprobs)
            extra = reply_extra(
                {"structured": format_used(call.request.params, result.sent), "retried_from": earlier or None}
            )
            if cache is not None:
                value = {
                    "reply": result.text,
                    "logprobs": result.logprobs,
                    "model": call.model_id,
                    "cost_usd": result.cost_usd,
                    **extra,
                }
                await asyncio.to_thread(cache.set, call.key, {k: v for k, v in value.items() if v is not None})
            return Answer(reply, "live", result=result, extra=extra)
        finally:
            if cache is not None and handle is not None:
                cache.release(handle)


async def _until_parsed(
    plan: Plan, runtime: JudgeRuntime, call: Call, result: CallResult, deadline: float
) -> tuple[CallResult, list[str]]:
    """The live result whose reply parses, asking again in the same conversation up to
    --judge-parse-retries times (see `reask`); with the earlier replies.  A reply cut off at
    max_tokens is not asked again (the same cap would cut it again); an unparseable reply is never stored."""
    earlier: list[str] = []
    request = call.request
    while True:
        if result.finish_reason == "length":
            raise VerdictParseError(
                f"the judge's reply was cut off at max_tokens (finish_reason=length), key {call.key[:12]}; "
                "allow the judge more tokens. Nothing was stored.",
                result.text,
                key=call.key,
            )
        try:
            parse(plan.rubric, call, Reply(result.text, result.logprobs))
        except VerdictParseError:
            if len(earlier) >= plan.settings.parse_retries:
                raise
        else:
            return result, earlier
        earlier.append(result.text)
        request = reask_request(request, result.text)
        runtime.check_budget()
        remaining = max(0.001, deadline - time.monotonic())
        again = await call_with_retries(
            plan.backend,
            request,
            retries=plan.settings.retries,
            timeout=remaining,
            limit_s=plan.settings.timeout,
            limiter=runtime.limiter(),
        )
        plan.live_calls[0] += 1
        again = runtime.count(again, request.model)  # a re-ask is paid and counted like any call
        result = combined(result, again)


def reply_extra(fields: Mapping[str, Any]) -> dict[str, Any]:
    """What is stored beside a new reply: the response_format used, and earlier replies asked again."""
    return {k: fields[k] for k in ("structured", "retried_from") if fields.get(k) is not None}


async def _send(plan: Plan, runtime: JudgeRuntime, call: Call, deadline: float) -> CallResult:
    """One call, with retries; a judge that refuses the log-probabilities a rubric asked for is asked
    again without them (the rubric then scores plainly), with a warning."""
    from .rubrics.likert import LogprobsFallbackWarning, without_logprobs

    settings = plan.settings
    request = call.request
    try:
        remaining = max(0.001, deadline - time.monotonic())
        return await call_with_retries(
            plan.backend,
            request,
            retries=settings.retries,
            timeout=remaining,
            limit_s=settings.timeout,
            limiter=runtime.limiter(),
        )
    except UnsupportedParamError as exc:
        plain = without_logprobs(request, exc)
        if plain is None:
            raise
        warnings.warn(
            LogprobsFallbackWarning(
                f"llmjudge: {request.model} takes no log-probabilities ({exc.unsupported_param} refused): "
                f"{plan.rubric.name} judgments asking for them are scored plainly (details['scoring'] == 'plain')"
            ),
            stacklevel=1,
        )
    remaining = max(0.001, deadline - time.monotonic())
    return await call_with_retries(
        plan.backend,
        plain,
        retries=settings.retries,
        timeout=remaining,
        limit_s=settings.timeout,
        limiter=runtime.limiter(),
    )


# -- finish ------------------------------------------------------------------------------------


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
            warnings.warn(
                StoredScoreWarning(
                    f"{plan.ledger.path if plan.ledger else ''}: key {call.key[:12]} stores score {stored} but its "
                    f"reply parses to {result.score}; the reply wins "
                    "(re-record, or run `python -m pytest_llmjudge reparse`)"
                ),
                stacklevel=2,
            )
    write_back(plan, answers, parsed, runtime)
    return verdict_of(plan, samples_of(plan, answers, parsed), answers)


def write_back(
    plan: Plan, answers: Mapping[str, Answer], parsed: Mapping[str, ParsedVerdict], runtime: JudgeRuntime
) -> None:
    """Store new replies in the test's ledger (auto, refresh); note drift against what refresh replaced."""
    mode = plan.settings.mode
    ledger = plan.ledger
    if mode not in ("auto", "refresh") or ledger is None:
        return
    previous = ledger.entries() if mode == "refresh" else {}
    unwritten: tuple[str, BaseException] | None = None
    for call in plan.calls:
        answer = answers[call.key]
        if answer.source == "replayed":
            continue
        result = parsed[call.key]
        entry = {
            **stored_fields(plan, call, answer.result),
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
                        "test": ledger.nodeid,
                        "key": call.key,
                        "old": old["score"],
                        "new": result.score,
                        "flipped": flipped,
                    }
                )
        try:
            ledger.put(call.key, entry)
        except (StoreError, OSError) as exc:
            unwritten = unwritten or (call.key, exc)
    if unwritten is not None:
        kept = runtime.cache is not None
        warn_unwritten(ledger.path, *unwritten, kept=kept)


def warn_unwritten(path: Path, key: str, exc: BaseException, *, kept: bool) -> None:
    """Say, once per judgment, that its verdict file could not be written, and where the verdict is."""
    if isinstance(exc, OSError):
        reason = f"{exc.__class__.__name__}: {exc.strerror or exc}"
    else:
        reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    where = (
        "It is kept in the local cache, and the next run in auto mode with a writable store writes it"
        if kept
        else "No local cache is in use (pytest's cache provider is off), so it must be judged again"
    )
    message = (
        f"llmjudge: cannot write the verdict file {path} ({reason}); the verdict (key {key[:12]}) was not stored "
        f"there. {where}: make {path.parent} writable, or point --judge-store at a writable directory."
    )
    with contextlib.suppress(Warning):  # warnings turned into errors: the paid verdict still stands
        warnings.warn(LedgerWriteWarning(message), stacklevel=3)


def samples_of(plan: Plan, answers: Mapping[str, Answer], parsed: Mapping[str, ParsedVerdict]) -> list[Sample]:
    """One Sample per (model, sample index): the rubric combines that sample's prompts."""
    groups: dict[tuple[str, int], list[Call]] = {}
    for call in plan.calls:
        groups.setdefault((call.model_id, call.sample), []).append(call)
    samples = []
    for (model_id, sample), calls in groups.items():
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
        latency_s=round(time.monotonic() - plan.started, 4) if live else None,
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


def overall_source(sources: set[str]) -> str:
    """The costliest way any part was answered: live, then cached, then replayed."""
    for source in ("live", "cached", "replayed"):
        if source in sources:
            return source
    return "replayed"


# -- running the stages, and recording each judgment for reports -------------------------------


def run(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """All stages; the live calls (if any) run on the background loop while this thread waits."""
    try:
        answers, missing = lookup(plan, runtime)
        if missing:
            answers.update(runtime.loop.run(call_live(plan, runtime, missing)))
        verdict = finish(plan, answers, runtime)
    except (JudgeError, JudgmentFailed) as exc:
        note_error(plan, exc)
        raise
    note_verdict(plan, verdict)
    return verdict


async def arun(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """`run`, awaitable: the live calls are awaited, so the caller's own event loop keeps running."""
    try:
        answers, missing = lookup(plan, runtime)
        if missing:
            answers.update(await runtime.loop.wrap(call_live(plan, runtime, missing)))
        verdict = finish(plan, answers, runtime)
    except (JudgeError, JudgmentFailed) as exc:
        note_error(plan, exc)
        raise
    note_verdict(plan, verdict)
    return verdict


def run_many(plans: Sequence[Plan], runtime: JudgeRuntime) -> list[Verdict]:
    """Several judgments, their live calls all concurrent; the first error is raised after all finish."""
    errors: list[BaseException] = []
    looked_up: list[tuple[Plan, dict[str, Answer], list[Call]]] = []
    for each in plans:
        try:
            answers, missing = lookup(each, runtime)
        except (JudgeError, JudgmentFailed) as exc:
            note_error(each, exc)
            errors.append(exc)
            continue
        looked_up.append((each, answers, missing))

    going_live = [(each, answers, missing) for each, answers, missing in looked_up if missing]

    async def live_all() -> list[dict[str, Answer] | BaseException]:
        return await asyncio.gather(
            *(call_live(each, runtime, missing) for each, _, missing in going_live), return_exceptions=True
        )

    failed: set[int] = set()
    if going_live:
        for (each, answers, _), outcome in zip(going_live, runtime.loop.run(live_all()), strict=False):
            if isinstance(outcome, BaseException):
                note_error(each, outcome)
                errors.append(outcome)
                failed.add(id(each))
            else:
                answers.update(outcome)
    verdicts = []
    for each, answers, _ in looked_up:
        if id(each) in failed:
            continue
        try:
            verdict = finish(each, answers, runtime)
        except (JudgeError, JudgmentFailed) as exc:
            note_error(each, exc)
            errors.append(exc)
            continue
        note_verdict(each, verdict)
        verdicts.append(verdict)
    if errors:
        raise errors[0]
    return verdicts


def note_request(plan: Plan, runtime: JudgeRuntime, call: Call, result: CallResult) -> None:
    """Keep what a live call sent for the verdict record; say once per run what a model was not sent."""
    if result.sent is None or call.model_id in plan.requests:
        return
    dropped = dict(result.dropped or {})
    plan.requests[call.model_id] = (dict(result.sent), dropped)
    for name, why in dropped.items():
        runtime.note(f"llmjudge: {name} not sent: {why}")


def note_verdict(plan: Plan, verdict: Verdict) -> None:
    """Add the verdict's record to its test's records (nothing outside a test)."""
    context = plan.context
    if context is not None:  # built (and redacted) only where a report reads the whole record
        pending = PendingRecord(
            verdict,
            nodeid=context.nodeid,
            output=plan.case.output,
            live_calls=plan.live_calls[0],
            threshold_given=plan.threshold_given,
            requests=plan.requests,
            whole=context.whole_records,
        )
        context.records.append(pending)


_NOTED = "_llmjudge_noted"  # set on an error once recorded: the facade and run_many may both see it


def note_error(plan: Plan, exc: BaseException) -> None:
    """Add an error's record (and an unparseable reply as a report section) to its test, once."""
    context = plan.context
    if context is None or getattr(exc, _NOTED, False):
        return
    setattr(exc, _NOTED, True)
    if isinstance(exc, JudgmentFailed):
        return  # its verdict was already recorded
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
    )
    context.records.append(record)
    if isinstance(exc, VerdictParseError) and exc.text:
        context.sections.append((f"llmjudge: unparseable judge reply (key {exc.key[:12]})", redact(exc.text)))
