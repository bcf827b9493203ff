"""`assert_judge_agrees`: fail a test when the judge agrees too little with human labels.

    def test_judge_is_calibrated():
        assert_judge_agrees("tests/labels.jsonl", min_kappa=0.6)

It judges with the session's settings and records into the running test's verdict file, so
`pytest --judge-model=X --judge-mode=refresh -k calibration` answers "is model X a good enough
judge for our criteria?", and a plain run replays it offline.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import JudgeError
from ..redact import redact
from .examples import CalibrationError
from .runner import Source, run_calibration
from .stats import CalibrationResult, Disagreement, Kappa

# The failure message lists this many disagreements, worst first.
WORST_SHOWN = 5


class CalibrationFailed(AssertionError):
    """The judge's agreement with the human labels is under the bar.  `.result` holds every figure."""

    def __init__(self, message: str, result: CalibrationResult) -> None:
        super().__init__(message)
        self.result = result


CalibrationFailed.__module__ = "pytest_llmjudge"


# -- text (the command's report shares it) ------------------------------------------------------


def number_text(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _label(label: bool | float) -> str:
    if isinstance(label, bool):
        return "pass" if label else "fail"
    return f"{label:.2f}"


def _kappa(kappa: Kappa) -> str:
    if kappa.value is None:
        return f"undefined ({kappa.note})" if kappa.note else "undefined"
    text = f"{kappa.value:.2f}"
    if kappa.ci is not None:
        text += f"  95% CI [{kappa.ci[0]:.2f}, {kappa.ci[1]:.2f}]"
    elif kappa.note:
        text += f"  ({kappa.note})"
    return text


def _indent(text: str, by: str) -> str:
    return redact(text.strip()).replace("\n", "\n" + by)


def figures_lines(result: CalibrationResult) -> list[str]:
    """The overall figures, one per line: accuracy, kappa, rho, confusion matrix, thresholds."""
    table = result.confusion
    agreed = table.tp + table.tn
    lines = [
        f"accuracy        {number_text(result.accuracy)}  ({agreed} of {result.n} agree)",
        f"Cohen's kappa   {_kappa(result.kappa)}",
    ]
    if result.kind == "score":
        lines.append(f"Spearman's rho  {number_text(result.spearman)}  (score labels against judge scores)")
    lines += [
        "confusion       judge pass  judge fail",
        f"  human pass    {table.tp:>10}  {table.fn:>10}",
        f"  human fail    {table.fp:>10}  {table.tn:>10}",
        f"threshold       {result.threshold:.2f}: accuracy {number_text(result.accuracy)}; "
        f"best {number_text(result.best_threshold)}: accuracy {number_text(result.accuracy_at_best)}",
    ]
    return lines


def disagreement_lines(item: Disagreement) -> list[str]:
    """One disagreement: who said what, the criteria and the judge's reasoning."""
    return [
        f"{item.id}: human {_label(item.label)}, judge {item.score:.2f}",
        f"  criteria:  {_indent(item.criteria, '             ')}",
        f"  reasoning: {_indent(item.reasoning or '(none given)', '             ')}",
    ]


# -- the assertion -------------------------------------------------------------------------------


def _bar(name: str, value: Any, low: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= 1.0:
        raise CalibrationError(f"{name} must be a number in [{low:g}, 1], got {value!r}")
    return float(value)


def _shortfalls(result: CalibrationResult, min_kappa: float | None, min_accuracy: float | None) -> list[str]:
    found = []
    bars = (
        ("kappa", result.kappa.value, min_kappa, result.kappa.note),
        ("accuracy", result.accuracy, min_accuracy, "no examples"),
    )
    for name, value, bar, why in bars:
        if bar is not None and value is None:
            found.append(f"{name} is undefined ({why}), so it cannot reach min_{name} {bar:.2f}")
        elif bar is not None and value is not None and value < bar:
            found.append(f"{name} {value:.2f} < min_{name} {bar:.2f}")
    return found


def failure_message(result: CalibrationResult, shortfalls: Sequence[str]) -> str:
    """The figures and the worst disagreements, under a first line saying which bar was missed."""
    kind = f"{result.kind} labels" if result.kind else "no labels"
    lines = [
        "the judge agrees too little with the human labels: " + "; ".join(shortfalls),
        f"  {result.n} examples ({kind}), threshold {result.threshold:.2f}",
        *(f"  {line}" for line in figures_lines(result)),
    ]
    worst = result.disagreements[:WORST_SHOWN]
    if worst:
        shown = (
            f"worst {len(worst)} of {len(result.disagreements)}" if len(worst) < len(result.disagreements) else "all"
        )
        lines.append(f"  disagreements ({shown}):")
        for item in worst:
            lines += [f"    {line}" for line in disagreement_lines(item)]
    return "\n".join(lines)


def _note_for_reports(result: CalibrationResult, source: object, *, passed: bool) -> None:
    """Hand the figures to the running test, so the JSON and HTML reports show this calibration."""
    from ..runtime import active

    runtime = active()
    context = runtime.current if runtime is not None else None
    if context is None:
        return
    name = str(source) if isinstance(source, (str, os.PathLike)) else f"{result.n} rows given"
    figures = result.to_json()
    for row in figures.get("disagreements") or []:  # the judge's words go into reports: keys kept out
        row["reasoning"] = redact(str(row.get("reasoning") or ""))
    context.calibrations.append({"nodeid": context.nodeid, "source": name, "passed": passed, **figures})


def assert_judge_agrees(
    path_or_rows: Source,
    *,
    min_kappa: float | None = None,
    min_accuracy: float | None = None,
    rubric: Any = None,
    model: str | Sequence[str] | None = None,
    threshold: float | None = None,
) -> CalibrationResult:
    """Judge every labelled example and fail (`CalibrationFailed`) when the judge is under the bar.

    `path_or_rows` is a `.jsonl`/`.csv` file of labelled examples or a list of dict rows (see
    `load_examples`).  Give `min_kappa` (Cohen's kappa, in [-1, 1]), `min_accuracy` (in [0, 1]),
    or both.  Judgments use the running test's settings (command line, ini, environment, its
    `judge` marker) and verdict file; `rubric`, `model` and `threshold` override them for every
    example.  Returns the figures when the judge clears the bar.
    """
    __tracebackhide__ = True
    try:
        kappa_bar = _bar("min_kappa", min_kappa, -1.0)
        accuracy_bar = _bar("min_accuracy", min_accuracy, 0.0)
        if kappa_bar is None and accuracy_bar is None:
            raise CalibrationError(
                "assert_judge_agrees needs a bar: pass min_kappa=... (e.g. 0.6) and/or min_accuracy=... (e.g. 0.8)"
            )
        result = run_calibration(path_or_rows, threshold=threshold, rubric=rubric, model=model)
    except JudgeError as exc:
        raise exc.with_traceback(None) from None  # shown where the test called, not inside the plugin
    shortfalls = _shortfalls(result, kappa_bar, accuracy_bar)
    _note_for_reports(result, path_or_rows, passed=not shortfalls)
    if shortfalls:
        raise CalibrationFailed(failure_message(result, shortfalls), result)
    return result
