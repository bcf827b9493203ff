"""Labelled examples: the human decisions a judge is calibrated against, read from JSONL, CSV or rows.

One example per row: `output` and `criteria` (required), optional `input`, `expected`, `rubric`,
`id` and `note`, and the human `label`.  A label is either pass/fail (`pass`, `fail`, `true`,
`false`, any case, or a JSON boolean) or a score (a number in [0, 1]; in CSV, any cell that reads as
a number).  `1` and `0` are scores, not pass/fail: write `pass`/`fail` or `true`/`false` for those.

Decisions (each is an error naming the file and the line, never a silent skip):
- one file holds one kind of label: pass/fail and score labels are not mixed, because they give
  different figures (kappa vs rho) and a mix usually means a column was typed by hand;
- unknown fields are errors, so that a typo (`expcted`) does not silently drop what the judge sees;
- an empty optional field (`""`, or JSON `null`) is the same as an absent one (CSV cannot tell them
  apart); `output` may be empty, `criteria` and `label` may not;
- ids, when given, are unique; an example without an id is named by its line.
Every problem in the file is collected and reported at once.  Nothing is executed or unpickled:
JSON goes through `json`, CSV through `csv`, both decoded as UTF-8 (a leading BOM is ignored).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import JudgeError

LabelKind = Literal["pass/fail", "score"]

REQUIRED = ("output", "criteria", "label")
OPTIONAL = ("input", "expected", "rubric", "id", "note")
FIELDS = REQUIRED + OPTIONAL

# Beyond this many problems the message says how many more: a wrong file should not flood a terminal.
MAX_LISTED = 20

_PASS = frozenset({"pass", "true"})
_FAIL = frozenset({"fail", "false"})


class CalibrationError(JudgeError):
    """A labelled-examples file (or list of rows) is unusable.

    `.source` is the file (or `<rows>`), `.problems` every problem found, each already prefixed
    with where it is (`file:line: ...`).
    """

    kind = "bad labels"

    def __init__(self, message: str, *, source: str = "", problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.source = source
        self.problems = problems


@dataclass(frozen=True)
class LabelledExample:
    """One human-labelled example.

    `label` is `True`/`False` for a pass/fail label and a float in [0, 1] for a score label;
    `kind` says which.  `line` is the 1-based line (or row number, for rows given directly) where
    the example starts, and `name` is how reports refer to it.
    """

    output: str
    criteria: str
    label: bool | float
    kind: LabelKind
    line: int
    input: str | None = None
    expected: str | None = None
    rubric: str | None = None
    id: str | None = None
    note: str | None = None

    @property
    def name(self) -> str:
        """The example's id, or `line N` when it has none."""
        return self.id if self.id is not None else f"line {self.line}"


class _RowProblem(Exception):
    """One thing wrong with one row (collected, then raised as one CalibrationError)."""


def parse_label(value: object) -> tuple[bool | float, LabelKind]:
    """Read one human label: `(True/False, "pass/fail")` or `(score, "score")`.

    Raises ValueError saying what is wrong.  Booleans and pass/fail/true/false strings (any case,
    surrounding spaces ignored) are pass/fail; numbers and numeric strings are scores, which must
    be finite and within [0, 1].
    """
    if isinstance(value, bool):
        return value, "pass/fail"
    if isinstance(value, int) and not 0 <= value <= 1:
        # Checked as an int: float() of a huge JSON integer raises OverflowError.
        raise ValueError(f"score label {value} is out of range [0, 1]")
    if isinstance(value, (int, float)):
        return _score(float(value), repr(value)), "score"
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _PASS:
            return True, "pass/fail"
        if text.lower() in _FAIL:
            return False, "pass/fail"
        if not text:
            raise ValueError("label is empty")
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"unknown label {value!r}: use pass, fail, true, false or a score in [0, 1]") from None
        return _score(number, repr(value)), "score"
    raise ValueError(f"label must be pass/fail, true/false or a number in [0, 1], not {type(value).__name__}")


def _score(number: float, shown: str) -> float:
    # float("nan") and float("inf") parse: a score must still be a real number in range.
    if not math.isfinite(number):
        raise ValueError(f"label {shown} is not a finite number")
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"score label {shown} is out of range [0, 1]")
    return number


def _required_text(row: Mapping[str, object], name: str) -> str:
    value = row.get(name)
    if value is None:
        raise _RowProblem(f"missing field {name!r}")
    if not isinstance(value, str):
        raise _RowProblem(f"field {name!r} must be a string, not {type(value).__name__}")
    return value


def _optional_text(row: Mapping[str, object], name: str) -> str | None:
    return None if row.get(name) in (None, "") else _required_text(row, name)


def _example(row: Mapping[str, object], line: int) -> LabelledExample:
    unknown = sorted(str(key) for key in row if key not in FIELDS)
    if unknown:
        raise _RowProblem(f"unknown field(s) {', '.join(map(repr, unknown))} (known: {', '.join(FIELDS)})")
    output = _required_text(row, "output")
    criteria = _required_text(row, "criteria")
    if not criteria.strip():
        raise _RowProblem("field 'criteria' is empty")
    if "label" not in row or row["label"] is None:
        raise _RowProblem("missing field 'label'")
    try:
        label, kind = parse_label(row["label"])
    except ValueError as exc:
        raise _RowProblem(str(exc)) from None
    raw_id = row.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        # JSON ids are often numbers; compare and report them as text.
        raw_id = str(raw_id)
    ident = _optional_text({"id": raw_id}, "id")
    return LabelledExample(
        output=output,
        criteria=criteria,
        label=label,
        kind=kind,
        line=line,
        input=_optional_text(row, "input"),
        expected=_optional_text(row, "expected"),
        rubric=_optional_text(row, "rubric"),
        id=ident,
        note=_optional_text(row, "note"),
    )


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise _RowProblem(f"field {key!r} given twice")
        seen[key] = value
    return seen


def _reject_constant(name: str) -> object:
    # json accepts NaN and Infinity by default; they are not JSON and no label or text needs them.
    raise _RowProblem(f"{name} is not valid JSON")


def _jsonl_rows(text: str) -> Iterable[tuple[int, Mapping[str, object] | _RowProblem]]:
    # Split on "\n" only: str.splitlines also splits on U+2028 and friends, which may sit inside a JSON string.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        try:
            value = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
        except _RowProblem as problem:
            value = problem
        except json.JSONDecodeError as exc:
            value = _RowProblem(f"not JSON ({exc.msg} at column {exc.colno})")
        except (ValueError, RecursionError) as exc:
            # An integer past the int-to-str digit limit, or arrays nested past the recursion limit.
            reason = "nested too deeply" if isinstance(exc, RecursionError) else "a number too long to read"
            value = _RowProblem(f"not JSON ({reason})")
        if isinstance(value, (dict, _RowProblem)):
            yield number, value
        else:
            yield number, _RowProblem(f"each line must be a JSON object, not {type(value).__name__}")


def _csv_rows(text: str) -> Iterable[tuple[int, Mapping[str, object] | _RowProblem]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    header_line = 0
    while True:
        # A quoted cell may span lines: a record starts on the line after the previous one ended.
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield start, _RowProblem(f"not valid CSV ({exc})")
            return
        if not record or all(not cell.strip() for cell in record):
            continue
        if header is None:
            header = [cell.strip() for cell in record]
            header_line = start
            problem = _header_problem(header)
            if problem:
                yield start, _RowProblem(problem)
                return
            continue
        if len(record) != len(header):
            yield start, _RowProblem(f"row has {len(record)} cells, the header (line {header_line}) has {len(header)}")
            continue
        yield start, dict(zip(header, record, strict=True))


def _header_problem(header: list[str]) -> str | None:
    # Checked once on the header, rather than once per row with the same message.
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        return f"header repeats column(s) {', '.join(map(repr, repeated))}"
    unknown = [name for name in header if name not in FIELDS]
    if unknown:
        return f"unknown column(s) {', '.join(map(repr, unknown))} (known: {', '.join(FIELDS)})"
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        return f"missing column(s) {', '.join(map(repr, missing))}"
    return None


def _read(path: Path) -> tuple[str, Iterable[tuple[int, Mapping[str, object] | _RowProblem]]]:
    where = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".ndjson", ".csv"):
        raise CalibrationError(
            f"{where}: unknown labelled-examples format {suffix or '(no suffix)'!r}: use .jsonl or .csv",
            source=where,
        )
    try:
        data = path.read_bytes()
        text = data.decode("utf-8-sig")
    except OSError as exc:
        raise CalibrationError(
            f"{where}: cannot read labelled examples ({exc.strerror or exc})", source=where
        ) from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CalibrationError(f"{where}:{line}: not UTF-8 text", source=where) from None
    return where, (_csv_rows(text) if suffix == ".csv" else _jsonl_rows(text))


def _given_rows(rows: Iterable[object]) -> Iterable[tuple[int, Mapping[str, object] | _RowProblem]]:
    # Typed as object: callers are not type-checked, and a list of strings deserves a clear error.
    for number, row in enumerate(rows, start=1):
        if isinstance(row, Mapping):
            yield number, row
        else:
            yield number, _RowProblem(f"each row must be a mapping, not {type(row).__name__}")


def load_examples(source: str | os.PathLike[str] | Iterable[Mapping[str, object]]) -> list[LabelledExample]:
    """Read labelled examples from a `.jsonl`/`.ndjson` or `.csv` file, or from rows given directly.

    A `str` or path is a file; anything else is an iterable of dict rows (numbered from 1 in
    messages, as `<rows>:N`).  Raises `CalibrationError` listing every bad row, an empty source,
    duplicate ids and mixed label kinds.
    """
    given: object = source  # checked at run time, whatever the annotation promises
    if isinstance(source, (str, os.PathLike)):
        where, parsed = _read(Path(source))
    elif isinstance(given, Mapping):
        raise CalibrationError("<rows>: expected a list of rows, got a single mapping", source="<rows>")
    else:
        where, parsed = "<rows>", _given_rows(source)

    problems: list[str] = []
    examples: list[LabelledExample] = []
    ids: dict[str, int] = {}
    first_kind: tuple[LabelKind, int] | None = None
    for line, row in parsed:
        try:
            if isinstance(row, _RowProblem):
                raise row
            example = _example(row, line)
            if example.id is not None:
                if example.id in ids:
                    raise _RowProblem(f"duplicate id {example.id!r} (first on line {ids[example.id]})")
                ids[example.id] = line
            if first_kind is None:
                first_kind = (example.kind, line)
            elif example.kind != first_kind[0]:
                raise _RowProblem(
                    f"{example.kind} label, but line {first_kind[1]} has a {first_kind[0]} label:"
                    " one file holds one kind of label"
                )
        except _RowProblem as problem:
            problems.append(f"{where}:{line}: {problem}")
            continue
        examples.append(example)

    if problems:
        listed = problems[:MAX_LISTED]
        if len(problems) > MAX_LISTED:
            listed.append(f"... and {len(problems) - MAX_LISTED} more")
        head = problems[0] if len(problems) == 1 else f"{len(problems)} bad rows in {where}:\n  " + "\n  ".join(listed)
        raise CalibrationError(head, source=where, problems=tuple(problems))
    if not examples:
        raise CalibrationError(f"{where}: no labelled examples", source=where)
    return examples
