"""The reviewable questions file of the `Questions` rubric: the questions, and beside them the generation
that wrote them (`llmjudge questions`).

    {
      "format": 1,
      "kind": "binary",
      "questions": ["Does ...? (Pass = ..., Fail = ...)", ...],
      "generation": {"model": ..., "key": ..., "n": 10, "focus": ..., "spec_sha256": ...,
                     "reply": "<what the model wrote, verbatim>", "dropped": [{"question": ..., "reason": ...}]}
    }

JSON, or YAML (same content) when the file name ends in .yaml or .yml and PyYAML is installed.  A
stored file is untrusted input: it is parsed (`json`, `yaml.safe_load`), bounded in size, and checked
for shape; nothing in it is executed.  Every problem is a `RubricError` naming the file.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import first_line
from ..store.atomic import write_atomically
from .base import RubricError

FORMAT = 1
MAX_FILE_BYTES = 4 * 1024 * 1024  # far above any question list and reply: a larger file is not one


@dataclass(frozen=True)
class QuestionsFile:
    """A questions file as read: its questions, their kind (None: not said) and the recorded generation."""

    path: Path
    questions: list[str]
    kind: str | None = None
    generation: Mapping[str, Any] | None = None


def is_yaml(path: Path) -> bool:
    """Whether `path` names a YAML questions file (by its suffix)."""
    return path.suffix.lower() in (".yaml", ".yml")


def _yaml(path: Path, doing: str) -> Any:
    """PyYAML (untyped here), or a RubricError saying it is needed."""
    try:
        yaml: ModuleType = importlib.import_module("yaml")
    except ImportError:
        raise RubricError(
            f"{path}: {doing} a YAML questions file needs PyYAML (pip install pyyaml); or use a .json file"
        ) from None
    return yaml


def _parse(path: Path, text: str) -> Any:
    if is_yaml(path):
        yaml = _yaml(path, "reading")
        try:
            return yaml.safe_load(text)  # safe_load builds plain data only: no tags, no objects
        except (yaml.YAMLError, RecursionError) as exc:
            raise RubricError(f"{path}: not valid YAML ({first_line(exc)})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RubricError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise RubricError(f"{path}: not valid JSON ({type(exc).__name__})") from None


def read_questions_file(path: str | os.PathLike[str]) -> QuestionsFile:
    """Read and check a questions file: a JSON (or YAML) list of question strings, or an object with a
    "questions" list as `llmjudge questions` writes it.  RubricError, naming the file, when it is not one."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise RubricError(f"{path}: {size} bytes is too large for a questions file (at most {MAX_FILE_BYTES})")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RubricError(f"{path}: no such questions file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricError(f"{path}: cannot read the questions file ({exc.__class__.__name__}: {exc})") from None
    data = _parse(path, text)
    kind: Any = None
    generation: Any = None
    if isinstance(data, Mapping):
        if data.get("format", FORMAT) != FORMAT:
            raise RubricError(f"{path}: questions file format {data.get('format')!r} is not known (expected {FORMAT})")
        kind, generation, data = data.get("kind"), data.get("generation"), data.get("questions")
        if data is None:
            raise RubricError(f'{path}: the file has no "questions" list')
    if not isinstance(data, list):
        raise RubricError(f'{path}: expected a list of questions, or an object with a "questions" list')
    bad = next((i for i, q in enumerate(data, 1) if not isinstance(q, str) or not q.strip()), None)
    if bad is not None:
        raise RubricError(f"{path}: question {bad} is not a non-empty string: {data[bad - 1]!r:.80}")
    if not data:
        raise RubricError(f"{path}: the questions list is empty")
    return QuestionsFile(
        path,
        [q.strip() for q in data],
        kind if isinstance(kind, str) else None,
        generation if isinstance(generation, Mapping) else None,
    )


def dump_questions_file(path: Path, kind: str, questions: list[str], generation: Mapping[str, Any]) -> None:
    """Write the questions file (atomically), as JSON or, for a .yaml/.yml name, as YAML."""
    document = {"format": FORMAT, "kind": kind, "questions": questions, "generation": dict(generation)}
    if is_yaml(path):
        text = _yaml(path, "writing").safe_dump(document, sort_keys=False, allow_unicode=True, width=120)
    else:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, text)
