"""`llmjudge diff` as people and tools read it: text for a terminal, Markdown for a pull request, JSON.

Each renders a `diff.compare.DiffResult` and nothing else; every string leaves through the one redaction.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import Any

from ..diff.compare import ALPHA, STATUS_ORDER, Change, DiffResult, Rate
from ..diff.sides import Judgment
from ..redact import redact, redact_value
from . import markdown as md

__all__ = ["DIFF_FORMAT", "render_json", "render_markdown", "render_text"]

DIFF_FORMAT = 1
AFTER = "the working tree"
OUTPUT_LINES = 12  # lines of an output's diff shown; the rest is counted
LINE_WIDTH = 200
REASONING_WIDTH = 600
TEST_NOTE = f"exact McNemar test on the paired flips; p < {ALPHA}: more than noise"


def _clip(value: str, width: int) -> str:
    return value if len(value) <= width else value[: width - 1] + "…"


def output_diff(change: Change) -> list[str]:
    """A short unified diff of the output under test, where the two sides judged different outputs."""
    before, after = change.before, change.after
    if before is None or after is None or before.output is None or after.output is None:
        return []
    if before.output == after.output:
        return []
    lines: list[str] = []
    for line in difflib.unified_diff(before.output.splitlines(), after.output.splitlines(), lineterm="", n=1):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):  # a hunk's header: only a gap between two hunks is shown
            if lines:
                lines.append("...")
            continue
        lines.append(_clip(line, LINE_WIDTH))
    if len(lines) > OUTPUT_LINES:
        lines = [*lines[:OUTPUT_LINES], f"... ({len(lines) - OUTPUT_LINES} more lines)"]
    return lines


def reasoning_change(change: Change) -> tuple[str, str] | None:
    """The judge's reasoning before and after, where it changed."""
    before, after = change.before, change.after
    if before is None or after is None or not before.reasoning or not after.reasoning:
        return None
    if before.reasoning == after.reasoning:
        return None
    return _clip(before.reasoning, REASONING_WIDTH), _clip(after.reasoning, REASONING_WIDTH)


def decision(judgment: Judgment | None) -> str:
    """`0.90 pass`, `0.20 fail`, `0.55` (no threshold), `-` (absent)."""
    if judgment is None:
        return "-"
    score = "?" if judgment.score is None else f"{judgment.score:.2f}"
    if judgment.passed is None:
        return score
    return f"{score} {'pass' if judgment.passed else 'fail'}"


def _threshold(change: Change) -> str:
    thresholds = {j.threshold for j in (change.before, change.after) if j is not None and j.threshold is not None}
    return f" (threshold {', '.join(f'{t:.2f}' for t in sorted(thresholds))})" if thresholds else ""


def headline(result: DiffResult) -> str:
    """`2 judgments changed in 2 tests: 1 regressed (pass to fail), 1 improved (fail to pass), ...`."""
    changed = result.changed
    tests = len({c.test for c in changed})
    other = result.count("changed")
    judgments = f"{len(changed)} judgment{'s' if len(changed) != 1 else ''}"
    recorded = result.now_recorded  # why files changed where no judgment did: their outcomes were written
    return (
        f"{judgments} changed in {tests} test{'s' if tests != 1 else ''}: "
        f"{result.count('regressed')} regressed (pass to fail), {result.count('improved')} improved (fail to pass), "
        f"{other} other change{'s' if other != 1 else ''}, {result.count('added')} added, "
        f"{result.count('removed')} removed; {result.count('unchanged')} unchanged"
        + (f" ({recorded} with their decision recorded only now)" if recorded else "")
    )


def _base(result: DiffResult) -> str:
    return f"{result.base} ({result.base_commit[:12]})"


def _rate_text(rate: Rate) -> str:
    (bp, bn), (ap, an) = rate.before_counts, rate.after_counts
    flips = rate.flips
    before = f"{bp}/{bn} {rate.before}" if bn else "no threshold"
    after = f"{ap}/{an} {rate.after}" if an else "no threshold"
    verdict = " MORE THAN NOISE" if rate.significant else ""
    return f"{before} -> {after}; {flips.worse} worse, {flips.better} better, p = {flips.p_value:.3g}{verdict}"


# -- text -------------------------------------------------------------------------------------------


def render_text(result: DiffResult, *, regressions: bool = False) -> str:
    """The terminal's form: a headline, each change with its output diff and reasoning, the rates."""
    lines = [f"llmjudge diff: verdicts at {_base(result)} -> {AFTER}", headline(result)]
    for change in result.changed:
        judgment = change.judgment
        where = f"  [run {judgment.run}]" if judgment.run else ""
        lines += [
            "",
            f"{change.status.upper():<10} {change.test}{where}  "
            f"{decision(change.before)} -> {decision(change.after)}{_threshold(change)}",
            f"  criteria:  {' '.join(judgment.criteria.split())}",
        ]
        diff = output_diff(change)
        if diff:
            lines += ["  output:", *(f"    {line}" for line in diff)]
        reasoning = reasoning_change(change)
        if reasoning is not None:
            lines += [
                f"  reasoning: {' '.join(reasoning[0].split())}",
                f"          -> {' '.join(reasoning[1].split())}",
            ]
    for title, rates in (("pass rates per test", result.tests), ("pass rates per gated group", result.groups)):
        if rates:
            lines += ["", f"{title} ({TEST_NOTE}):"]
            width = max(len(r.name) for r in rates)
            lines += [f"  {r.name:<{width}}  {_rate_text(r)}" for r in rates]
    if regressions:
        found = result.regressions()
        lines += ["", f"regressions: {len(found)}", *(f"  {line}" for line in found)]
    return redact("\n".join(lines))


# -- Markdown ---------------------------------------------------------------------------------------


def _status(change: Change) -> str:
    return {"regressed": "**regressed**", "improved": "**improved**"}.get(change.status, change.status)


def _markdown_changes(result: DiffResult) -> Iterator[str]:
    changed = result.changed
    if not changed:
        return
    yield ""
    yield "| | Test | Criteria | Before | After |"
    yield "|---|---|---|---|---|"
    for change in changed:
        judgment = change.judgment
        run = f" (run {judgment.run})" if judgment.run else ""
        yield (
            f"| {_status(change)} | {md.code(change.test)}{run} | {md.cell(judgment.criteria)} | "
            f"{decision(change.before)} | {decision(change.after)}{_threshold(change)} |"
        )
    detailed = [c for c in changed if output_diff(c) or reasoning_change(c)]
    if not detailed:
        return
    yield ""
    yield f"<details><summary>What the judge saw and said ({len(detailed)} changed)</summary>"
    for change in detailed:
        yield ""
        yield f"**{change.status}** {md.code(change.test)}: {md.text(change.judgment.criteria)}"
        diff = output_diff(change)
        if diff:
            yield ""
            yield md.fenced("\n".join(diff), "diff")
        reasoning = reasoning_change(change)
        if reasoning is not None:
            yield ""
            yield md.fenced(f"- {reasoning[0]}\n+ {reasoning[1]}", "diff")
    yield ""
    yield "</details>"


def _markdown_rates(title: str, rates: list[Rate]) -> Iterator[str]:
    if not rates:
        return
    yield ""
    yield f"**{title}** ({TEST_NOTE})"
    yield ""
    yield "| | Before | After | Pass to fail | Fail to pass | p |"
    yield "|---|---|---|---|---|---|"
    for rate in rates:
        (bp, bn), (ap, an) = rate.before_counts, rate.after_counts
        before = f"{bp}/{bn}, {rate.before}" if bn else "-"
        after = f"{ap}/{an}, {rate.after}" if an else "-"
        p = f"{rate.flips.p_value:.3g}" + (" **more than noise**" if rate.significant else "")
        yield f"| {md.code(rate.name)} | {before} | {after} | {rate.flips.worse} | {rate.flips.better} | {p} |"


def render_markdown(result: DiffResult, *, regressions: bool = False) -> str:
    """A pull request comment: a headline, a table of the changed judgments, their diffs folded, the rates."""
    lines = [f"### LLM judge: verdicts at {md.code(_base(result))} → {AFTER}", "", md.text(headline(result))]
    lines += _markdown_changes(result)
    lines += _markdown_rates("Pass rates per test", result.tests)
    lines += _markdown_rates("Pass rates per gated group", result.groups)
    if regressions:
        found = result.regressions()
        lines += ["", f"**Regressions: {len(found)}**" if found else "No regression."]
        lines += [f"- {md.text(line)}" for line in found]
    return redact("\n".join(lines)) + "\n"


# -- JSON -------------------------------------------------------------------------------------------


def _side(judgment: Judgment | None) -> dict[str, Any] | None:
    if judgment is None:
        return None
    side: dict[str, Any] = {"key": judgment.key, "score": judgment.score}
    for name in ("threshold", "passed", "verdict", "reasoning"):
        value = getattr(judgment, name)
        if value is not None:
            side[name] = value
    return side


def _change(change: Change) -> dict[str, Any]:
    judgment = change.judgment
    row: dict[str, Any] = {
        "status": change.status,
        "test": change.test,
        "criteria": judgment.criteria,
        "rubric": judgment.rubric,
        "run": judgment.run,
        "group": judgment.group,
        "before": _side(change.before),
        "after": _side(change.after),
    }
    diff = output_diff(change)
    if diff:
        row["output_diff"] = diff
    return row


def _rate(rate: Rate) -> dict[str, Any]:
    return {
        "name": rate.name,
        "before": {"passed": rate.before_counts[0], "n": rate.before_counts[1], "rate": rate.before.estimate,
                   "interval": rate.before.to_json()},
        "after": {"passed": rate.after_counts[0], "n": rate.after_counts[1], "rate": rate.after.estimate,
                  "interval": rate.after.to_json()},
        "pass_to_fail": rate.flips.worse,
        "fail_to_pass": rate.flips.better,
        "p_value": rate.flips.p_value,
        "significant": rate.significant,
    }  # fmt: skip


def render_json(result: DiffResult) -> str:
    """The whole diff as one JSON document (only the changed judgments listed; every status counted)."""
    document = {
        "format": DIFF_FORMAT,
        "base": {"revision": result.base, "commit": result.base_commit},
        "after": AFTER,
        "test": "exact McNemar on the paired flips",
        "alpha": ALPHA,
        "counts": {status: result.count(status) for status in STATUS_ORDER},
        "decisions_now_recorded": result.now_recorded,  # of the unchanged: see `Change.now_recorded`
        "judgments": [_change(c) for c in result.changed],
        "tests": [_rate(r) for r in result.tests],
        "groups": [_rate(r) for r in result.groups],
        "regressions": result.regressions(),
    }
    return json.dumps(redact_value(document), indent=2, ensure_ascii=False) + "\n"
