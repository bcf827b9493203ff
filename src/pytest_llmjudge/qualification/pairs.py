"""The pairs a judge is qualified on: the bundled public sets, and files of the same shape.

A pair is `{"input": ..., "output_1": ..., "output_2": ..., "label": 1 | 2}`: an instruction, two outputs,
and which output is the better one.  A file holds a JSON list of pairs.  Bundled, as package data under
`data/` (read with `importlib.resources`, their licence notices beside them):

- LLMBar (Zeng et al., "Evaluating Large Language Models at Evaluating Instruction Following", ICLR 2024;
  github.com/princeton-nlp/LLMBar at commit 900616bff90b6c6c8e1681f7d079250637c55992, MIT): the
  adversarial subsets GPTInst (92 pairs), GPTOut (47) and Manual (46), `Dataset/LLMBar/Adversarial/*/
  dataset.json`.  One output follows the instruction, the other does not; in most pairs the one that does
  not is the longer and more polished, so these sets measure length bias by themselves.
- MT-Bench (200 pairs): `Dataset/Processed/MT-Bench/dataset.json` of the same commit, LLMBar's majority of
  the expert votes of lmsys' MT-Bench human judgments (CC BY 4.0), ties removed.

LLMBar's Natural and Neighbor subsets reuse Alpaca and AlpacaFarm instructions (CC BY-NC 4.0): they are not
bundled; `--data PATH` takes such a file.  A file given is untrusted input: a regular file of at most
`MAX_FILE_BYTES`, parsed as JSON, every pair checked, every problem named at once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import JudgeError

__all__ = [
    "BUNDLED",
    "MAX_FILE_BYTES",
    "QUICK_PAIRS",
    "Pair",
    "QualificationError",
    "Subset",
    "bundled_subsets",
    "load_pairs",
    "quick",
]

# The bundled subsets: name, file under data/, and where it comes from.
BUNDLED: tuple[tuple[str, str, str], ...] = (
    ("GPTInst", "LLMBar/Adversarial/GPTInst/dataset.json", "LLMBar Adversarial"),
    ("GPTOut", "LLMBar/Adversarial/GPTOut/dataset.json", "LLMBar Adversarial"),
    ("Manual", "LLMBar/Adversarial/Manual/dataset.json", "LLMBar Adversarial"),
    ("MT-Bench", "MT-Bench/dataset.json", "MT-Bench experts"),
)
QUICK_PAIRS = 10  # `--quick`: this many pairs of each subset, spread evenly over it
MAX_FILE_BYTES = 64 << 20  # a pairs file larger than this is refused unread
FIELDS = ("input", "output_1", "output_2", "label")
MAX_LISTED = 20  # problems listed in one error; the rest are counted


class QualificationError(JudgeError):
    """The pairs, or an option of the qualification, are unusable: the message names what and where.

    `.problems` lists every problem found in a pairs file, each prefixed with the file and the pair.
    """

    kind = "bad data"

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems) or (message,)


@dataclass(frozen=True)
class Pair:
    """One labelled pair: `label` names the better output (1 or 2); `index` is its place in its file (from 0)."""

    subset: str
    index: int
    input: str
    output_1: str
    output_2: str
    label: int

    @property
    def better_is(self) -> str:
        """How long the better output is against the other, in characters: "longer", "shorter" or "equal"."""
        better, worse = (self.output_1, self.output_2) if self.label == 1 else (self.output_2, self.output_1)
        return "longer" if len(better) > len(worse) else "shorter" if len(better) < len(worse) else "equal"


@dataclass(frozen=True)
class Subset:
    """A named set of pairs: a bundled one (`source` says whose) or a file given (`source` is its path)."""

    name: str
    pairs: tuple[Pair, ...]
    source: str
    bundled: bool = False


def bundled_subsets() -> list[Subset]:
    """The bundled subsets, read from the package's data."""
    data = resources.files(__name__.rpartition(".")[0]).joinpath("data")
    subsets = []
    for name, file, source in BUNDLED:
        text = data.joinpath(file).read_text(encoding="utf-8")
        subsets.append(Subset(name, _pairs(name, text, f"(bundled) {file}"), source, bundled=True))
    return subsets


def load_pairs(path: str | os.PathLike[str], names: Sequence[str] = ()) -> Subset:
    """The pairs of a file given (`--data`), named after its stem; `names` are the subsets already taken."""
    from ..store.verdict_file import RefusedFile, read_regular_file

    where = os.fspath(path)
    name = Path(where).stem
    if name in names:
        raise QualificationError(f"{where}: a subset named {name!r} is already qualified on: rename the file")
    try:
        raw = read_regular_file(where, MAX_FILE_BYTES)
    except RefusedFile as exc:
        raise QualificationError(f"{where}: refused to read the pairs file: {exc}") from None
    except OSError as exc:
        raise QualificationError(f"{where}: cannot read the pairs file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QualificationError(f"{where}: not UTF-8 text") from None
    return Subset(name, _pairs(name, text, where), where)


def quick(subset: Subset, count: int = QUICK_PAIRS) -> Subset:
    """`count` pairs of `subset`, spread evenly: the pairs at 0, k, 2k, ... (k = n // count), the first `count`."""
    pairs = subset.pairs
    step = max(1, len(pairs) // count)
    return Subset(subset.name, pairs[::step][:count], subset.source, subset.bundled)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _pairs(subset: str, text: str, where: str) -> tuple[Pair, ...]:
    try:
        rows = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise QualificationError(f"{where}: nested too deeply to be a list of pairs") from None
    except ValueError as exc:  # JSONDecodeError is one
        raise QualificationError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(rows, list):
        raise QualificationError(f"{where}: expected a JSON list of pairs, got {type(rows).__name__}")
    if not rows:
        raise QualificationError(f"{where}: no pairs")
    problems: list[str] = []
    pairs: list[Pair] = []
    for index, row in enumerate(rows):
        problem = _problem(row)
        if problem is not None:
            problems.append(f"{where}: pair {index}: {problem}")
            continue
        pairs.append(Pair(subset, index, row["input"], row["output_1"], row["output_2"], row["label"]))
    if problems:
        listed = problems[:MAX_LISTED]
        if len(problems) > MAX_LISTED:
            listed.append(f"... and {len(problems) - MAX_LISTED} more")
        head = problems[0] if len(problems) == 1 else f"{len(problems)} bad pairs in {where}:\n  " + "\n  ".join(listed)
        raise QualificationError(head, problems)
    return tuple(pairs)


def _problem(row: object) -> str | None:
    """What is wrong with one pair, or None."""
    if not isinstance(row, dict):
        return f"a pair is a JSON object, not {type(row).__name__}"
    unknown = sorted(str(k) for k in row if k not in FIELDS)
    if unknown:
        return f"unknown field(s) {', '.join(map(repr, unknown))} (a pair has {', '.join(FIELDS)})"
    for name in FIELDS[:3]:
        if not isinstance(row.get(name), str):
            return f"{name!r} must be a string" if name in row else f"missing field {name!r}"
    label = row.get("label")
    if isinstance(label, bool) or not isinstance(label, int) or label not in (1, 2):
        return f"'label' must be 1 or 2 (the better output), got {label!r}"
    return None
