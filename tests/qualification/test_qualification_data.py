"""The bundled pairs (exact copies of LLMBar's files, with their licences, in the package's data) and the files
of the same shape `--data` takes: read as untrusted input, every problem named."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import sys
from importlib import resources
from pathlib import Path

import pytest

from pytest_llmjudge.qualification.pairs import (
    BUNDLED,
    QualificationError,
    bundled_subsets,
    load_pairs,
    quick,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = resources.files("pytest_llmjudge.qualification").joinpath("data")

# The git blob hashes of the upstream files at LLMBar's commit 900616bff90b6c6c8e1681f7d079250637c55992
# (git ls-tree -r 900616bf in github.com/princeton-nlp/LLMBar).
UPSTREAM = {
    "LLMBar/Adversarial/GPTInst/dataset.json": "d5bed053596e492cc82efec7ca4dcb51da8d9178",
    "LLMBar/Adversarial/GPTOut/dataset.json": "73036e5cce7098195def4b1b55a43a2f14178e53",
    "LLMBar/Adversarial/Manual/dataset.json": "519fe616b1c0e1179beea86837bc6eff43cab979",
    "MT-Bench/dataset.json": "56d8b35a8f7522e4e0af9cdaf458e1fc3d3590ed",
    "LLMBar/LICENSE": "3bf435ec0493e58e4c7d2da5f0303a72f6dd00e6",
}


def git_blob_hash(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_the_bundled_files_are_llmbars_unchanged(name):
    assert git_blob_hash(DATA.joinpath(name).read_bytes()) == UPSTREAM[name]


def test_the_licences_sit_beside_the_data():
    mit = DATA.joinpath("LLMBar/LICENSE").read_text(encoding="utf-8")
    assert mit.startswith("MIT License\n\nCopyright (c) 2023 Princeton Natural Language Processing\n")
    notice = DATA.joinpath("MT-Bench/NOTICE").read_text(encoding="utf-8")
    for needed in ("CC BY 4.0", "https://creativecommons.org/licenses/by/4.0/", "lmsys/mt_bench_human_judgments"):
        assert needed in notice
    assert "Changes" in notice, "CC BY asks that changes be indicated"


def test_the_wheel_takes_every_data_file():
    """Every file under data/ is matched by the package-data patterns the wheel is built from."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    patterns = re.findall(r'"(qualification/data/[^"]+)"', pyproject.split("[tool.setuptools.package-data]")[1])
    package = ROOT / "src" / "pytest_llmjudge"
    files = [p.relative_to(package).as_posix() for p in (package / "qualification" / "data").rglob("*") if p.is_file()]
    assert len(files) == 7  # four sets, two licence notices, the README
    for file in files:
        assert any(fnmatch.fnmatch(file, pattern) for pattern in patterns), file


def test_the_bundled_subsets():
    subsets = bundled_subsets()
    assert [(s.name, len(s.pairs)) for s in subsets] == [
        ("GPTInst", 92),
        ("GPTOut", 47),
        ("Manual", 46),
        ("MT-Bench", 200),
    ]
    assert all(s.bundled for s in subsets) and [s.name for s in subsets] == [name for name, _, _ in BUNDLED]
    gptinst = subsets[0]
    # LLMBar's point: in most adversarial pairs the worse output is the longer.
    assert sum(p.better_is == "shorter" for p in gptinst.pairs) == 80


def test_quick_takes_ten_pairs_spread_over_each_subset():
    picked = {s.name: [p.index for p in quick(s).pairs] for s in bundled_subsets()}
    assert picked["GPTInst"] == list(range(0, 90, 9))
    assert picked["GPTOut"] == picked["Manual"] == list(range(0, 40, 4))
    assert picked["MT-Bench"] == list(range(0, 200, 20))


def write(tmp_path: Path, content: object, name: str = "natural.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


GOOD = {"input": "Say hi.", "output_1": "Hi!", "output_2": "Goodbye.", "label": 1}


def test_a_file_of_the_same_shape_is_a_subset_named_after_it(tmp_path):
    subset = load_pairs(write(tmp_path, [GOOD, {**GOOD, "label": 2}]))
    assert subset.name == "natural" and not subset.bundled and subset.source.endswith("natural.json")
    assert [p.label for p in subset.pairs] == [1, 2]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"input": "x"}, "expected a JSON list of pairs, got dict"),
        ([], "no pairs"),
        ([GOOD, "x"], "pair 1: a pair is a JSON object, not str"),
        ([{**GOOD, "label": 3}], "pair 0: 'label' must be 1 or 2 (the better output), got 3"),
        ([{**GOOD, "label": True}], "'label' must be 1 or 2"),
        ([{**GOOD, "label": "1"}], "'label' must be 1 or 2"),
        ([{k: v for k, v in GOOD.items() if k != "output_2"}], "pair 0: missing field 'output_2'"),
        ([{**GOOD, "input": None}], "pair 0: 'input' must be a string"),
        ([{**GOOD, "id": 7}], "pair 0: unknown field(s) 'id' (a pair has input, output_1, output_2, label)"),
        ("[" * 100000, "nested too deeply"),
        ('[{"input": NaN}]', "not valid JSON"),
    ],
)
def test_a_bad_pairs_file_is_an_error_naming_the_file_and_the_pair(tmp_path, content, message):
    path = write(tmp_path, content)
    with pytest.raises(QualificationError) as info:
        load_pairs(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_every_bad_pair_is_named_at_once(tmp_path):
    with pytest.raises(QualificationError) as info:
        load_pairs(write(tmp_path, [{**GOOD, "label": 0}] * 30))
    assert info.value.problems[0].endswith("pair 0: 'label' must be 1 or 2 (the better output), got 0")
    assert len(info.value.problems) == 30 and "... and 10 more" in str(info.value)


def test_a_pairs_file_is_a_regular_file_of_bounded_size(tmp_path, monkeypatch):
    with pytest.raises(QualificationError, match="refused to read the pairs file: not a regular file"):
        load_pairs(tmp_path)
    if sys.platform != "win32":
        fifo = tmp_path / "pipe.json"
        os.mkfifo(fifo)
        with pytest.raises(QualificationError, match="a FIFO"):
            load_pairs(fifo)
    with pytest.raises(QualificationError, match="cannot read the pairs file"):
        load_pairs(tmp_path / "missing.json")
    (tmp_path / "latin.json").write_bytes(b'[{"input": "caf\xe9"}]')
    with pytest.raises(QualificationError, match="not UTF-8 text"):
        load_pairs(tmp_path / "latin.json")
    monkeypatch.setattr("pytest_llmjudge.qualification.pairs.MAX_FILE_BYTES", 10)
    with pytest.raises(QualificationError, match="over the limit of 10"):
        load_pairs(write(tmp_path, [GOOD]))


def test_a_file_may_not_take_a_bundled_subsets_name(tmp_path):
    with pytest.raises(QualificationError, match="a subset named 'MT-Bench' is already qualified on"):
        load_pairs(write(tmp_path, [GOOD], "MT-Bench.json"), ["GPTInst", "MT-Bench"])
