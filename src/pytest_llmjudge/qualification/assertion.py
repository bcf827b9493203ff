"""`assert_judge_qualified`: a suite that refuses to trust a judge that fails its qualification.

    # conftest.py: every test errors while the judge is not qualified
    @pytest.fixture(scope="session", autouse=True)
    def qualified_judge():
        assert_judge_qualified(quick=True)

It judges with the session's settings (and the running test's `judge` marker and `judge_backend`) into the
qualification files `llmjudge qualify` writes, `qualification/<subset>.json` in the store: one recording
serves both, and `CI=true pytest` replays it with no call.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import JudgeError
from .figures import Report, Thresholds
from .pairs import QualificationError

if TYPE_CHECKING:
    from ..rubrics.pairwise import Pairwise

__all__ = ["QualificationFailed", "assert_judge_qualified"]

SECTION = "llmjudge: judge qualification"  # the report section of the test that asserted it


class QualificationFailed(AssertionError):
    """The judge missed a qualification bar.  `.report` holds every figure."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


QualificationFailed.__module__ = "pytest_llmjudge"


def assert_judge_qualified(
    *,
    min_accuracy: float | None = Thresholds.min_accuracy,
    min_position_consistency: float | None = Thresholds.min_position_consistency,
    max_length_gap: float | None = Thresholds.max_length_gap,
    max_unreadable: float | None = Thresholds.max_unreadable,
    min_kappa: float | None = Thresholds.min_kappa,
    quick: bool = False,
    data: Sequence[str | os.PathLike[str]] = (),
    criteria: str | None = None,
    rubric: Pairwise | None = None,
    model: str | None = None,
) -> Report:
    """Qualify the judge on the bundled pairs (and `data` files of the same shape) and fail
    (`QualificationFailed`, with the whole report) when a figure misses its bar.

    The bars default as `llmjudge qualify`'s do (docs/qualify.md); None drops one.  `quick` judges 10 pairs
    of each subset.  `criteria` and `rubric` (a `Pairwise` with your template) say how the judge compares,
    as your tests do; `model` overrides the judge model.  Returns the report when the judge qualifies.
    """
    __tracebackhide__ = True
    from ..reporting.qualification import render
    from ..rubrics.pairwise import Pairwise
    from ..runtime import active, standalone_runtime
    from .pairs import bundled_subsets, load_pairs
    from .pairs import quick as quick_subset
    from .runner import judges_for, qualify

    runtime = active() or standalone_runtime()
    test = runtime.current
    try:
        thresholds = Thresholds(min_accuracy, min_position_consistency, max_length_gap, max_unreadable, min_kappa)
        given: Any = rubric
        if given is not None and not isinstance(given, Pairwise):
            raise QualificationError(f"rubric must be a Pairwise (your comparison prompt), got {given!r}")
        subsets = bundled_subsets()
        for path in data:
            subsets.append(load_pairs(path, [s.name for s in subsets]))
        if quick:
            subsets = [quick_subset(s) for s in subsets]
        report = qualify(
            runtime,
            subsets,
            judges_for(runtime, model=model, like=test),
            thresholds,
            criteria=criteria,
            rubric=rubric,
            quick=quick,
        )
    except JudgeError as exc:
        raise exc.with_traceback(None) from None  # shown where the test called, not inside the plugin
    text = render(report)
    if test is not None:
        test.sections.append((SECTION, text))
    if not report.qualified:
        raise QualificationFailed("the judge is not qualified:\n" + text, report)
    return report
