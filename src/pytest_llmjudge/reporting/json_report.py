"""The JSON report of a run (`--judge-report=PATH`): every judgment, totals, drift.

Built on the controller from the records the test reports carried (so it covers every xdist
worker), and written atomically.  Plain data only: the HTML report renders the same document.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.atomic import write_atomically
from ..verdict import DriftRecord, JudgmentRecord
from .terminal import Tally, is_scored_only, live_calls

if TYPE_CHECKING:
    from ..settings import Settings
    from ..suites.gates import GateResult
    from ..suites.repeat import RunsRecord

REPORT_FORMAT = 1
NEAR_THRESHOLD = 0.1  # a passing score this close to its threshold is "near": shown early in the HTML

# The fields of each judgment, in the order a reader expects them.
JUDGMENT_FIELDS = (
    "nodeid",
    "status",
    "criteria",
    "rubric",
    "score",
    "threshold",
    "passed",
    "verdict",
    "confidence",
    "reasoning",
    "model",
    "source",
    "key",
    "samples",
    "agreement",
    "spread",
    "undecided",
    "cost_usd",
    "latency_s",
    "live_span",
    "prompt_tokens",
    "completion_tokens",
    "live_calls",
    "run",
    "group",
    "drift",
    "output",
    "error",
    "message",
    "test_outcome",
)


def judgment_status(record: JudgmentRecord) -> str:
    """error, scored (a `judge.score` given no threshold: no pass/fail of its own), failed (below its
    threshold), near (passed within NEAR_THRESHOLD of the threshold) or passed."""
    if "error" in record:
        return "error"
    if is_scored_only(record):
        return "scored"
    if not record.get("passed"):
        return "failed"
    score, threshold = record.get("score"), record.get("threshold")
    if isinstance(score, (int, float)) and isinstance(threshold, (int, float)) and score - threshold < NEAR_THRESHOLD:
        return "near"
    return "passed"


def _judgment(record: JudgmentRecord) -> dict[str, Any]:
    row: dict[str, Any] = {"status": judgment_status(record), "live_calls": live_calls(record), **record}
    row.setdefault("drift", None)
    return {**{name: row[name] for name in JUDGMENT_FIELDS if name in row}, **row}  # the rest after, as they came


def build_report(
    records: Iterable[JudgmentRecord],
    drift: Iterable[DriftRecord] = (),
    *,
    settings: Settings | None = None,
    exitstatus: int | None = None,
    calibrations: Iterable[Mapping[str, Any]] = (),
    gates: Iterable[GateResult] = (),
    runs: Iterable[RunsRecord] = (),
) -> dict[str, Any]:
    """The report document: format, when, settings, totals, judgments (sorted by nodeid), drift, the
    calibration runs (`assert_judge_agrees`) with their figures, confusion matrix and disagreements, each
    gated group with its decision and cases (`gates`), and what each repeated test's runs came to (`runs`)."""
    records = list(records)
    judgments = [_judgment(r) for r in records]
    drifted = [dict(d) for d in drift]
    tally = Tally.of(records)  # the figures the terminal sentence shows, counted the same way
    errors = Counter(str(j.get("error")) for j in judgments if j["status"] == "error")
    verdicts = [j for j in judgments if j["status"] != "error"]
    latencies = [j["latency_s"] for j in verdicts if isinstance(j.get("latency_s"), (int, float))]
    priced = round(tally.priced_usd, 8)
    totals = {
        "judged": tally.judged,
        "passed": sum(j["status"] in ("passed", "near") for j in judgments),
        "near_threshold": sum(j["status"] == "near" for j in judgments),
        "failed": tally.below,
        "errors": sum(errors.values()),
        "errors_by_type": dict(sorted(errors.items())),
        **tally.sources,  # replayed, cached, live
        "scored": tally.scored,
        "live_calls": tally.calls,
        # the sum of the priced calls (None: calls went live and none was priced, the cost is unknown);
        # `unpriced_calls` says how many live calls had no known price
        "cost_usd": None if tally.unpriced and not priced else priced,
        "unpriced_calls": tally.unpriced,
        "latency_s": round(sum(latencies), 4),  # the judgments' judging times summed (they may overlap)
        "judging_s": round(tally.judging_s(), 4),  # wall time with a judge call in flight
        # as the judge's servers counted them (None: no live call reported usage)
        "prompt_tokens": tally.prompt_tokens,
        "completion_tokens": tally.completion_tokens if tally.prompt_tokens is not None else None,
        "drifted": len(drifted),
    }
    document: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "tool": "pytest-llmjudge",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "exitstatus": exitstatus,
        "settings": _settings(settings),
        "totals": totals,
        "judgments": judgments,
        "drift": sorted(drifted, key=lambda d: (str(d.get("test", "")), str(d.get("key", "")))),
    }
    calibrated = sorted(
        (dict(c) for c in calibrations), key=lambda c: (str(c.get("nodeid", "")), str(c.get("source", "")))
    )
    if calibrated:
        document["calibrations"] = calibrated
    decided = list(gates)
    if decided:
        from .suites import gate_json

        document["gates"] = [gate_json(gate) for gate in decided]
    repeated = sorted((dict(r) for r in runs), key=lambda r: str(r.get("nodeid", "")))
    if repeated:
        document["repeats"] = repeated
    return document


def _settings(settings: Settings | None) -> dict[str, Any]:
    if settings is None:
        return {}
    return {
        "mode": settings.mode,
        "mode_reason": settings.mode_reason,
        "model": list(settings.model) if settings.model else None,
        "threshold": settings.threshold,
        "samples": settings.samples,
        "drift": settings.drift,
    }


def write_report(path: Path, document: Mapping[str, Any]) -> None:
    """Write the report document as indented JSON, atomically."""
    write_atomically(path, json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False, default=str) + "\n")


def saved(
    what: str, path: Path, write: Callable[[Path, Mapping[str, Any]], None], document: Mapping[str, Any]
) -> str | None:
    """Write a report (`what`: "JSON report", "HTML report"); None, or the warning that says why it
    could not be written.  A report that cannot be written (no such folder, a full disk) never ends
    the run: its summary and every other warning still show."""
    from ..redact import redact_value

    try:
        write(path, redact_value(document))  # the whole document, whatever a record holds
    except (OSError, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        return f"llmjudge: could not write the {what} {path}: {why}"
    return None
