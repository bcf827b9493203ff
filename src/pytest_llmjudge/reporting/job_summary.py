"""The run's Markdown summary, for where CI shows one (GitHub's job summary, `--judge-summary=PATH`).

Counts and cost, the failed judgments with their criteria and reasoning, the gates (fed by the session
from its records, where the run has any), the replay misses with the command that records them, other
errors, and drift.  Built on the controller from the records every test report carried; every quoted
text escaped (`markdown`) and the whole redacted on its way out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..redact import redact
from ..verdict import DriftRecord, JudgmentRecord
from . import markdown as md
from .json_report import judgment_status
from .terminal import Tally, error_kind

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
            reasoning = str(record.get("reasoning"))
            if len(reasoning) > REASONING_WIDTH:
                reasoning = reasoning[: REASONING_WIDTH - 1] + "…"
            lines += [
                "",
                f"{md.code(record.get('nodeid', '?'))}: {md.text(record.get('criteria', ''))}",
                "",
                md.fenced(reasoning),
            ]
        lines += ["", "</details>"]
    return lines


def _misses(records: Sequence[JudgmentRecord], flags: str) -> list[str]:
    from ..pipeline.replay_miss import record_command

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
        md.fenced(record_command(tests, flags), "sh"),
        "",
        "<details><summary>What each miss is nearest to</summary>",
    ]
    for record in misses[:SHOWN]:
        lines += ["", md.fenced(str(record.get("message", "")))]
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
    flags: str = "",
    gates: Sequence[str] = (),
) -> str:
    """The summary's Markdown: `tally` counts the run, `records` are every judgment's (whole: with reasoning),
    `mode` says how it judged, `flags` what a recording command adds (see `replay_miss.judge_flags`), `gates`
    the gates section's Markdown lines (the session's, where the run gates anything)."""
    sentence = tally.sentence() or "llmjudge: nothing judged"
    lines = [TITLE, "", md.text(mode), "", md.text(sentence.removeprefix("llmjudge: "))]
    details = tally.details()
    if details:
        lines += ["", md.text(details.removeprefix("llmjudge: "))]
    lines += _failed(records)
    if gates:
        lines += ["", "### Gates", "", *gates]
    lines += _misses(records, flags)
    lines += _errors(records)
    lines += _drift(drift)
    return redact("\n".join(lines)) + "\n\n"
