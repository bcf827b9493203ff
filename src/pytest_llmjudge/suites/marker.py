"""What `@pytest.mark.judge` (and `--judge-runs`) says of a test as part of a suite, read at its setup.

- `runs=N` runs the test body N times in its one item; `min_passes=K` (default N), or `min_pass_rate=R`
  (K = the least whole number of runs with K / N >= R), is how many runs must pass.  `--judge-runs=N`
  repeats every judged test; a marker's `runs=` wins over it, as every marker value wins over the
  command line.
- `pass_rate=R`, `mean_score=S` and `confidence=C` make a gate: the marker's place (a module, a class, a
  function and its parametrized cases) is a group, decided as one by the share of its cases that pass
  (or their mean score); `confidence=` gates on the lower bound of the interval instead.  The closest
  marker that sets `pass_rate=` or `mean_score=` is the test's gate, with that marker's `confidence=`.

A bad value is a `JudgeError` that names the argument and what it takes; the plugin fails the test with
it at setup, as it does for the marker's other arguments, so every xdist worker says the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import JudgeError
from ..stats import check_confidence

if TYPE_CHECKING:
    import pytest
    from _pytest.nodes import Node

GATE_KEYS = ("pass_rate", "mean_score", "confidence")
MARKER = "@pytest.mark.judge"


@dataclass(frozen=True)
class Gate:
    """A group's gate: the node id of where its marker is placed, and the figures its cases must reach."""

    group: str
    pass_rate: float | None = None  # the share of judged cases that must pass, in (0, 1]
    mean_score: float | None = None  # the mean of the cases' scores that must be reached, in [0, 1]
    confidence: float | None = None  # gate on the interval's lower bound at this level, not the estimate

    def spec(self) -> dict[str, float]:
        """The gate's figures as set, as they travel to the controller and reports show them."""
        values = {"pass_rate": self.pass_rate, "mean_score": self.mean_score, "confidence": self.confidence}
        return {name: value for name, value in values.items() if value is not None}


@dataclass(frozen=True)
class Suite:
    """How one test is run and decided, where not as usual: its runs, how many must pass, its gate."""

    runs: int = 1
    min_passes: int = 1
    gate: Gate | None = None
    asked: str = ""  # what asked for the runs, as a failure names it: `@pytest.mark.judge(runs=5)`, `--judge-runs=5`
    marked: bool = False  # the marker asked for runs: a test that makes no judgment is then an error

    @property
    def repeated(self) -> bool:
        return self.runs > 1


def suite_of(item: pytest.Item, marker: Mapping[str, Any], default_runs: int) -> Suite | None:
    """The test's suite from its merged marker arguments (`marker`, the closest value of each) and
    `--judge-runs` (`default_runs`); None where the test is neither repeated nor gated."""
    runs = default_runs
    marked = "runs" in marker
    if marked:
        runs = _whole(marker["runs"], "runs", 1)
    if "min_passes" in marker and "min_pass_rate" in marker:
        raise JudgeError(f"{MARKER}: give min_passes= or min_pass_rate=, not both")
    min_passes = runs
    if "min_passes" in marker:
        min_passes = _whole(marker["min_passes"], "min_passes", 1)
        if min_passes > runs:
            raise JudgeError(
                f"{MARKER}(min_passes={min_passes}) needs more passing runs than the test has "
                f"(runs={runs}): min_passes must be between 1 and runs"
            )
    elif "min_pass_rate" in marker:
        rate = _rate(marker["min_pass_rate"], "min_pass_rate", low_open=True)
        min_passes = max(1, math.ceil(rate * runs - 1e-9))  # the least K with K / runs >= rate
    gate = gate_of(item)
    if runs == 1 and gate is None:
        return None
    if marked:
        asked = f"{MARKER}(runs={runs}" + (f", min_passes={min_passes})" if min_passes != runs else ")")
    else:
        asked = f"--judge-runs={runs}" + (f" with {MARKER}(min_passes={min_passes})" if min_passes != runs else "")
    return Suite(runs, min_passes, gate, asked, marked)


def gate_of(item: pytest.Item) -> Gate | None:
    """The gate of the closest marker that sets `pass_rate=` or `mean_score=` (its group: where that marker
    is placed); every marker's gate arguments are checked, so a stray `confidence=` is never ignored."""
    found: Gate | None = None
    for node, mark in _judge_markers(item):
        given = {name: mark.kwargs[name] for name in GATE_KEYS if name in mark.kwargs}
        if not given:
            continue
        if "pass_rate" not in given and "mean_score" not in given:
            raise JudgeError(
                f"{MARKER}(confidence=...) on {_where(item, node)} gates on nothing: give pass_rate= or "
                "mean_score= in the same marker (confidence= says how sure the gate must be of it)"
            )
        gate = Gate(
            group_id(item, node),
            _rate(given["pass_rate"], "pass_rate", low_open=True) if "pass_rate" in given else None,
            _rate(given["mean_score"], "mean_score") if "mean_score" in given else None,
            _confidence(given["confidence"]) if "confidence" in given else None,
        )
        found = found or gate
    return found


def group_id(item: pytest.Item, node: Node) -> str:
    """The group of a gate marker found on `node`: its node id; on the test itself, its function's (the
    parametrized cases of one function are one group)."""
    if node is not item:
        return node.nodeid
    name = getattr(item, "originalname", None)
    parent = item.parent
    if not isinstance(name, str) or parent is None:
        return item.nodeid
    return f"{parent.nodeid}::{name}" if parent.nodeid else name


def _judge_markers(item: pytest.Item) -> Iterable[tuple[Node, pytest.Mark]]:
    return item.iter_markers_with_node("judge")


def _where(item: pytest.Item, node: Node) -> str:
    return group_id(item, node) or item.nodeid


def _whole(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise JudgeError(f"{MARKER}({name}=...) must be a whole number >= {low}, got {value!r}")
    return value


def _rate(value: Any, name: str, *, low_open: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if not ok or not (0.0 < value <= 1.0 if low_open else 0.0 <= value <= 1.0):
        span = "above 0 and at most 1" if low_open else "between 0 and 1"
        raise JudgeError(f"{MARKER}({name}=...) must be a number {span} (0.9 is 90%), got {value!r}")
    return float(value)


def _confidence(value: Any) -> float:
    try:
        return check_confidence(value)
    except ValueError as exc:
        raise JudgeError(f"{MARKER}(confidence=...): {exc}") from None
