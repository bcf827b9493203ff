"""The run's Markdown summary, for where CI shows one (GitHub's job summary, `--judge-summary=PATH`).

Counts and cost, the failed judgments with their criteria and reasoning, the gates (the session's decision
on each gated group: its rate with its interval, its gate, passed or failed, and its failed cases with the
judge's reasoning), the replay misses with the command that records them, other errors, and drift.  Built
on the controller from the records every test report carried (and the gates decided there); every quoted
text escaped (`markdown`) and the whole redacted on its way out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..redact import redact
from ..verdict import DriftRecord, JudgmentRecord
from . import markdown as md
from .json_report import judgment_status
from .terminal import Tally, error_kind

if TYPE_CHECKING:
    from ..suites.gates import GateResult

__all__ = ["render_job_summary"]

TITLE = "## LLM judge (pytest-llmjudge)"
SHOWN = 50  # rows of a table; the rest is counted
REASONING_WIDTH = 2000


def _failed(records: Sequence[JudgmentRecord]) -> list[str]:
    failed = [r for r in records if judgment_status(r) == "failed"]
    if not failed:
        return []
    lines = [
        "",
        f"### Failed judgments ({len(failed)})",
        "",
        "| Test | Criteria | Score | Threshold |",
        "|---|---|---|---|",
    ]
    for record in failed[:SHOWN]:
        lines.append(
            f"| {md.code(record.get('nodeid', '?'))} | {md.cell(record.get('criteria', ''))} | "
            f"{record.get('score', 0):.2f} | {record.get('threshold') or 0:.2f} |"
        )
    if len(failed) > SHOWN:
        lines.append(f"| ... and {len(failed) - SHOWN} more | | | |")
    reasoned = [r for r in failed[:SHOWN] if r.get("reasoning")]
    if reasoned:
        lines += ["", "<details><summary>What the judge said</summary>"]
        for record in reasoned:
            reasoning = _clipped(str(record.get("reasoning")))
            lines += [
                "",
                f"{md.code(record.get('nodeid', '?'))}: {md.text(record.get('criteria', ''))}",
                "",
                md.fenced(reasoning),
            ]
        lines += ["", "</details>"]
    return lines


def _clipped(text: str) -> str:
    return text if len(text) <= REASONING_WIDTH else text[: REASONING_WIDTH - 1] + "…"


def _gates(gates: Sequence[GateResult]) -> list[str]:
    """Each gated group's decision: a table row (its rate with its interval, its gate, passed or failed), what
    it did not count, and its failed cases with their whole failure text (the judge's reasoning), folded."""
    if not gates:
        return []
    from .suites import gate_text, mean_text, rate_text, uncounted_lines

    failed = sum(not gate.passed for gate in gates)
    lines = [
        "",
        f"### Gates ({failed} failed of {len(gates)})",
        "",
        "| Group | Decision | Cases | Gate |",
        "|---|---|---|---|",
    ]
    for gate in gates:
        figures = ", ".join(text for text in (rate_text(gate), mean_text(gate)) if text)
        decision = "passed" if gate.passed else "**failed**"
        lines.append(f"| {md.code(gate.group)} | {decision} | {md.cell(figures)} | {md.cell(gate_text(gate))} |")
    notes = [(gate, line.strip()) for gate in gates for line in uncounted_lines(gate)]
    if notes:
        lines.append("")
        lines += [f"- {md.code(gate.group)}: {md.text(note)}" for gate, note in notes]
    for gate in gates:
        rows = gate.with_status("failed")
        if not rows:
            continue
        lines += ["", f"<details><summary>Failed cases of {md.html_text(gate.group)} ({len(rows)})</summary>"]
        for row in rows[:SHOWN]:
            lines += ["", f"{md.code(row.nodeid)}:"]
            lines += ["", md.fenced(_clipped("\n".join(row.failures) or "(no judgment failure recorded)"))]
        if len(rows) > SHOWN:
            lines += ["", f"... and {len(rows) - SHOWN} more"]
        lines += ["", "</details>"]
    return lines


def _misses(records: Sequence[JudgmentRecord], record: Callable[[Sequence[str]], str]) -> list[str]:
    misses = [r for r in records if "error" in r and error_kind(r) == "missing"]
    if not misses:
        return []
    tests = list(dict.fromkeys(str(r.get("nodeid", "?")) for r in misses))
    lines = [
        "",
        f"### Replay misses ({len(misses)})",
        "",
        "No verdict is stored for these judgments, and a replay never calls the judge. Record them with a "
        "reachable judge, then commit the verdict files:",
        "",
        md.fenced(record(tests), "sh"),
        "",
        "<details><summary>What each miss is nearest to</summary>",
    ]
    for miss in misses[:SHOWN]:
        lines += ["", md.fenced(str(miss.get("message", "")))]
    return [*lines, "", "</details>"]


def _errors(records: Sequence[JudgmentRecord]) -> list[str]:
    errors = [r for r in records if "error" in r and error_kind(r) != "missing"]
    if not errors:
        return []
    lines = ["", f"### Errors ({len(errors)})", "", "| Test | Error | Message |", "|---|---|---|"]
    for record in errors[:SHOWN]:
        message = str(record.get("message", "")).strip().splitlines()
        lines.append(
            f"| {md.code(record.get('nodeid', '?'))} | {md.text(record.get('error', ''))} | "
            f"{md.cell(message[0] if message else '')} |"
        )
    return lines


def _drift(drift: Iterable[DriftRecord]) -> list[str]:
    moved = sorted(drift, key=lambda d: (d.get("test", ""), d.get("key", "")))
    if not moved:
        return []
    lines = [
        "",
        f"### Drift ({len(moved)})",
        "",
        "| Test | Key | Stored | Now | Pass/fail flipped |",
        "|---|---|---|---|---|",
    ]
    for d in moved[:SHOWN]:
        lines.append(
            f"| {md.code(d.get('test', '?'))} | {md.code(d.get('key', '')[:12])} | {d.get('old', 0.0):.2f} | "
            f"{d.get('new', 0.0):.2f} | {'yes' if d.get('flipped') else 'no'} |"
        )
    return lines


def render_job_summary(
    tally: Tally,
    records: Sequence[JudgmentRecord],
    drift: Iterable[DriftRecord] = (),
    *,
    mode: str,
    record: Callable[[Sequence[str]], str],
    gates: Sequence[GateResult] = (),
) -> str:
    """The summary's Markdown: `tally` counts the run, `records` are every judgment's (whole: with reasoning),
    `mode` says how it judged, `record` the command that records what the given tests missed (see
    `replay_miss.record_command`), `gates` the session's decision on each gated group (`suites.gates.decide`)."""
    sentence = tally.sentence() or "llmjudge: nothing judged"
    lines = [TITLE, "", md.text(mode), "", md.text(sentence.removeprefix("llmjudge: "))]
    details = tally.details()
    if details:
        lines += ["", md.text(details.removeprefix("llmjudge: "))]
    lines += _failed(records)
    lines += _gates(gates)
    lines += _misses(records, record)
    lines += _errors(records)
    lines += _drift(drift)
    return redact("\n".join(lines)) + "\n\n"
