"""Plan: merge a judgment's settings, choose its backend, and name every call by its key.

Planning is synchronous and light: a replay never starts the background loop or imports LiteLLM.
The settings merge and the `Setup` the default rubric's calls share under given settings are memoised
on the run (`PlanMemo`: a suite repeats a few combinations), so planning a judgment is mostly the
case's own work: its prompts and the messages in its keys.

`stored_elsewhere` is the whole store's index, made on first need: planning asks it which model
recorded a judgment when none is configured, and lookup finds there the keys filed under other tests.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

from ..backends.formats import register_schema
from ..backends.litellm import LiteLLMBackend
from ..case import Case
from ..errors import JudgeError
from ..keys import KEY_VERSION, KeyTemplate, canonical_json
from ..redact import redact, redactor
from ..rubrics.base import Prompt, Rubric, resolve_rubric
from ..settings import MARKER_KEYS, SamplesWarning, SettingError, Settings
from .aggregate import AGGREGATES
from .item_cap import capped
from .structured import Formats, format_for, structured_backend

if TYPE_CHECKING:
    from ..backends.protocol import Backend, CallRequest, CallResult
    from ..runtime import JudgeRuntime, TestContext
    from ..store.index import VerdictIndex
    from ..store.verdict_file import VerdictFile
    from .recorded import Side


class Options(NamedTuple):
    """What one judgment may set for itself: `assert_judged`'s arguments after output and criteria.

    The public functions spell these out for IDE help; everything inside takes this one definition.
    (A NamedTuple, as the pipeline's other plain records: every judgment makes one, and a frozen
    dataclass takes three times as long to make.)
    """

    input: Any = None
    expected: Any = None
    threshold: float | None = None
    model: str | Sequence[str] | None = None
    rubric: Any = None
    samples: int | None = None
    aggregate: str | None = None
    band: float | None = None
    context: Any = None


class Call(NamedTuple):
    """One judge call: who judges, which sample, which of the rubric's prompts (in which step), and its key."""

    model_id: str  # the judge's id in the key (the model, or a custom backend's name)
    sample: int
    prompt: Prompt
    key: str
    messages_sha256: str  # stored beside each verdict, checked on replay: made with the key, from one encoding
    send_model: str  # the model sent ("" where a custom backend has none: its id is sent)
    setup: Setup
    step: int = 1  # which of a rubric's steps (see Rubric.next_prompts); its messages, not this, join the key
    run: int = 0  # which run of a repeated test (see `suites`): joins the key when not 0

    @property
    def request(self) -> CallRequest:
        """What a live call sends, made when asked: a replay sends nothing."""
        return self.setup.request(self)


class Setup:
    """What the calls of every judgment with the same settings, rubric and backend share.

    The backend set for structured output, the rubric's description, the parameters each call asks
    for, and (where kept for reuse) each judge's and sample's key template: a suite judges many
    outputs the same way, and planning one is then only the case's own work.
    """

    __slots__ = (
        "api_base",
        "backend",
        "described",
        "params",
        "rubric",
        "settings",
        "structured",
        "templates",
        "wanted",
    )

    def __init__(
        self,
        settings: Settings,
        rubric: Rubric,
        backend: Backend,
        *,
        reused: bool = False,
        formats: Formats | None = None,
    ) -> None:
        """`reused`: judgment after judgment (the key templates are then kept; else each key is made in full).
        `formats`: the run's reply-schema references by rubric (see `format_for`)."""
        self.settings = settings
        self.rubric = rubric
        self.backend, self.structured = structured_backend(backend, settings.structured)
        self.described = rubric.describe()
        self.wanted = format_for(rubric, self.structured, canonical_json(self.described), formats)
        # A prompt with no parameters of its own asks for these (and its key names them).
        self.params: dict[str, Any] = {"temperature": settings.judge_temperature()}
        if self.wanted is not None:
            self.params["response_format"] = self.wanted
        self.api_base = settings.api_base if isinstance(self.backend, LiteLLMBackend) else None
        self.templates: dict[tuple[str, int, int], KeyTemplate] | None = {} if reused else None

    def calls(self, ids: Sequence[tuple[str, str]], prompts: Sequence[Prompt], run: int = 0) -> tuple[Call, ...]:
        """Every call of a judgment: each judge (id in the key, model sent), each sample, each prompt;
        `run`: the repeated test's run they belong to."""
        return tuple(
            self.call(model_id, send_model, sample, prompt, run=run)
            for model_id, send_model in ids
            for sample in range(self.settings.samples)
            for prompt in prompts
        )

    def call(self, model_id: str, send_model: str, sample: int, prompt: Prompt, step: int = 1, *, run: int = 0) -> Call:
        """One call, keyed: who judges and what it is asked, and which run of a repeated test asks; how the
        call travels (api base, proxy, key) stays out of its key."""
        if not prompt.params and prompt.schema is None and self.templates is not None:
            # A prompt without parameters of its own asks for `params`: its keys differ only in the messages.
            template = self.templates.get((model_id, sample, run))
            if template is None:
                fields = self._fields(model_id, sample, self.params, run)
                template = self.templates[(model_id, sample, run)] = KeyTemplate(fields)
        else:
            template = KeyTemplate(self._fields(model_id, sample, self.params_for(prompt), run))
        key, messages_sha256 = template.keyed(prompt.messages)
        return Call(model_id, sample, prompt, key, messages_sha256, send_model, self, step, run)

    def asked(self, prompt: Prompt) -> dict[str, Any]:
        """The parameters a call of `prompt` asks for beside the temperature: the prompt's own, and the
        reply schema's reference (which takes the place of any the rubric set)."""
        wanted = self.wanted
        if prompt.schema is not None and self.structured != "off":  # a step's own reply shape
            wanted = register_schema(*prompt.schema)
        if wanted is None:
            return dict(prompt.params)
        return {**prompt.params, "response_format": wanted}

    def params_for(self, prompt: Prompt) -> Mapping[str, Any]:
        """Every parameter a call of `prompt` asks for, as its key and its verdict file name them.
        A prompt without parameters of its own asks for the Setup's: shared, read only."""
        if not prompt.params and prompt.schema is None:
            return self.params
        return {"temperature": self.params["temperature"], **self.asked(prompt)}

    def _fields(self, model_id: str, sample: int, params: Mapping[str, Any], run: int = 0) -> dict[str, Any]:
        # The request options and the run join the key only when set, so a key made without them never changes.
        fields: dict[str, Any] = {
            "model": model_id,
            "params": params,
            "sample": sample,
            "rubric": self.described,
            **requested(self.settings),
        }
        if run:
            fields["run"] = run
        return fields

    def request(self, call: Call) -> CallRequest:
        """What `call` sends, as configured."""
        from ..backends.protocol import CallRequest

        settings = self.settings
        return CallRequest(
            model=call.send_model or call.model_id,
            messages=[dict(m) for m in call.prompt.messages],
            api_base=self.api_base,
            temperature=self.params["temperature"],
            params=self.asked(call.prompt),
            max_tokens=settings.reply_cap(),  # the default cap is sent, never keyed (see `requested`)
            reasoning_effort=settings.reasoning_effort,
            extra_params=settings.params,
            instructions_in_user=settings.instructions_in_user,
        )


C = TypeVar("C")  # a plan's kind of call: a judge `Call`, or a `Generation`


@dataclass(slots=True, kw_only=True)
class Planned(Generic[C]):
    """What every plan holds, whatever it calls: its calls, settings, backend and verdict file, and
    the counts the live stage keeps.  The stages only read it, but for those counts.

    Not frozen: every judgment makes one, and a frozen dataclass sets each field the slow way.
    """

    what: ClassVar[Literal["verdict", "generation"]]  # its section of the verdict file, and its noun

    calls: tuple[C, ...]
    settings: Settings
    backend: Backend
    verdict_file: VerdictFile | None
    context: TestContext | None
    live_calls: list[int] = dataclasses.field(default_factory=lambda: [0])  # calls sent, parsed or not
    cached_calls: list[int] = dataclasses.field(default_factory=lambda: [0])  # answered from the local cache
    # When each step's live calls were in flight (wall clock, from the first call's start to the last reply):
    # the judgment's judging time, which neither planning nor lookup nor copying counts in.
    live_spans: list[tuple[float, float]] = dataclasses.field(default_factory=list)
    paid: list[CallResult] = dataclasses.field(default_factory=list)  # those calls, priced: what an error cost
    # model id -> (parameters sent, parameters not sent and why), from its first live call
    requests: dict[str, tuple[dict[str, Any], dict[str, str]]] = dataclasses.field(default_factory=dict)

    def live_s(self) -> float:
        """Seconds the judgment's calls have been in flight so far, step by step (see `live_spans`)."""
        return sum(end - start for start, end in self.live_spans)

    def live_span(self) -> tuple[float, float] | None:
        """From the first live call's start to the last reply (wall clock), or None: nothing went live."""
        spans = self.live_spans
        return (spans[0][0], spans[-1][1]) if spans else None


@dataclass(slots=True, kw_only=True)
class Plan(Planned[Call]):
    """One judgment, ready to look up: its case, rubric, resolved settings and calls."""

    what = "verdict"

    case: Case
    rubric: Rubric
    aggregate: str
    band: float
    threshold_given: bool = True  # False: a `score` with no threshold anywhere (no pass/fail of its own)
    clean: Callable[[str], str] = redact  # the judgment's redactor: its verdict file's name, its record

    @property
    def threshold(self) -> float:
        return self.settings.threshold

    def chains(self) -> dict[tuple[str, int], list[Call]]:
        """The calls of each judge and sample, in the order they were made: a chain of steps, each
        built from its own chain's earlier replies and combined into one sample."""
        chains: dict[tuple[str, int], list[Call]] = {}
        for call in self.calls:
            chains.setdefault((call.model_id, call.sample), []).append(call)
        return chains


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
    marker: Mapping[str, Any] = context.marker if context is not None else {}
    memo = memo_of(runtime)
    settings, merged = _merged_settings(runtime.settings, marker, overrides, options, memo)
    if settings.samples > 1 and settings.judge_temperature() == 0:
        warn_identical_samples(settings)
    aggregate = options.aggregate or overrides.get("aggregate") or marker.get("aggregate") or "mean"
    if aggregate not in AGGREGATES:
        raise JudgeError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {aggregate!r}")
    band = _check_band(
        next((b for b in (options.band, overrides.get("band"), marker.get("band")) if b is not None), 0.0)
    )
    case = Case.build(output, criteria, options.input, options.expected, options.context)
    asked = options.rubric if options.rubric is not None else overrides.get("rubric", marker.get("rubric"))
    rubric = resolve_rubric(asked) if asked is not None else None
    if backend is None and context is not None:
        backend = context.judge_backend()
    setup = _setup_for(settings, rubric, backend, memo, merged)
    rubric = setup.rubric
    (prompts,) = capped(rubric, case, settings, [rubric.prompts(case)], alike=True)
    # The environment's secrets are read at most once per judgment, when a text of it is first redacted.
    clean = redactor() if context is not None else redact
    verdict_file = runtime.verdict_file_for(context, clean)

    # The judge the run names (a model, or a backend of its own); none: whichever recorded the judgment.
    names_judge = bool(settings.model) or not isinstance(setup.backend, LiteLLMBackend)
    run = context.run if context is not None else 0  # a repeated test's run: its calls are its own
    calls = setup.calls(judge_ids(settings, setup.backend), prompts, run) if names_judge or verdict_file is None else ()
    if settings.mode in ("replay", "auto") and verdict_file is not None:
        # Not all stored in the test's file as the run asks (none asked: no judge named), nor elsewhere in the
        # store (a renamed test): as recorded where the run leaves the judge's side unset (a clone's plain
        # pytest, CI), or under an earlier form of the rubric (see `recorded`).
        keys = [call.key for call in calls]
        if not keys or not verdict_file.holds_all(keys, lambda key: stored_elsewhere(runtime).find(key) is not None):
            from .recorded import find_recorded  # on a miss only: a replay of what the run asks never loads it

            primary = setup

            def keyed(adopted: Settings, side: Side, form: Rubric) -> tuple[tuple[Setup, tuple[Call, ...]], list[str]]:
                made = memo.recorded_setup(primary, side, form, adopted)
                asked = prompts if form is rubric else capped(form, case, adopted, [form.prompts(case)], alike=True)[0]
                found_calls = made.calls(judge_ids(adopted, made.backend), asked, run)
                return (made, found_calls), [call.key for call in found_calls]

            judges = {model_id for model_id, _ in judge_ids(settings, setup.backend)} if names_judge else None
            found = find_recorded(
                verdict_file, lambda: stored_elsewhere(runtime), settings, rubric, keyed, judges=judges
            )
            if found is not None:
                settings, rubric, (setup, calls) = found.settings, found.rubric, found.keyed
            elif not names_judge:  # a miss, and no judge to judge it: diagnosed as a replay's
                settings, calls = _unjudged(settings, setup, verdict_file, prompts, run)
    given = (
        asserts
        or options.threshold is not None
        or "threshold" in overrides
        or "threshold" in marker
        or settings.sources.get("threshold", "default") != "default"
    )
    return Plan(
        calls=calls,
        settings=settings,
        backend=setup.backend,
        verdict_file=verdict_file,
        context=context,
        case=case,
        rubric=rubric,
        aggregate=aggregate,
        band=band,
        threshold_given=given,
        clean=clean,
    )


def _unjudged(
    settings: Settings, setup: Setup, verdict_file: VerdictFile, prompts: Sequence[Prompt], run: int
) -> tuple[Settings, tuple[Call, ...]]:
    """A judgment nothing stored stands for, with no judge to judge it live: planned as a replay, so its miss
    is diagnosed (and counted) as one, against the one judge this test recorded with where it has one."""
    from .recorded import adopted as adopted_settings
    from .recorded import only_side

    side = only_side(verdict_file)
    model = side.model if side is not None else NO_MODEL
    adopted = adopted_settings(settings, side) if side is not None else settings
    if adopted is not settings:  # keyed as recorded but for the case: the miss names what the case changed
        settings, setup = adopted, Setup(adopted, setup.rubric, setup.backend)
    if settings.mode == "auto":
        settings = settings._replace(mode="replay", mode_reason=NO_JUDGE_TO_RECORD)
    return settings, setup.calls([(model, model)], prompts, run)


# Why a judgment that nothing stored stands for is not judged, where the run names no judge model.
NO_JUDGE_TO_RECORD = (
    "no judge model is configured, so only what is recorded can be judged: pass --judge-model=MODEL (or "
    "judge_model in the ini file, or LLMJUDGE_MODEL) to judge the rest"
)


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


NO_MODEL = "(no judge model configured)"  # names the calls of a replay that found no recorded model

# A judgment that must go live with no judge model configured (what is stored replays without one).
NO_JUDGE_MODEL = (
    "no judge model configured: pass --judge-model=MODEL (or set judge_model in the ini file, or LLMJUDGE_MODEL). "
    "The model is part of every verdict's key, so set it where recording and replay both see it."
)


def stored_elsewhere(runtime: JudgeRuntime) -> VerdictIndex:
    """The runtime's index of the whole store, made on first need (a run the test files answer never walks)."""
    memo = memo_of(runtime)
    if memo.index is None:
        from ..store.index import VerdictIndex

        memo.index = VerdictIndex.for_layout(runtime.rootdir, runtime.store_root)
    return memo.index


class PlanMemo:
    """What planning keeps for one run: it lives on the run's runtime (`JudgeRuntime.plans`) and ends with it.

    A suite's judgments repeat a few combinations of marker and arguments: merging them into the
    run's settings (parsing and copying) and setting up the default rubric's calls is most of
    planning's own cost.  Both are kept by that combination's key, a bounded number of them.
    """

    __slots__ = ("formats", "index", "merged", "recorded", "setups")

    def __init__(self) -> None:
        self.merged: dict[tuple[Any, ...], Settings] = {}  # the run's settings with a combination merged in
        self.setups: dict[tuple[Any, ...], Setup] = {}  # the default rubric through LiteLLM, by the same
        self.index: VerdictIndex | None = None  # the whole store's index (`stored_elsewhere`), on first need
        self.formats: Formats = {}  # each rubric's reply-schema reference, for the Setups made judgment by judgment
        # A Setup's judge side as recorded (see `recorded`), kept with the Setup and rubric it was made from
        self.recorded: dict[tuple[int, Side, int], tuple[Setup, Rubric, Setup]] = {}

    def recorded_setup(self, setup: Setup, side: Side, form: Rubric, settings: Settings) -> Setup:
        """The Setup of `setup`'s judgments with `side`'s judge `settings` and the rubric `form`: kept where
        `setup` is (the default rubric's), since a suite recorded with flags that no run repeats adopts the
        same side judgment after judgment."""
        reused = setup.templates is not None
        key = (id(setup), side, id(form))
        held = self.recorded.get(key) if reused else None
        if held is not None and held[0] is setup and held[1] is form:
            return held[2]
        made = Setup(settings, form, setup.backend, reused=reused, formats=self.formats)
        if reused:
            if len(self.recorded) >= 64:
                self.recorded.clear()
            self.recorded[key] = (setup, form, made)
        return made


def memo_of(runtime: JudgeRuntime) -> PlanMemo:
    """The run's planning memo, made on first need."""
    memo = runtime.plans
    if not isinstance(memo, PlanMemo):
        memo = runtime.plans = PlanMemo()
    return memo


def _merged_settings(
    base: Settings, marker: Mapping[str, Any], overrides: Mapping[str, Any], options: Options, memo: PlanMemo
) -> tuple[Settings, tuple[Any, ...] | None]:
    """The run's settings `base` with the marker's and the judgment's merged in, and the combination's
    key in `memo` (`()` for `base` itself; None where a value is unhashable: nothing is kept)."""
    if isinstance(options.threshold, bool):
        raise JudgeError("threshold must be a number in [0, 1], not a bool")
    if not marker and not overrides and options.model is None and options.samples is None:
        # The common case, an assertion with at most its own threshold.
        threshold = options.threshold
        if threshold is None:
            return base, ()
        from_marker: dict[str, Any] = {}
        given: dict[str, Any] = {"threshold": threshold}
    else:
        from_marker = {k: v for k, v in marker.items() if k in MARKER_KEYS} if marker else {}
        given = {k: v for k, v in overrides.items() if k in MARKER_KEYS and k != "rubric"} if overrides else {}
        for name in ("threshold", "model", "samples"):
            value = getattr(options, name)
            if value is not None:
                given[name] = value
        if not from_marker and not given:  # nothing to merge: the session's settings as they are
            return base, ()
    # The value's type is part of the key: True == 1, but they may not parse alike.
    typed = (*_typed(from_marker), None, *_typed(given))
    key: tuple[Any, ...] | None = typed
    try:
        settings = memo.merged.get(typed)
    except TypeError:  # an unhashable value (a list of models): merged without the memo
        key = settings = None
    if settings is None:
        try:
            settings = base.with_marker(from_marker).with_marker(given, where="assert_judged")
        except SettingError as exc:
            raise JudgeError(str(exc)) from None
        if key is not None:
            if len(memo.merged) >= 256:
                memo.merged.clear()
            memo.merged[key] = settings
    return settings, key


def _typed(values: Mapping[str, Any]) -> list[tuple[str, type, Any]]:
    return [(k, type(v), v) for k, v in values.items()]


def _check_band(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 0.5:
        raise JudgeError(
            f"band must be a number in [0, 0.5] (the inconclusive margin around the threshold), got {value!r}"
        )
    return float(value)


def _setup_for(
    settings: Settings, rubric: Rubric | None, given: Any, memo: PlanMemo, merged: tuple[Any, ...] | None
) -> Setup:
    """The Setup for a judgment; `rubric` None: the default kind.  The default kind judged through
    LiteLLM (most judgments) shares one Setup, and one rubric, per combination `merged` in the run."""
    if rubric is None and given is None and merged is not None:
        setup = memo.setups.get(merged)
        if setup is None:
            if len(memo.setups) >= 64:
                memo.setups.clear()
            setup = memo.setups[merged] = Setup(settings, resolve_rubric(None), LiteLLMBackend(), reused=True)
        return setup
    rubric = rubric if rubric is not None else resolve_rubric(None)
    return Setup(settings, rubric, as_backend(given), formats=memo.formats)


def as_backend(given: Any) -> Backend:
    """The Judge's own backend or the test's `judge_backend` fixture value; LiteLLM where it is None."""
    if given is None:
        return LiteLLMBackend()
    # From their modules, not the package's lazy names: this runs for every judgment with a backend of its own.
    from ..backends.callable import CallableBackend
    from ..backends.protocol import Backend

    # A backend object already speaks the protocol; a bare callable is wrapped.
    if isinstance(given, Backend):
        return given
    if callable(given):
        return CallableBackend(given)
    raise JudgeError(f"judge_backend must be a callable taking the chat messages, or None; got {given!r}")


def judge_ids(settings: Settings, backend: Backend) -> list[tuple[str, str]]:
    """(id in the key, model sent) per judge.  A custom backend's name, or the model, is the id."""
    models = settings.model
    if isinstance(backend, LiteLLMBackend):
        if not models:
            raise JudgeError(NO_JUDGE_MODEL)
        return [(m, m) for m in models]
    name = getattr(backend, "name", None)
    if not models:
        fn = getattr(backend, "fn", backend)
        return [(name or f"custom:{getattr(fn, '__qualname__', type(fn).__name__)}", "")]
    if name and len(models) == 1:
        return [(name, models[0])]
    return [(f"{name}:{m}" if name else m, m) for m in models]


def requested(settings: Settings) -> dict[str, Any]:
    """The request options that are set, as the key and the verdict file name them (the configured values:
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


def step_name(rubric: Rubric, step: int) -> str:
    """How a stored entry and a replay miss name a step: its number, and its name where the kind gives one."""
    names = rubric.steps
    return f"{step} of {len(names)} ({names[step - 1]})" if step <= len(names) else str(step)


def case_fields(case: Case) -> dict[str, Any]:
    """What a stored entry says of the case it judged (the store's `CASE_FIELDS`): made once per judgment,
    so its entries share it, and the store keeps it once."""
    fields: dict[str, Any] = {
        "criteria": case.criteria,
        "input": case.input,
        "expected": case.expected,
        "output": case.output,
    }
    if case.context is not None:  # only where there is one: an entry without reads as it always has
        fields["context"] = list(case.context)
    return fields


def stored_fields(
    plan: Plan, call: Call, result: CallResult | None = None, case: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What a verdict file entry says about the judgment beside its reply (and what a replay miss compares).

    A live call's `result` adds what was actually sent, and what was configured but not sent, and why.
    `case`: the judgment's `case_fields`, where made already.
    """
    fields = {
        "model": call.model_id,
        "rubric": plan.rubric.name,
        "prompt": call.prompt.name or None,
        "sample": call.sample,
        **(case_fields(plan.case) if case is None else case),
        "messages_sha256": call.messages_sha256,
        "params": dict(call.setup.params_for(call.prompt)),
        **requested(plan.settings),
        "key_version": KEY_VERSION,
    }
    if call.step > 1 or plan.rubric.steps:
        fields["step"] = step_name(plan.rubric, call.step)
    if call.run:  # a repeated test's run other than the first (its key holds it too)
        fields["run"] = call.run
    if result is not None and result.sent is not None:
        fields["sent"] = dict(result.sent)
        if result.dropped:
            fields["dropped"] = dict(result.dropped)
    return fields
