"""What a judgment produces, as plain data: the Verdict, its samples, its failure text, its report record.

A `Verdict` is what `judge.score` returns and `assert_judged` checks; `failure_message` is what a
failed one shows.  A `JudgmentRecord` is built from what the pipeline keeps (a `PendingRecord`, built
when a report needs it), carried on the test's teardown report (so it crosses the xdist wire as plain
JSON-safe data), and read by the terminal summary, the JUnit properties and the JSON and HTML reports.
Nothing else describes a judgment to a report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass, field
from typing import Any, Literal, TypedDict

from .errors import JudgeError, Redacted
from .redact import redact, redactor

__all__ = [
    "DriftRecord",
    "JudgmentRecord",
    "PendingRecord",
    "Sample",
    "SampleRecord",
    "StoredScoreWarning",
    "Verdict",
    "VerdictFileWriteWarning",
    "error_record",
    "record_of",
    "verdict_record",
]


class StoredScoreWarning(Redacted, UserWarning):
    """A stored verdict's score differs from what its stored reply parses to; the reply won."""


class VerdictFileWriteWarning(Redacted, UserWarning):
    """A verdict could not be written into its verdict file; the verdict stands (kept in the local cache)."""


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
    source: str  # "replayed" (verdict file), "cached" (local cache) or "live"
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
    # response_format the judge calls used: one of `pipeline.structured.USED` (comma-joined if they
    # differ); None where no call asked for a schema (--judge-structured=off, a custom backend or rubric)
    structured: str | None = field(default=None, repr=False)
    # Tokens of this judgment's live calls as the judge's server counted them; None: no live call, or no usage given.
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def per_model(self) -> dict[str, float]:
        """Each judge model's score (its samples combined); one entry unless a panel judged."""
        return dict(self.details.get("per_model") or {self.model: self.score})

    def failure_message(self, extra: Sequence[str] = ()) -> str:
        """The text a failed judgment shows: score, criteria, the judge's reasoning, where it came from."""
        head = f"judged {self.score:.2f} < threshold {self.threshold:.2f}"
        if self.undecided:
            head = f"judge undecided: {self.score:.2f} is within the inconclusive band around {self.threshold:.2f}"
        lines = [
            head,
            f"  criteria:  {_indent(self.criteria)}",
            f"  reasoning: {_indent(self.reasoning or '(none given)')}",
        ]
        lines.extend(f"  {line}" for line in (*self.notes, *extra))
        per_model = self.details.get("per_model")
        if per_model:
            lines.append("  panel:     " + ", ".join(f"{m}={s:.2f}" for m, s in per_model.items()))
        if len(self.samples) > 1:
            agreement = f"agreement {self.agreement:.0%}" if self.agreement is not None else ""
            spread = f", spread {self.spread:.2f}" if self.spread is not None else ""
            each = ", ".join(f"{s.model}#{s.sample}={s.score:.2f}" for s in self.samples)
            lines.append(f"  samples:   {len(self.samples)} ({agreement}{spread}): {each}")
        lines.append(f"  judge:     {self.model} ({self.source}, key {self.key[:12]})")
        return redact("\n".join(lines))


def _indent(text: str) -> str:
    return text.strip().replace("\n", "\n             ")


class SampleRecord(TypedDict):
    """One sample of one model, as a report shows it."""

    model: str
    sample: int
    score: float
    reasoning: str
    source: str


class DriftRecord(TypedDict, total=False):
    """A refreshed verdict that moved against what was stored."""

    test: str
    key: str
    old: float
    new: float
    flipped: bool


class JudgmentRecord(TypedDict, total=False):
    """One judgment (or one judgment's error) of one test, JSON-safe and redacted.

    A verdict record has `score` .. `latency_s`; an error record has `error` and `message` instead.
    `test_outcome`, `status` and `drift` are added by the session once the test's outcome is known.
    """

    nodeid: str
    criteria: str
    rubric: str
    threshold: float | None  # None: a `judge.score` with no threshold given anywhere (no pass/fail of its own)
    key: str
    output: str
    live_calls: int  # judge calls this judgment sent, including those whose reply did not parse
    cached_calls: int  # calls answered from the local cache (an earlier run's replies); absent when none
    # a verdict
    score: float
    passed: bool  # against the session's threshold; with `threshold` None, the test decides, not this
    verdict: str | None
    confidence: str | None
    reasoning: str
    model: str
    source: str
    samples: list[SampleRecord]
    agreement: float | None
    spread: float | None
    undecided: bool
    cost_usd: float | None
    latency_s: float | None
    live_span: list[float]  # [start, end], wall clock: when its live calls were in flight (the run's judging time)
    structured: str  # response_format used (see `Verdict.structured`); absent where no schema was asked for
    prompt_tokens: int  # live verdicts whose judge reported usage: the tokens of its live calls
    completion_tokens: int
    sent: dict[str, dict[str, Any]]  # live calls: per judge model, the request parameters actually sent
    dropped: dict[str, dict[str, str]]  # live calls: per judge model, parameters configured but not sent, and why
    # a suite's (see `suites`): absent where the test is not repeated or not gated
    run: int  # which run of a repeated test (runs=, --judge-runs) judged it; absent for run 0
    group: str  # the node id of the pass-rate gate's group (where the marker is placed) its test is a case of
    # an error
    error: str  # the exception's class name, as shown to people
    error_kind: str  # what reports count it as: `JudgeError.kind` ("unparseable", "missing", ...)
    message: str
    # added by the session
    test_outcome: str
    status: str
    drift: DriftRecord


def verdict_record(
    verdict: Verdict,
    *,
    nodeid: str,
    output: str,
    live_calls: int = 0,
    cached_calls: int = 0,
    threshold_given: bool = True,
    requests: Mapping[str, tuple[Mapping[str, Any], Mapping[str, str]]] | None = None,
    texts: bool = True,
    named: bool = True,
    clean: Callable[[str], str] | None = None,
    live_span: tuple[float, float] | None = None,
    run: int = 0,
    group: str | None = None,
) -> JudgmentRecord:
    """The report record of a verdict: JSON-safe, redacted.  Without `threshold_given` (a `score` no
    threshold was given for) its `threshold` is None: the test decides with the score, and reports
    should show the score alone (its `passed` is against the session's default threshold only).
    `requests`: per judge model that was called live, the parameters sent and those dropped (and why).
    Without `texts`, the record lacks the texts that need redacting (reasoning, samples, output): what
    the summary and the judgment lines read.  Every text a person reads is redacted here, the
    criteria and the node id (a parametrize id) included: every report and line is made from this.
    Without `named`, it lacks the node id and the criteria too: what the summary counts of a judgment
    it does not name.  `clean`: the judgment's redactor (see `redactor`), else the environment is read now.
    `run` and `group`: the repeated test's run and the gated group, recorded where there are any."""
    clean = clean or redactor()
    record: JudgmentRecord = {"nodeid": clean(nodeid), "criteria": clean(verdict.criteria)} if named else {}
    record |= {
        "rubric": verdict.rubric,
        "score": verdict.score,
        "threshold": verdict.threshold if threshold_given else None,
        "passed": verdict.passed,
        "verdict": verdict.verdict,
        "confidence": verdict.confidence,
    }
    if texts:
        reasoning = record["reasoning"] = clean(verdict.reasoning)
    record |= {"model": verdict.model, "source": verdict.source, "key": verdict.key}
    if texts:
        record["samples"] = [
            {
                "model": s.model,
                "sample": s.sample,
                "score": s.score,
                # One sample's reasoning is the verdict's: redact it once.
                "reasoning": reasoning if s.reasoning == verdict.reasoning else clean(s.reasoning),
                "source": s.source,
            }
            for s in verdict.samples
        ]
    record |= {
        "agreement": verdict.agreement,
        "spread": verdict.spread,
        "undecided": verdict.undecided,
        "cost_usd": verdict.cost_usd,
        "latency_s": verdict.latency_s,
    }
    if live_span is not None:
        record["live_span"] = [round(live_span[0], 3), round(live_span[1], 3)]
    if texts:
        record["output"] = clean(output)[:4000]  # whole, then cut: a secret across the cut is blanked
    record["live_calls"] = live_calls
    if cached_calls:
        record["cached_calls"] = cached_calls
    if verdict.structured is not None:
        record["structured"] = verdict.structured
    if verdict.prompt_tokens is not None or verdict.completion_tokens is not None:
        record["prompt_tokens"] = verdict.prompt_tokens or 0
        record["completion_tokens"] = verdict.completion_tokens or 0
    if requests:
        record["sent"] = {model: dict(sent) for model, (sent, _) in requests.items()}
        dropped = {model: dict(why) for model, (_, why) in requests.items() if why}
        if dropped:
            record["dropped"] = dropped
    _in_suite(record, run, group, clean if named else None)
    return record


def _in_suite(record: JudgmentRecord, run: int, group: str | None, clean: Callable[[str], str] | None) -> None:
    """Mark a record with its repeated test's run and its gated group, where it has them (`clean`: the
    group's node id is a text a person reads, redacted as the record's own node id; None: not named)."""
    if run:
        record["run"] = run
    if group is not None and clean is not None:
        record["group"] = clean(group)


@dataclass(slots=True)
class PendingRecord:
    """A verdict's report record, built when a report needs it.

    Most runs only count their judgments (the summary) and show a line per judgment: both read the
    brief record, which leaves out the long texts (reasoning, output) and redacts only the short ones.
    The full record is built for the JSON and HTML reports, `-v`, JUnit properties and the xdist
    hand-over only.  `whole`: a report will read the whole record, so it is built (and redacted) now,
    under the environment the judgment ran in (a test's monkeypatched key is still there to be
    redacted).  `clean`: the judgment's redactor, made under that environment; without it, a brief
    record built later reads the environment of its time.
    """

    verdict: Verdict
    _: KW_ONLY
    nodeid: str
    output: str
    live_calls: int
    cached_calls: int
    threshold_given: bool
    requests: Mapping[str, tuple[Mapping[str, Any], Mapping[str, str]]] | None
    whole: InitVar[bool] = True
    clean: Callable[[str], str] | None = None
    live_span: tuple[float, float] | None = None
    run: int = 0
    group: str | None = None
    _full: JudgmentRecord | None = field(default=None, init=False)
    _brief: JudgmentRecord | None = field(default=None, init=False)

    def __post_init__(self, whole: bool) -> None:
        if whole:
            self._full = self._build(texts=True)
        settle = getattr(self.clean, "settle", None)
        if settle is not None and self.verdict.latency_s is not None:
            settle()  # the summary may name a timed judgment (the slowest) after its test's environment is gone

    def full(self) -> JudgmentRecord:
        """The record every report reads (built once; a copy each time, so callers may change it)."""
        if self._full is None:
            self._full = self._build(texts=True)
        return self._full.copy()

    def brief(self) -> JudgmentRecord:
        """The record less its redacted texts, enough for the summary and the judgment lines (a copy)."""
        if self._full is not None:
            return self._full.copy()
        if self._brief is None:
            self._brief = self._build(texts=False)
        return self._brief.copy()

    def counted(self) -> JudgmentRecord:
        """What a run that shows no judgment counts: the brief record, less the node id and criteria of
        a judgment the summary never names (an untimed one: a replay's), so that none is redacted
        (a quiet replay that passes reads no environment for its records)."""
        if self._full is not None or self._brief is not None or self.verdict.latency_s is not None:
            return self.brief()
        return self._build(texts=False, named=False)

    def _build(self, *, texts: bool, named: bool = True) -> JudgmentRecord:
        return verdict_record(
            self.verdict,
            nodeid=self.nodeid,
            output=self.output,
            live_calls=self.live_calls,
            cached_calls=self.cached_calls,
            threshold_given=self.threshold_given,
            requests=self.requests,
            texts=texts,
            named=named,
            clean=self.clean,
            live_span=self.live_span,
            run=self.run,
            group=self.group,
        )


# Tested as "a dict or not": nested pytester runs may import this module afresh, and a PendingRecord
# made by one import is no instance of another's class.


def record_of(entry: JudgmentRecord | PendingRecord, view: Literal["full", "brief", "counted"]) -> JudgmentRecord:
    """A test's record (a copy) as the reports read it (`full`), as the summary and the judgment lines read it
    (`brief`: may lack the redacted texts), or as a run that shows no judgment counts it (`counted`, see
    `PendingRecord.counted`)."""
    if isinstance(entry, dict):
        return entry.copy()
    return entry.full() if view == "full" else entry.brief() if view == "brief" else entry.counted()


def error_record(
    exc: BaseException,
    *,
    nodeid: str,
    criteria: str,
    rubric: str,
    key: str,
    threshold: float | None,
    output: str,
    live_calls: int = 0,
    run: int = 0,
    group: str | None = None,
) -> JudgmentRecord:
    """The report record of a judgment that erred: the error's class, its kind (what reports count), the
    message; its texts redacted as a verdict's are; its run and group as a verdict's."""
    clean = redactor()
    record: JudgmentRecord = {
        "nodeid": clean(nodeid),
        "criteria": clean(criteria),
        "rubric": rubric,
        "error": type(exc).__name__,
        "error_kind": getattr(exc, "kind", JudgeError.kind),
        "message": clean(str(exc)),
        "key": key,
        "threshold": threshold,
        "output": clean(output)[:4000],
        "live_calls": live_calls,
    }
    _in_suite(record, run, group, clean)
    return record
