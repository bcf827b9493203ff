"""Judge every labelled example, then compute how far the judge agrees with the human labels.

Each example goes through the public `Judge.score`, so a calibration records, replays and caches
like any judgment: a second run is answered from the verdict file, and on CI (replay) a missing
verdict is an error naming the example and its line.  Examples are judged one after the other.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import JudgeError, first_line
from .examples import CalibrationError, LabelledExample, load_examples
from .stats import CalibrationResult, Judged, calibrate

if TYPE_CHECKING:
    from ..judge import Judge


Source = str | os.PathLike[str] | Iterable[LabelledExample | Mapping[str, object]]


class ExampleError(CalibrationError):
    """Judging one labelled example failed (a replay miss, an unreachable or unreadable judge).

    The message is one line: `file:line: example NAME: what went wrong`.  `.cause` is the error
    the judgment raised, and `kind` is its kind (a replay miss counts as missing).
    """

    def __init__(self, message: str, *, source: str, example: LabelledExample, cause: JudgeError) -> None:
        super().__init__(message, source=source)
        self.example = example
        self.cause = cause
        self.kind = cause.kind


def _examples(examples: Source, source: str | None) -> tuple[str, list[LabelledExample]]:
    if isinstance(examples, (str, os.PathLike)):
        return source or os.fspath(examples), load_examples(examples)
    rows, where = list(examples), source or "<rows>"
    read = [row for row in rows if isinstance(row, LabelledExample)]
    if read and len(read) < len(rows):
        raise CalibrationError("<rows>: give labelled examples or dict rows, not both", source="<rows>")
    if not rows:
        raise CalibrationError(f"{where}: no labelled examples", source=where)
    return where, read or load_examples([row for row in rows if not isinstance(row, LabelledExample)])


def _rubric(example: LabelledExample, default: Any, where: str) -> Any:
    """A row's rubric (a kind's name, e.g. `pass_fail`) wins over the run's."""
    if example.rubric is None:
        return default
    from ..rubrics.base import rubric_kinds

    kinds = rubric_kinds()
    kind = kinds.get(example.rubric.strip())
    if kind is None:
        raise CalibrationError(
            f"{where}:{example.line}: unknown rubric {example.rubric!r} (known: {', '.join(sorted(kinds))})",
            source=where,
        )
    return kind


def run_calibration(
    examples: Source,
    *,
    judge: Judge | None = None,
    threshold: float | None = None,
    rubric: Any = None,
    model: str | Sequence[str] | None = None,
    source: str | None = None,
) -> CalibrationResult:
    """Judge each example with `judge` (default: `Judge()`, the running session's) and compute the figures.

    `examples` is a labelled-examples file (`.jsonl`/`.csv`), dict rows, or examples already read
    by `load_examples`.  `threshold` is the bar both the judge's score and a score label are read
    against (default: the judge's own, as settings and markers give it); `rubric` and `model`
    apply to every example (a row's `rubric` wins); `source` names the examples in messages.
    Raises `CalibrationError` for bad labels and `ExampleError` when an example cannot be judged.
    """
    where, items = _examples(examples, source)
    if judge is None:
        from ..judge import Judge

        judge = Judge()
    judged: list[Judged] = []
    used_threshold = threshold
    for example in items:
        kind = _rubric(example, rubric, where)
        try:
            verdict = judge.score(
                example.output,
                example.criteria,
                input=example.input,
                expected=example.expected,
                rubric=kind,
                threshold=threshold,
                model=model,
            )
        except JudgeError as exc:
            message = f"{where}:{example.line}: example {example.name!r}: {first_line(exc)}"
            raise ExampleError(message, source=where, example=example, cause=exc) from None
        if used_threshold is None:
            used_threshold = verdict.threshold
        judged.append(
            Judged(
                id=example.name,
                criteria=example.criteria,
                label=example.label,
                score=verdict.score,
                reasoning=verdict.reasoning or None,
            )
        )
    assert used_threshold is not None  # at least one example was judged
    try:
        return calibrate(judged, used_threshold)
    except ValueError as exc:  # a rubric whose score is outside [0, 1]
        raise CalibrationError(f"{where}: {exc}", source=where) from None
