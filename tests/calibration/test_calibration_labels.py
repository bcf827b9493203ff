"""Reading labelled examples: JSONL, CSV and rows, and every bad row as an error naming file and line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_llmjudge.calibration.examples import CalibrationError, LabelledExample, load_examples, parse_label
from pytest_llmjudge.errors import JudgeError


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def jsonl(*rows: object) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def error_of(source: object) -> CalibrationError:
    with pytest.raises(CalibrationError) as info:
        load_examples(source)  # type: ignore[arg-type]
    return info.value


# --- labels -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("pass", (True, "pass/fail")),
        (" FAIL ", (False, "pass/fail")),
        ("True", (True, "pass/fail")),
        ("false", (False, "pass/fail")),
        (True, (True, "pass/fail")),
        (False, (False, "pass/fail")),
        (1, (1.0, "score")),
        (0, (0.0, "score")),
        (0.25, (0.25, "score")),
        ("0.75", (0.75, "score")),
    ],
)
def test_parse_label(raw: object, expected: tuple[object, str]) -> None:
    assert parse_label(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("maybe", "unknown label 'maybe'"),
        ("", "label is empty"),
        (1.5, "out of range"),
        (-0.1, "out of range"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        (None, "not NoneType"),
        ([1], "not list"),
    ],
)
def test_parse_label_rejects(raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_label(raw)


# --- good files -------------------------------------------------------------------------------------


def test_jsonl_with_every_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "labels.jsonl",
        jsonl(
            {
                "id": "refund-1",
                "input": "Can I get a refund?",
                "output": "Yes, within 30 days.",
                "expected": "Refunds within 30 days",
                "criteria": "states the refund window",
                "rubric": "passfail",
                "label": "PASS",
                "note": "clear",
            }
        )
        + "\n"  # a blank line is skipped but still counted
        + jsonl({"output": "", "criteria": "is polite", "label": False, "id": 7, "note": None}),
    )
    first, second = load_examples(path)
    assert first == LabelledExample(
        output="Yes, within 30 days.",
        criteria="states the refund window",
        label=True,
        kind="pass/fail",
        line=1,
        input="Can I get a refund?",
        expected="Refunds within 30 days",
        rubric="passfail",
        id="refund-1",
        note="clear",
    )
    # an empty output is allowed; a numeric id becomes text; null is absent; line 3 after the blank line
    assert (second.output, second.label, second.id, second.note, second.line) == ("", False, "7", None, 3)
    assert first.name == "refund-1"
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.label = False  # type: ignore[misc]


def test_jsonl_counts_lines_on_newlines_only(tmp_path: Path) -> None:
    # U+2028 is a line break to str.splitlines but ordinary text inside a JSON string.
    text = '{"output": "a\u2028b", "criteria": "c", "label": "pass"}\n{"output": "x", "criteria": "c"}\n'
    error = error_of(write(tmp_path, "labels.jsonl", text))
    assert str(error).endswith("labels.jsonl:2: missing field 'label'")


def test_csv_with_a_multiline_cell_bom_and_scores(tmp_path: Path) -> None:
    text = '\ufeffid,output,criteria,label\nr1,"two\nlines",is short,0.25\nr2,one line,is short,1\n\nr3,x,c,0\n'
    examples = load_examples(write(tmp_path, "labels.csv", text))
    assert [(e.id, e.output, e.label, e.kind, e.line) for e in examples] == [
        ("r1", "two\nlines", 0.25, "score", 2),
        ("r2", "one line", 1.0, "score", 4),  # starts after the two-line record
        ("r3", "x", 0.0, "score", 6),  # after a blank line
    ]
    # empty optional cells are absent
    assert examples[0].input is None and examples[0].note is None


def test_csv_line_numbers_in_errors_follow_multiline_cells(tmp_path: Path) -> None:
    text = 'output,criteria,label\n"a\nb\nc",crit,pass\nok,crit,sometimes\n'
    error = error_of(write(tmp_path, "labels.csv", text))
    assert str(error).endswith(
        "labels.csv:5: unknown label 'sometimes': use pass, fail, true, false or a score in [0, 1]"
    )
    assert error.source.endswith("labels.csv")


def test_rows_given_directly_and_a_str_path(tmp_path: Path) -> None:
    rows = [{"output": "o", "criteria": "c", "label": "fail"}, {"output": "p", "criteria": "c", "label": True}]
    examples = load_examples(rows)
    assert [(e.label, e.line, e.name) for e in examples] == [(False, 1, "line 1"), (True, 2, "line 2")]
    path = write(tmp_path, "labels.ndjson", jsonl(*rows))
    assert load_examples(str(path)) == examples


# --- bad files: one message each, naming file and line ---------------------------------------------


GOOD = {"output": "o", "criteria": "c", "label": "pass"}


@pytest.mark.parametrize(
    ("line2", "message"),
    [
        ('{"criteria": "c", "label": "pass"}', "missing field 'output'"),
        ('{"output": "o", "label": "pass"}', "missing field 'criteria'"),
        ('{"output": "o", "criteria": "  ", "label": "pass"}', "field 'criteria' is empty"),
        ('{"output": "o", "criteria": "c", "label": null}', "missing field 'label'"),
        ('{"output": "o", "criteria": "c", "label": "ok"}', "unknown label 'ok'"),
        ('{"output": "o", "criteria": "c", "label": 2}', "score label 2 is out of range [0, 1]"),
        ('{"output": "o", "criteria": "c", "label": NaN}', "NaN is not valid JSON"),
        ('{"output": 3, "criteria": "c", "label": "pass"}', "field 'output' must be a string, not int"),
        ('{"output": "o", "criteria": "c", "label": "pass", "expcted": "x"}', "unknown field(s) 'expcted'"),
        ('{"output": "o", "criteria": "c", "label": "pass", "label": "fail"}', "field 'label' given twice"),
        ('{"output": "o", "criteria": "c", "label": "pass"', "not JSON (Expecting ',' delimiter at column 49)"),
        ("[1, 2]", "each line must be a JSON object, not list"),
        ('{"output": "o", "criteria": "c", "label": 0.5}', "score label, but line 1 has a pass/fail label"),
    ],
)
def test_bad_jsonl_row(tmp_path: Path, line2: str, message: str) -> None:
    path = write(tmp_path, "labels.jsonl", json.dumps(GOOD) + "\n" + line2 + "\n")
    error = error_of(path)
    assert isinstance(error, JudgeError)
    assert str(error).startswith(f"{path}:2: ")
    assert message in str(error)
    assert error.problems == (str(error),)


@pytest.mark.parametrize(
    ("line2", "message"),
    [
        ("[" * 100_000, "not JSON (nested too deeply)"),
        ('{"output": "o", "criteria": "c", "label": ' + "9" * 5000 + "}", "not JSON (a number too long to read)"),
        ('{"output": "o", "criteria": "c", "label": ' + "9" * 400 + "}", "out of range [0, 1]"),
    ],
    ids=["deep nesting", "int past the digit limit", "int past float range"],
)
def test_hostile_jsonl_row_is_a_row_error_not_a_crash(tmp_path: Path, line2: str, message: str) -> None:
    path = write(tmp_path, "labels.jsonl", json.dumps(GOOD) + "\n" + line2 + "\n")
    error = error_of(path)
    assert str(error).startswith(f"{path}:2: ")
    assert message in str(error)


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    rows = [{**GOOD, "id": "x"}, {**GOOD, "id": "y"}, {**GOOD, "id": "x"}]
    error = error_of(write(tmp_path, "labels.jsonl", jsonl(*rows)))
    assert str(error).endswith("labels.jsonl:3: duplicate id 'x' (first on line 1)")


def test_every_bad_row_is_listed_at_once(tmp_path: Path) -> None:
    rows = [GOOD, {"output": "o", "criteria": "c"}, GOOD, {**GOOD, "label": "meh"}]
    error = error_of(write(tmp_path, "labels.jsonl", jsonl(*rows)))
    assert str(error).startswith(f"2 bad rows in {tmp_path / 'labels.jsonl'}:")
    assert [problem.split(": ", 1)[0].rsplit(":", 1)[1] for problem in error.problems] == ["2", "4"]


def test_a_long_list_of_problems_is_cut(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, "labels.jsonl", "not json\n" * 25))
    assert len(error.problems) == 25
    assert str(error).endswith("... and 5 more")


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_jsonl(tmp_path: Path, text: str) -> None:
    error = error_of(write(tmp_path, "labels.jsonl", text))
    assert str(error) == f"{tmp_path / 'labels.jsonl'}: no labelled examples"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ": no labelled examples"),
        ("output,criteria,label\n", ": no labelled examples"),
        ("output,criteria,label,label\no,c,pass,pass\n", ":1: header repeats column(s) 'label'"),
        ("output,criteria,lable\no,c,pass\n", ":1: unknown column(s) 'lable'"),
        ("output,label\no,pass\n", ":1: missing column(s) 'criteria'"),
        ("output,criteria,label\no,c,pass,extra\n", ":2: row has 4 cells, the header (line 1) has 3"),
        ("output,criteria,label\no,c,\n", ":2: label is empty"),
        ('output,criteria,label\n"o,c,pass\n', ":2: not valid CSV"),
    ],
)
def test_bad_csv(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "labels.csv", text)
    assert str(error_of(path)).startswith(f"{path}{message}")


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b'\n{"output": "caf\xe9"}\n')
    assert str(error_of(path)) == f"{path}:2: not UTF-8 text"


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    assert "unknown labelled-examples format '.json': use .jsonl or .csv" in str(
        error_of(write(tmp_path, "labels.json", "[]"))
    )
    assert "cannot read labelled examples" in str(error_of(tmp_path / "absent.csv"))


def test_bad_rows_given_directly() -> None:
    assert str(error_of([GOOD, "not a row"])) == "<rows>:2: each row must be a mapping, not str"
    assert "got a single mapping" in str(error_of(GOOD))
    assert str(error_of([])) == "<rows>: no labelled examples"
