"""A qualification's figures, from each pair's two answers, and the decision against the thresholds.

Pure functions over `Judged` pairs: nothing here reads files or calls a judge.  An *answer* is what the
judge picked in one order: output "1", output "2", "tie", or None where its reply held no verdict
(unreadable).  Each pair is asked in both orders (output 1 shown first, then output 2 shown first).

- accuracy: of the readable answers, the share naming the labelled better output.  A tie is readable and
  not right: every pair has a better output.  The mean of the two orders' accuracies, as LLMBar reports it.
- position consistency: of the pairs with two readable answers, the share where both name the same output
  (or both say tie): LLMBar's `equal`.  A judge that picks by position scores 0, one that picks at random 0.5.
- first-slot rate: of the readable answers naming an output, the share naming the one shown first (0.5 for
  a judge with no preference for a position; it says which way an inconsistent judge leans).
- length bias: the accuracy where the better output is the longer (in characters) and where it is the
  shorter, and the gap between them (longer minus shorter); pairs of equal length count in neither.
- kappa: Cohen's kappa of the judge's picks against the human labels on MT-Bench (answers naming an output).
- unreadable: the share of all answers whose reply held no verdict (counted, never right or wrong).

Every rate has a Wilson interval (`stats.wilson`) that counts a pair once: its two answers are correlated (a
judge right in one order is mostly right in the other), so each is half a trial, which errs wide (a design
effect of 2, the most two answers can have).  The gap's interval is Newcombe's from the two Wilson intervals;
kappa's is its Wald interval, widened by the same factor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..stats import Z95, Confusion, Interval, cohen_kappa, newcombe_difference, wilson
from .anchors import ANCHORS, JUDGES, POOLED
from .pairs import Pair, QualificationError

__all__ = [
    "KAPPA_SUBSET",
    "Figures",
    "Judged",
    "KappaFigure",
    "LengthBias",
    "Rate",
    "Report",
    "SubsetFigures",
    "Thresholds",
    "compute",
    "shortfalls",
]

KAPPA_SUBSET = "MT-Bench"  # the human votes: the bundled subset kappa is computed on
# Two answers per pair count as one trial (see the module docstring).
DESIGN_EFFECT = 2.0


@dataclass(frozen=True)
class Judged:
    """One pair and the judge's answers: `first` with output 1 shown first, `second` with output 2 shown first."""

    pair: Pair
    first: str | None
    second: str | None

    def answers(self) -> tuple[tuple[str | None, str], tuple[str | None, str]]:
        """Each answer with the output shown first when it was given."""
        return (self.first, "1"), (self.second, "2")


@dataclass(frozen=True)
class Rate:
    """A share with its interval; `n` is what it is over (pairs, or answers where said), `value` None when
    nothing was."""

    value: float | None
    interval: Interval
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "interval": self.interval.to_json(), "n": self.n}


def _rate(hits: int, trials: int, *, answers: bool = True, n: int | None = None) -> Rate:
    """`hits` of `trials`; `answers`: the trials are answers, two per pair (see the module docstring)."""
    effect = DESIGN_EFFECT if answers else 1.0
    interval = wilson(hits / effect, trials / effect)
    return Rate(hits / trials if trials else None, interval, trials if n is None else n)


@dataclass(frozen=True)
class SubsetFigures:
    """The figures of one subset (or of all, pooled): `n` pairs, their answers counted by kind."""

    name: str
    source: str
    n: int
    correct: int
    readable: int
    ties: int
    unreadable: int
    accuracy: Rate
    position_consistency: Rate
    first_slot_rate: Rate

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "n": self.n,
            "accuracy": self.accuracy.value,
            "interval": self.accuracy.interval.to_json(),
            "answers": {"readable": self.readable, "correct": self.correct, "ties": self.ties},
            "unreadable": self.unreadable,
            "position_consistency": self.position_consistency.to_json(),
            "first_slot_rate": self.first_slot_rate.to_json(),
            "anchors": {
                judge: {
                    "accuracy": anchor.accuracy,
                    "position_consistency": anchor.position_consistency,
                    "first_slot_rate": anchor.first_slot_rate,
                    "source": anchor.source,
                }
                for judge, anchor in ANCHORS.get(self.name, {}).items()
            },
        }


@dataclass(frozen=True)
class KappaFigure:
    """Cohen's kappa on MT-Bench: `n` answers naming an output; `interval` None where none is meaningful."""

    value: float | None
    interval: tuple[float, float] | None
    n: int
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        interval = list(self.interval) if self.interval is not None else None
        return {"subset": KAPPA_SUBSET, "value": self.value, "interval": interval, "n": self.n, "note": self.note}


@dataclass(frozen=True)
class LengthBias:
    """Accuracy where the better output is the longer and where it is the shorter; `gap` their difference."""

    better_longer: Rate
    better_shorter: Rate
    gap: Interval | None
    equal_length: int

    def to_json(self) -> dict[str, Any]:
        return {
            "better_longer": self.better_longer.to_json(),
            "better_shorter": self.better_shorter.to_json(),
            "gap": None if self.gap is None else {"value": self.gap.estimate, "interval": self.gap.to_json()},
            "equal_length": self.equal_length,
        }


@dataclass(frozen=True)
class Figures:
    """Every figure of one qualification."""

    subsets: tuple[SubsetFigures, ...]
    overall: SubsetFigures
    kappa: KappaFigure | None
    length_bias: LengthBias
    unreadable: Rate  # of all answers

    @property
    def answers(self) -> int:
        return 2 * self.overall.n


def _subset(name: str, source: str, judged: Sequence[Judged]) -> SubsetFigures:
    correct = readable = ties = unreadable = firsts = sided = both = same = 0
    for item in judged:
        label = str(item.pair.label)
        for pick, shown_first in item.answers():
            if pick is None:
                unreadable += 1
                continue
            readable += 1
            correct += pick == label
            ties += pick == "tie"
            if pick != "tie":
                sided += 1
                firsts += pick == shown_first
        if item.first is not None and item.second is not None:
            both += 1
            same += item.first == item.second
    return SubsetFigures(
        name,
        source,
        len(judged),
        correct,
        readable,
        ties,
        unreadable,
        accuracy=_rate(correct, readable, n=len(judged)),
        position_consistency=_rate(same, both, answers=False),
        first_slot_rate=_rate(firsts, sided),
    )


def _kappa(judged: Sequence[Judged]) -> KappaFigure:
    """Human label against the judge's pick (positive: output 1 is the better), over answers naming an output."""
    cells = {(h, j): 0 for h in "12" for j in "12"}
    for item in judged:
        for pick, _ in item.answers():
            if pick in ("1", "2"):
                cells[str(item.pair.label), pick] += 1
    table = Confusion(tp=cells["1", "1"], fp=cells["2", "1"], tn=cells["2", "2"], fn=cells["1", "2"])
    kappa = cohen_kappa(table)
    interval = None
    if kappa.value is not None and kappa.se is not None:
        half = Z95 * kappa.se * math.sqrt(DESIGN_EFFECT)
        interval = (max(-1.0, kappa.value - half), min(1.0, kappa.value + half))
    return KappaFigure(kappa.value, interval, table.n, kappa.note)


def _length_bias(judged: Sequence[Judged]) -> LengthBias:
    tallies = {"longer": [0, 0, 0], "shorter": [0, 0, 0]}  # correct answers, readable answers, pairs
    equal = 0
    for item in judged:
        bucket = tallies.get(item.pair.better_is)
        if bucket is None:
            equal += 1
            continue
        bucket[2] += 1
        for pick, _ in item.answers():
            if pick is not None:
                bucket[1] += 1
                bucket[0] += pick == str(item.pair.label)
    longer, shorter = (_rate(c, r, n=p) for c, r, p in (tallies["longer"], tallies["shorter"]))
    gap = None
    if longer.value is not None and shorter.value is not None:
        gap = newcombe_difference(longer.interval, shorter.interval)
    return LengthBias(longer, shorter, gap, equal)


def compute(subsets: Mapping[str, tuple[str, Sequence[Judged]]]) -> Figures:
    """The figures of judged pairs, by subset name (each with its source)."""
    if not subsets or not any(judged for _, judged in subsets.values()):
        raise QualificationError("no pairs were judged")
    everything = [item for _, judged in subsets.values() for item in judged]
    per_subset = tuple(_subset(name, source, judged) for name, (source, judged) in subsets.items())
    overall = _subset("all", "all", everything)
    voted = [item for item in everything if item.pair.subset == KAPPA_SUBSET]  # a file given never takes its name
    unreadable = _rate(overall.unreadable, 2 * overall.n)
    return Figures(per_subset, overall, _kappa(voted) if voted else None, _length_bias(everything), unreadable)


# -- the decision --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The bars a judge must clear; None: not checked.  The defaults are documented in docs/qualify.md."""

    min_accuracy: float | None = 0.75
    min_position_consistency: float | None = 0.80
    max_length_gap: float | None = 0.20
    max_unreadable: float | None = 0.05
    min_kappa: float | None = None

    def __post_init__(self) -> None:
        for name, value in self.to_json().items():
            low = -1.0 if name == "min_kappa" else 0.0
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= 1.0:
                raise QualificationError(f"{name} must be a number in [{low:g}, 1], got {value!r}")

    def to_json(self) -> dict[str, float | None]:
        return {
            "min_accuracy": self.min_accuracy,
            "min_position_consistency": self.min_position_consistency,
            "max_length_gap": self.max_length_gap,
            "max_unreadable": self.max_unreadable,
            "min_kappa": self.min_kappa,
        }


def shortfalls(figures: Figures, bars: Thresholds) -> tuple[str, ...]:
    """Each figure that misses its bar, as one phrase naming the figure, its value and the bar."""
    gap = figures.length_bias.gap
    checks: Iterable[tuple[str, float | None, str, float | None, str, str]] = (
        # (figure, value, bar name, bar, "min" or "max", why a value is missing)
        ("accuracy", figures.overall.accuracy.value, "min_accuracy", bars.min_accuracy, "min", "no readable answer"),
        (
            "position consistency",
            figures.overall.position_consistency.value,
            "min_position_consistency",
            bars.min_position_consistency,
            "min",
            "no pair has two readable answers",
        ),
        (
            "length gap",
            None if gap is None else abs(gap.estimate),
            "max_length_gap",
            bars.max_length_gap,
            "max",
            "the better output is never the longer, or never the shorter, in the readable answers",
        ),
        ("unreadable", figures.unreadable.value, "max_unreadable", bars.max_unreadable, "max", "no answers"),
        (
            "kappa",
            None if figures.kappa is None else figures.kappa.value,
            "min_kappa",
            bars.min_kappa,
            "min",
            (figures.kappa.note if figures.kappa is not None else None) or f"no {KAPPA_SUBSET} pair was judged",
        ),
    )
    found = []
    for name, value, bar_name, bar, side, why in checks:
        if bar is None:
            continue
        shown = _shown(bar_name, bar)
        if value is None:
            found.append(f"{name} is undefined ({why}), so it cannot meet {bar_name} {shown}")
        elif (value < bar) if side == "min" else (value > bar):
            found.append(f"{name} {_shown(bar_name, value)} {'<' if side == 'min' else '>'} {bar_name} {shown}")
    return tuple(found)


def _shown(name: str, value: float) -> str:
    if name == "min_kappa":
        return f"{value:.2f}"
    if name == "max_length_gap":
        return f"{value * 100:.1f} points"
    return f"{value:.1%}"


@dataclass(frozen=True)
class Report:
    """A qualification: its figures, the bars, what fell short, and what was judged how (`about`)."""

    figures: Figures
    thresholds: Thresholds
    shortfalls: tuple[str, ...]
    about: dict[str, Any] = field(default_factory=dict)

    @property
    def qualified(self) -> bool:
        return not self.shortfalls

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON-ready dict: `qualified`, `subsets`, `position_consistency`, `first_slot_rate`,
        `length_bias`, and the rest (see docs/qualify.md)."""
        figures = self.figures
        overall = figures.overall
        return {
            "qualified": self.qualified,
            "shortfalls": list(self.shortfalls),
            "thresholds": self.thresholds.to_json(),
            "subsets": {s.name: s.to_json() for s in figures.subsets},
            "overall": overall.to_json(),
            "position_consistency": overall.position_consistency.to_json(),
            "first_slot_rate": overall.first_slot_rate.to_json(),
            "length_bias": figures.length_bias.to_json(),
            "kappa": None if figures.kappa is None else figures.kappa.to_json(),
            "unreadable": {**figures.unreadable.to_json(), "count": overall.unreadable},
            "ties": overall.ties,
            "anchors": {
                judge: {
                    "accuracy": POOLED[judge].accuracy,
                    "position_consistency": POOLED[judge].position_consistency,
                    "first_slot_rate": POOLED[judge].first_slot_rate,
                    "length_bias": {
                        "better_longer": POOLED[judge].better_longer,
                        "better_shorter": POOLED[judge].better_shorter,
                        "gap": POOLED[judge].length_gap,
                    },
                    "kappa": POOLED[judge].kappa,
                }
                for judge in JUDGES
            },
            **self.about,
        }
