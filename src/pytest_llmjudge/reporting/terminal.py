"""What the user reads in the terminal: one sentence after the run, a line on how long judging took
(and the tokens it used), a line per judgment (score, source, cost, latency, tokens) for `-v` and the
test's report section, and drift."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import BackendError, BudgetExceeded, ReplayMiss, VerdictParseError
from ..verdict import DriftRecord, JudgmentRecord

# Records built before the pipeline named `error_kind` carry only the class name.
_KIND_BY_CLASS = {cls.__name__: cls.kind for cls in (VerdictParseError, ReplayMiss, BackendError, BudgetExceeded)}
# Counted in the sentence when present, in this order, under these labels ("unparseable" always shows).
_KIND_LABELS = (("missing", "missing"), ("judge error", "judge errors"), ("over budget", "over budget"))


def error_kind(record: JudgmentRecord) -> str:
    """What an error record counts as: `JudgeError.kind`, e.g. "unparseable"; "error" for any other."""
    return record.get("error_kind") or _KIND_BY_CLASS.get(record.get("error", ""), "error")


def format_usd(cost: float) -> str:
    """Dollars to 4 places; a real but sub-cent spend is not shown as "$0.0000" (it was not free)."""
    if 0 < cost < 0.00005:
        return "<$0.0001"
    return f"${cost:.4f}"


def _count(fields: Mapping[str, object], name: str) -> int | None:
    """The count a record (or totals) holds under `name`, a field its type need not declare; None without one."""
    value = fields.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def tokens_text(fields: Mapping[str, object]) -> str | None:
    """`1,234 tokens (1,200 prompt + 34 completion)` from a record's (or totals') token counts; None without any."""
    prompt, completion = _count(fields, "prompt_tokens"), _count(fields, "completion_tokens")
    if prompt is None and completion is None:
        return None
    prompt, completion = prompt or 0, completion or 0
    return f"{prompt + completion:,} tokens ({prompt:,} prompt + {completion:,} completion)"


def is_scored_only(record: JudgmentRecord) -> bool:
    """A `judge.score(...)` given no threshold: it scored, and passed or failed nothing of its own."""
    fields: Mapping[str, object] = record  # `asserted` is not a declared field
    return fields.get("asserted") is False or ("error" not in record and record.get("threshold") is None)


def live_calls(record: JudgmentRecord) -> int:
    """Judge calls a judgment made over the network, unparseable replies included (a panel or
    samples make several): the pipeline's own count where the record has it."""
    counted = _count(record, "live_calls")
    if counted is not None:
        return counted
    samples = record.get("samples") or []
    if samples:
        return sum(s.get("source") == "live" for s in samples)
    return 1 if record.get("source") == "live" else 0


def unpriced_calls(record: JudgmentRecord) -> int:
    """Live calls of a judgment whose price is unknown (LiteLLM does not price every model)."""
    counted = _count(record, "unpriced_calls")
    if counted is not None:
        return counted
    return live_calls(record) if record.get("cost_usd") is None else 0


class Tally:
    """What the summary needs of a run's judgments, counted as they arrive: a run that writes no JSON
    or HTML report keeps these counters, not every record."""

    def __init__(self) -> None:
        self.judged = 0
        self.sources = {"replayed": 0, "cached": 0, "live": 0}
        self.below = 0
        self.scored = 0
        self.kinds: dict[str, int] = {}
        self.priced_usd: float = 0  # 0 until a judgment arrives: the JSON report's total of no judgments
        self.calls = 0
        self.unpriced = 0
        self.prompt_tokens: int | None = None  # None: no record carried token counts
        self.completion_tokens = 0
        self.timed = 0
        self.latency_s = 0.0  # the judgments' judging times, summed: more than the run's where they overlap
        self.spans: list[tuple[float, float]] = []  # when each timed judgment's calls were in flight
        self.slowest: tuple[float, str] | None = None
        self.structured: list[str] = []  # each live judgment's response_format used ("off": it asked for no schema)
        self.expected_below = 0  # judgments below threshold in tests that passed (or xfailed): the test expected them
        self.decided_below = 0  # judgments below threshold in repeated tests and gated groups, which decide on them
        self.cached_calls = 0  # calls answered from the local cache: earlier runs' replies no verdict file held

    @classmethod
    def of(cls, records: Iterable[JudgmentRecord]) -> Tally:
        tally = cls()
        for record in records:
            tally.add(record)
        return tally

    def add(self, record: JudgmentRecord, outcome: str | None = None, *, decided: bool = False) -> None:
        """Count one judgment; `outcome`: its test's (passed, failed, xfailed, ...), where known; `decided`: its
        test is repeated or gated, and decides on its judgments' failures by its runs or its group's gate."""
        self.judged += 1
        calls = live_calls(record)
        used = record.get("structured")
        if calls:  # what this run's calls asked for: a replay sent nothing
            self.structured.append(used if isinstance(used, str) else "off")
        self.cached_calls += _count(record, "cached_calls") or 0
        self.calls += calls
        self.unpriced += unpriced_calls(record)
        cost = record.get("cost_usd")
        self.priced_usd += cost if isinstance(cost, (int, float)) else 0.0
        prompt, completion = _count(record, "prompt_tokens"), _count(record, "completion_tokens")
        if prompt is not None or completion is not None:
            self.prompt_tokens = (self.prompt_tokens or 0) + (prompt or 0)
            self.completion_tokens += completion or 0
        latency = record.get("latency_s")
        if isinstance(latency, (int, float)):
            self.timed += 1
            self.latency_s += latency
            span = record.get("live_span")
            if isinstance(span, list) and len(span) == 2 and all(isinstance(t, (int, float)) for t in span):
                self.spans.append((float(span[0]), float(span[1])))
            if self.slowest is None or latency > self.slowest[0]:
                self.slowest = (latency, record.get("nodeid", "?"))
        if "error" in record:
            kind = error_kind(record)
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            return
        source = record.get("source")
        if source in self.sources:
            self.sources[str(source)] += 1
        scored = is_scored_only(record)
        below = not scored and not record.get("passed")  # below its threshold: a passing test may hold one
        self.below += below
        if decided:
            self.decided_below += below
        else:
            self.expected_below += below and outcome in ("passed", "xfailed")
        self.scored += scored

    def judging_s(self) -> float:
        """The run's judging time: wall time with a judge call in flight (the summed time where no record
        says when its calls were: one written before spans were recorded)."""
        return judging_wall_s(self.spans) if len(self.spans) == self.timed else self.latency_s

    def cost_text(self) -> str:
        """`$0.0031`; `cost unknown` when no live call was priced; `at least $0.0031 (2 of 5 live calls
        unpriced)` when some were."""
        if not self.unpriced:
            return format_usd(self.priced_usd)
        if self.unpriced >= self.calls and not self.priced_usd:
            return "cost unknown"
        return f"at least {format_usd(self.priced_usd)} ({self.unpriced} of {self.calls} live calls unpriced)"

    def sentence(self) -> str | None:
        """`llmjudge: 14 judged, 11 replayed, 3 live, 1 below threshold, 0 unparseable, $0.0031`, or None
        if nothing was judged.  "below threshold" counts judgments, not tests: a passing test may hold one."""
        if not self.judged:
            return None
        kinds, by_source = self.kinds, self.sources
        parts = [f"{self.judged} judged", f"{by_source['replayed']} replayed"]
        if by_source["cached"]:
            parts.append(f"{by_source['cached']} cached")
        parts.append(f"{by_source['live']} live")
        why = []
        if self.decided_below:
            why.append(f"{self.decided_below} in repeated tests or gated groups, which decide on them")
        if self.expected_below:
            why.append(f"{self.expected_below} in tests that passed or xfailed: they expect it")
        parts.append(f"{self.below} below threshold" + (f" ({'; '.join(why)})" if why else ""))
        if self.scored:
            parts.append(f"{self.scored} scored without a threshold")
        parts.append(f"{kinds.get('unparseable', 0)} unparseable")
        parts.extend(f"{kinds[kind]} {label}" for kind, label in _KIND_LABELS if kind in kinds)
        others = sum(kinds.values()) - kinds.get("unparseable", 0) - sum(kinds.get(k, 0) for k, _ in _KIND_LABELS)
        if others:
            parts.append(f"{others} other errors")
        parts.append(self.cost_text())
        return "llmjudge: " + ", ".join(parts)

    def details(self) -> str | None:
        """`llmjudge: 3 live judge calls, 90 tokens (60 prompt + 30 completion), 1.82 s judging (slowest 0.71 s,
        tests/test_a.py::test_x)`, when anything went live (calls whose reply did not parse count: they were made).
        The tokens show where the judge's server reported them."""
        if not self.calls and not self.timed and not self.cached_calls:
            return None
        calls = self.calls
        text = f"llmjudge: {calls} live judge call{'s' if calls != 1 else ''}, "
        if self.prompt_tokens is not None:
            text += (
                f"{tokens_text({'prompt_tokens': self.prompt_tokens, 'completion_tokens': self.completion_tokens})}, "
            )
        wall = self.judging_s()
        text += f"{wall:.2f} s judging"
        if self.timed > 1 and self.latency_s > wall + 0.01:  # judgments at once (score_many, xdist workers)
            text += f" ({self.latency_s:.2f} s summed over {self.timed} judgments in flight together)"
        if self.slowest is not None:
            text += f" (slowest {self.slowest[0]:.2f} s, {self.slowest[1]})"
        if self.cached_calls:  # an earlier run's reply (a failed judgment's first step): say so
            plural = "s" if self.cached_calls != 1 else ""
            text += (
                f"; {self.cached_calls} call{plural} answered from the local cache, an earlier run's reply "
                "(--judge-mode=refresh asks the judge again)"
            )
        return text


def judging_wall_s(spans: Iterable[tuple[float, float]]) -> float:
    """How long at least one of these spans was open: the run's judging time, judgments at once counted once."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def judgment_lines(records: Iterable[JudgmentRecord], *, with_nodeid: bool = False) -> list[str]:
    """One line per judgment: `PASS 0.90 >= 0.70  live  openai/x  $0.0012  0.21 s  key 3f9a1c2e0b1d  criteria`;
    a live call whose server reported usage also shows its tokens after the latency (`0.21 s  30 tokens`)."""
    lines = []
    for r in records:
        where = f"{r.get('nodeid', '?')}  " if with_nodeid else ""
        criteria = _clip(str(r.get("criteria", "")), 60)
        key = str(r.get("key", ""))[:12]
        if "error" in r:
            lines.append(f"{where}ERROR {r['error']}  key {key}  {criteria}")
            continue
        if is_scored_only(r):  # no threshold of its own: neither PASS nor FAIL
            outcome = f"SCORED {r.get('score', 0):.2f}"
        else:
            status, relation = ("PASS", ">=") if r.get("passed") else ("FAIL", "<")
            outcome = f"{status} {r.get('score', 0):.2f} {relation} {r.get('threshold') or 0:.2f}"
        cost, latency = r.get("cost_usd"), r.get("latency_s")
        unknown = "cost unknown" if live_calls(r) else "no cost"
        price = format_usd(cost) if isinstance(cost, (int, float)) else unknown
        latency_text = f"{latency:.2f} s" if isinstance(latency, (int, float)) else "-"
        tokens = tokens_text(r)
        if tokens:
            latency_text += f"  {tokens.split(' (')[0]}"
        lines.append(
            f"{where}{outcome}  {r.get('source', '?')}  {r.get('model', '?')}  {price}  {latency_text}  "
            f"key {key}  {criteria}"
        )
    return lines


def drift_lines(drift: Iterable[DriftRecord]) -> list[str]:
    """`llmjudge drift: tests/test_a.py::test_x key 3f9a1c2e0b1d: 0.90 -> 0.30, pass/fail flipped`, by test and key."""
    lines = []
    for d in sorted(drift, key=lambda d: (d.get("test", ""), d.get("key", ""))):
        flip = ", pass/fail flipped" if d.get("flipped") else ""
        lines.append(
            f"llmjudge drift: {d.get('test', '?')} key {d.get('key', '')[:12]}: "
            f"{d.get('old', 0.0):.2f} -> {d.get('new', 0.0):.2f}{flip}"
        )
    return lines


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
