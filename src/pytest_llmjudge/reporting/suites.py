"""What people and tools read of a suite's decisions: a repeated test's runs (its failure message, its
report section, a summary line) and each gated group (its summary lines, the text of its failed gate, its
JUnit properties and its part of the JSON and HTML reports).  Plain text and plain data from the
`suites` records; every text in them was redacted where it was made.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..stats import Interval

if TYPE_CHECKING:
    from ..suites.gates import CaseRow, GateResult
    from ..suites.repeat import RunsRecord

CLIP = 160  # characters of a judge's reasoning a summary line shows


# -- a repeated test -------------------------------------------------------------------------------


def runs_headline(record: RunsRecord) -> str:
    """`3 of 5 runs passed; @pytest.mark.judge(runs=5, min_passes=4) needs 4`."""
    done, passed, needed = record["done"], record["passed"], record["min_passes"]
    head = f"{passed} of {done} runs passed; {record['asked']} needs {needed}"
    if done < record["runs"]:
        head += f" (it made no judgment in its first run, so it ran once of {record['runs']})"
    return head


def runs_failure(record: RunsRecord) -> str:
    """A repeated test's failure (or its runs' report section): k of N, and each failed run's judgment
    failure with the judge's reasoning (runs are numbered from 0, as each judgment's `run` is)."""
    lines = [runs_headline(record)]
    for failure in record["failed"]:
        text = failure["message"].strip().replace("\n", "\n    ")
        lines.append(f"run {failure['run']}: {text}")
    return "\n".join(lines)


def runs_lines(records: Iterable[RunsRecord], *, every: bool = False) -> list[str]:
    """Summary lines: each repeated test with a failed run (`every`: each repeated test), then a count."""
    records = sorted(records, key=lambda r: r["nodeid"])
    if not records:
        return []
    lines = []
    for record in records:
        if every or record["failed"]:
            verdict = "passed" if record["decided"] == "passed" else "FAILED"
            lines.append(f"llmjudge runs: {record['nodeid']} {verdict}: {runs_headline(record)}")
    flaky = sum(0 < r["passed"] < r["done"] for r in records)
    runs = sum(r["done"] for r in records)
    lines.append(
        f"llmjudge runs: {len(records)} repeated test{_s(len(records))}, {runs} runs, "
        f"{flaky} with both passing and failing runs"
    )
    return lines


# -- a gated group ---------------------------------------------------------------------------------


def percent(value: float) -> str:
    return f"{value:.1%}"


def rate_text(result: GateResult) -> str:
    """`34 of 40 cases passed: 85.0% (95% Wilson interval 70.9% to 93.0%)`."""
    rate = result.rate
    n = result.cases
    head = f"{result.passed_cases} of {n} case{_s(n)} passed"
    if not n:
        return head
    interval = f"{_level(rate)} Wilson interval {percent(rate.low)} to {percent(rate.high)}"
    return f"{head}: {percent(rate.estimate)} ({interval})"


def mean_text(result: GateResult) -> str | None:
    """`mean score 0.78 (95% Student-t interval 0.71 to 0.85)`, for a mean_score gate."""
    mean = result.mean
    if mean is None or not result.cases:
        return None
    return f"mean score {mean.estimate:.2f} ({_level(mean)} Student-t interval {mean.low:.2f} to {mean.high:.2f})"


def gate_text(result: GateResult) -> str:
    """`pass_rate=0.9 (confidence=0.95): Wilson lower bound 76.9% < 90.0%`: what the gate asked, and how it went."""
    gate, parts = result.gate, []
    confidence = result.confidence
    asked = ", ".join(f"{name}={value:g}" for name, value in gate.items())
    pass_rate, mean_score = gate.get("pass_rate"), gate.get("mean_score")
    if not result.cases:
        return f"{asked}: no judged case to decide on"
    if pass_rate is not None:
        measured = result.rate.low if confidence else result.rate.estimate
        what = "Wilson lower bound " if confidence else "rate "
        relation = ">=" if "pass_rate" not in result.reasons else "<"
        text = f"{what}{percent(measured)} {relation} {percent(pass_rate)}"
        if relation == "<" and confidence:
            from ..suites.gates import cases_needed

            needed = cases_needed(pass_rate, result.cases, confidence)
            text += (
                f" ({needed} of {result.cases} passing would clear it)"
                if needed is not None
                else f" ({result.cases} cases cannot clear it even if all pass: the gate needs more cases)"
            )
        parts.append(text)
    if mean_score is not None and result.mean is not None:
        measured = result.mean.low if confidence else result.mean.estimate
        what = "mean score lower bound " if confidence else "mean score "
        relation = ">=" if "mean_score" not in result.reasons else "<"
        parts.append(f"{what}{measured:.2f} {relation} {mean_score:.2f}")
    return f"{asked}: " + "; ".join(parts)


def gate_headline(result: GateResult) -> str:
    """`llmjudge gate FAILED tests/test_x.py::test_f: 34 of 40 cases passed: 85.0% (...); pass_rate=0.9: ...`."""
    verdict = "passed" if result.passed else "FAILED"
    figures = [rate_text(result)]
    mean = mean_text(result)
    if mean is not None:
        figures.append(mean)
    return f"llmjudge gate {verdict} {result.group}: {', '.join(figures)}; gate {gate_text(result)}"


def gate_lines(results: Iterable[GateResult], *, every_case: bool = False) -> list[str]:
    """The summary's lines of each gate: its headline; a failed gate's failed cases with the judge's reasoning
    (`every_case`: also a passed gate's); the cases it did not count, and whether it saw part of its group."""
    lines = []
    for result in results:
        lines.append(gate_headline(result))
        if every_case or not result.passed:
            lines.extend(f"  failed case {row.nodeid}: {brief(row.failures)}" for row in result.with_status("failed"))
        lines.extend(uncounted_lines(result))
    return lines


def uncounted_lines(result: GateResult) -> list[str]:
    """The cases a gate did not count, and whether it saw part of its group, a line each (indented)."""
    lines = []
    for row in result.not_counted:
        outcome = row.status.removesuffix(" (not counted)")
        why = "it made no judgment" if row.status == "no judgment" else f"its test {outcome}"
        lines.append(f"  not counted: {row.nodeid} ({why})")
    if result.partial:
        lines.append("  part of the group did not run here (-k, -m or a shard): the gate decided on the cases that ran")
    return lines


def gate_failure(result: GateResult) -> str:
    """The text of a failed gate's report: its headline, then each failed case with its whole failure text."""
    lines = [gate_headline(result).removeprefix("llmjudge ")]
    for row in result.with_status("failed"):
        lines.append(f"failed case {row.nodeid}:")
        for text in row.failures or ("(no judgment failure recorded)",):
            lines.append("    " + text.strip().replace("\n", "\n    "))
    lines.extend(line.strip() for line in uncounted_lines(result))
    return "\n".join(lines)


def brief(failures: Sequence[str]) -> str:
    """A failed case in one line: its first failure's first line and the judge's reasoning, clipped."""
    if not failures:
        return "(no judgment failure recorded)"
    lines = [line.strip() for line in failures[0].splitlines() if line.strip()]
    head = lines[0] if lines else ""
    reasoning = next((line for line in lines if line.startswith("reasoning:")), None)
    text = f"{head}; {reasoning}" if reasoning else head
    text = " ".join(text.split())
    more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
    return (text if len(text) <= CLIP else text[: CLIP - 1] + "…") + more


def gate_properties(result: GateResult) -> list[tuple[str, str]]:
    """JUnit `<property>` pairs of a gate's testcase."""
    props = [
        ("llmjudge.group", result.group),
        ("llmjudge.gate", ", ".join(f"{name}={value:g}" for name, value in result.gate.items())),
        ("llmjudge.cases", str(result.cases)),
        ("llmjudge.passed_cases", str(result.passed_cases)),
        ("llmjudge.rate", f"{result.rate.estimate:.6g}" if result.cases else ""),
        ("llmjudge.rate_interval", f"{result.rate.low:.6g} {result.rate.high:.6g}"),
        ("llmjudge.rate_confidence", f"{result.rate.confidence:g}"),
    ]
    if result.mean is not None:
        props.append(("llmjudge.mean_score", f"{result.mean.estimate:.6g}"))
        props.append(("llmjudge.mean_score_interval", f"{result.mean.low:.6g} {result.mean.high:.6g}"))
    props.append(("llmjudge.decision", "passed" if result.passed else "failed"))
    return props


def gate_json(result: GateResult) -> dict[str, Any]:
    """A gate as the JSON report holds it: the group, the gate, the decision and its figures, every case."""
    return {
        "group": result.group,
        "decision": "passed" if result.passed else "failed",
        "gate": dict(result.gate),
        "reasons": list(result.reasons),
        "judged_cases": result.cases,
        "passed_cases": result.passed_cases,
        "rate": _interval_json(result.rate, "wilson") if result.cases else None,
        "mean_score": _interval_json(result.mean, "student-t") if result.mean is not None and result.cases else None,
        "partial": result.partial,
        "cases": [_case_json(row) for row in result.rows],
    }


def _case_json(row: CaseRow) -> dict[str, Any]:
    case: dict[str, Any] = {"nodeid": row.nodeid, "status": row.status, "score": row.score}
    if row.failures:
        case["failures"] = list(row.failures)
    return case


def _interval_json(interval: Interval, method: str) -> dict[str, Any]:
    return {
        "estimate": interval.estimate,
        "low": interval.low,
        "high": interval.high,
        "confidence": interval.confidence,
        "method": method,
    }


def runs_properties(record: RunsRecord) -> list[tuple[str, str]]:
    """JUnit `<property>` pairs of a repeated test's testcase (its judgments carry `llmjudge.run` each)."""
    return [
        ("llmjudge.runs", str(record["done"])),
        ("llmjudge.passed_runs", str(record["passed"])),
        ("llmjudge.min_passes", str(record["min_passes"])),
        ("llmjudge.failed_runs", " ".join(str(f["run"]) for f in record["failed"])),
    ]


def _level(interval: Interval) -> str:
    level = interval.confidence
    return f"{level:.0%}" if round(level * 100, 6).is_integer() else f"{level:.1%}"


def _s(n: int) -> str:
    return "" if n == 1 else "s"
