"""What a judgment produces, as plain data: the record that travels to every report.

A `JudgmentRecord` is built once by the pipeline, carried on the test's teardown report (so it
crosses the xdist wire as plain JSON-safe data), and read by the terminal summary, the JUnit
properties and the JSON and HTML reports.  Nothing else describes a judgment to a report.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["DriftRecord", "JudgmentRecord", "SampleRecord"]


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
    threshold: float | None
    key: str
    output: str
    # a verdict
    score: float
    passed: bool
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
    # an error
    error: str  # the exception's class name, as shown to people
    error_kind: str  # what reports count it as: `JudgeError.kind` ("unparseable", "missing", ...)
    message: str
    # added by the session
    test_outcome: str
    status: str
    drift: DriftRecord
