"""A judge's qualification as text: per subset the accuracy and position figures beside the published ones, then
the pooled figures (position consistency, first-slot rate, length bias, kappa, unreadable answers), and the
decision.  `llmjudge qualify` prints it; `assert_judge_qualified` puts it in its failure and report section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..redact import redact

if TYPE_CHECKING:
    from ..qualification.figures import Rate, Report, SubsetFigures

__all__ = ["render"]

_DASH = "-"


def _percent(value: float | None) -> str:
    return _DASH if value is None else f"{value:.1%}"


def _interval(rate: Rate) -> str:
    if rate.value is None:
        return "[no answers]"
    return f"[{rate.interval.low * 100:.1f}, {rate.interval.high * 100:.1f}]"


def _points(value: float) -> str:
    return f"{value * 100:+.1f} points"


def render(report: Report) -> str:
    """The whole report, as `llmjudge qualify` prints it."""
    from ..qualification.anchors import ANCHORS, JUDGES, POOLED

    figures = report.figures
    about: dict[str, Any] = report.about
    judge = about.get("judge") or {}
    run = about.get("run") or {}
    overall = figures.overall
    lines = [
        f"judge qualification: {judge.get('model') or '(judge model as recorded)'}, {judge.get('prompt', 'Pairwise')}; "
        f"{overall.n} pairs in {len(figures.subsets)} sets, each asked in both orders"
        + (" (--quick)" if run.get("quick") else ""),
        f"criteria: {_first_line(str(judge.get('criteria') or ''))}",
        "",
        f"{'':<21}{'accuracy':<31}{'position consistency':<27}",
        f"{'set':<11}{'pairs':>6}   {'judge':>6} {'95% interval':<14} {'GPT-4':>6} {'ChatGPT':>7}"
        f"   {'judge':>6} {'GPT-4':>6} {'ChatGPT':>7}   {'first slot':>10} {'ties':>5} {'unreadable':>10}",
    ]
    for subset in figures.subsets:
        anchors = ANCHORS.get(subset.name, {})
        accuracy = [anchors[j].accuracy if j in anchors else None for j in JUDGES]
        consistent = [anchors[j].position_consistency if j in anchors else None for j in JUDGES]
        lines.append(_row(subset, accuracy, consistent))
    lines.append(_row(overall, [POOLED[j].accuracy for j in JUDGES], [POOLED[j].position_consistency for j in JUDGES]))
    lines.append("")
    consistency, first = overall.position_consistency, overall.first_slot_rate
    lines += [
        _pooled(
            "position consistency",
            f"{_percent(consistency.value)} {_interval(consistency)} of {consistency.n} pairs, both answers readable",
            [f"{POOLED[j].position_consistency:.1%}" for j in JUDGES],
        ),
        _pooled(
            "first-slot rate",
            f"{_percent(first.value)} {_interval(first)} of {first.n} answers naming an output",
            [f"{POOLED[j].first_slot_rate:.1%}" for j in JUDGES],
        ),
    ]
    bias = figures.length_bias
    gap = "gap undefined" if bias.gap is None else f"gap {_points(bias.gap.estimate)} [{bias.gap.low * 100:+.1f}, "
    if bias.gap is not None:
        gap += f"{bias.gap.high * 100:+.1f}]"
    lines += [
        _pooled(
            "length bias",
            f"accuracy {_percent(bias.better_longer.value)} where the better output is the longer "
            f"({bias.better_longer.n} pairs), {_percent(bias.better_shorter.value)} where it is the shorter "
            f"({bias.better_shorter.n}); {gap}",
            [_points(POOLED[j].length_gap) for j in JUDGES],
        )
    ]
    if figures.kappa is not None:
        kappa = figures.kappa
        value = _DASH if kappa.value is None else f"{kappa.value:.2f}"
        interval = f" [{kappa.interval[0]:.2f}, {kappa.interval[1]:.2f}]" if kappa.interval is not None else ""
        note = f" ({kappa.note})" if kappa.note else ""
        lines.append(
            _pooled(
                "Cohen's kappa",
                f"{value}{interval} on MT-Bench's human votes, {kappa.n} answers{note}",
                [f"{POOLED[j].kappa:.2f}" for j in JUDGES],
            )
        )
    unreadable = figures.unreadable
    lines.append(
        f"{'unreadable':<22}{overall.unreadable} of {figures.answers} answers "
        f"({_percent(unreadable.value)} {_interval(unreadable)}); ties: {overall.ties} (a tie is never right)"
    )
    sources = run.get("answers") or {}
    if sources:
        how = ", ".join(f"{count} {source}" for source, count in sorted(sources.items()))
        lines.append(f"{'answers':<22}{how}, in {run.get('seconds', 0):.1f} s")
    lines.append(
        f"{'':<22}GPT-4 and ChatGPT: LLMBar's published figures of the full sets (its Vanilla prompt with rules; "
        "on MT-Bench without)"
    )
    lines += ["", _decision(report)]
    return redact("\n".join(lines))


def _row(subset: SubsetFigures, accuracy: Sequence[float | None], consistency: Sequence[float | None]) -> str:
    return (
        f"{subset.name[:11]:<11}{subset.n:>6}   {_percent(subset.accuracy.value):>6} {_interval(subset.accuracy):<14} "
        f"{_percent(accuracy[0]):>6} {_percent(accuracy[1]):>7}   {_percent(subset.position_consistency.value):>6} "
        f"{_percent(consistency[0]):>6} {_percent(consistency[1]):>7}   {_percent(subset.first_slot_rate.value):>10} "
        f"{subset.ties:>5} {subset.unreadable:>10}"
    )


def _pooled(name: str, text: str, anchors: list[str]) -> str:
    return f"{name:<22}{text}   (GPT-4 {anchors[0]}, ChatGPT {anchors[1]})"


def _decision(report: Report) -> str:
    if not report.qualified:
        return "NOT QUALIFIED: " + "; ".join(report.shortfalls)
    bars = [f"{name} {value:g}" for name, value in report.thresholds.to_json().items() if value is not None]
    return "qualified: every figure meets its bar (" + ", ".join(bars) + ")"


def _first_line(text: str, limit: int = 100) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
