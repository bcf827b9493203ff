"""Generating assessment questions with the judge model, recorded and replayed like any judge call.

The call's key (`judgment_key` over the model, the messages and the sampling parameters) is stored in
the questions file beside the model's raw reply and the questions it dropped.  The modes are those of a
pytest run: auto reuses a file whose key matches, replay never calls (a miss is a `ReplayMiss` naming
what differs), refresh and live call again.  On a match the file is left as it is, so a reviewer's
edits to its questions stand.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends.litellm import LiteLLMBackend
from ..backends.loop import LoopThread
from ..backends.protocol import CallRequest
from ..backends.retry import call_with_retries
from ..errors import JudgeError, Redacted, ReplayMiss
from ..keys import judgment_key
from ..redact import redact
from ..rubrics.questions_file import dump_questions_file, read_questions_file
from ..settings import OPTIONS_BY_NAME, SettingError, Settings
from .forms import KINDS, Dropped, select_questions
from .prompt import question_messages, read_questions

MAX_QUESTIONS = 100


class QuestionsWarning(Redacted, UserWarning):
    """Some of the questions the model wrote were malformed or repeated, and were dropped."""


@dataclass(frozen=True)
class QuestionSet:
    """What a generation gave: the questions kept, those dropped (and why), and where they came from."""

    questions: list[str]
    dropped: list[Dropped]
    kind: str
    model: str
    key: str
    reply: str
    source: str  # "live", or "recorded" (read back from the questions file, no call made)
    path: Path | None = None
    asked: int = 0
    notes: list[str] = field(default_factory=list)  # what the command should tell the user


def _spec_text(spec: str | os.PathLike[str]) -> str:
    if isinstance(spec, os.PathLike):
        path = Path(spec)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise JudgeError(f"{path}: no such specification file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise JudgeError(f"{path}: cannot read the specification ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(spec, str):
        raise JudgeError(f"spec must be the specification's text or a path to it, got {type(spec).__name__}")
    return spec


def _check_arguments(spec: str, n: Any, focus: Any, kind: Any) -> None:
    if kind not in KINDS:
        raise JudgeError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_QUESTIONS:
        raise JudgeError(f"n must be a whole number from 1 to {MAX_QUESTIONS}, got {n!r}")
    if focus is not None and (not isinstance(focus, str) or not focus.strip()):
        raise JudgeError(f"focus must be a non-empty string or None, got {focus!r}")
    if not spec.strip():
        raise JudgeError("the specification is empty: there is nothing to write questions about")


def _settings(judge_options: Mapping[str, Any]) -> Settings:
    """The run's settings inside pytest; elsewhere those a pytest run here would use (ini, environment, CI)."""
    from ..runtime import active
    from ..standalone import load_settings

    unknown = sorted(set(judge_options) - set(OPTIONS_BY_NAME))
    if unknown:
        raise JudgeError(f"unknown judge option(s): {', '.join(unknown)}; known: {', '.join(OPTIONS_BY_NAME)}")
    runtime = active()
    try:
        if runtime is not None and runtime.settings_resolved:
            return runtime.settings.with_marker(judge_options, where="generate_questions")
        return load_settings(judge_options).settings
    except SettingError as exc:
        raise JudgeError(str(exc)) from None


def _model(settings: Settings) -> str:
    models = settings.model or ()
    if len(models) != 1:
        raise JudgeError(
            "no judge model configured: pass --judge-model=MODEL (or set judge_model in the ini file, "
            "or LLMJUDGE_MODEL)"
            if not models
            else f"questions are written by one judge model, and {len(models)} are configured "
            f"({', '.join(models)}): pick one with --judge-model=MODEL"
        )
    return models[0]


def _differences(stored: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    names = ("model", "kind", "n", "focus", "spec_sha256", "temperature")
    changed = [name for name in names if stored.get(name) != current.get(name)]
    shown = {"spec_sha256": "the specification"}
    return ", ".join(shown.get(name, name) for name in changed) or "the prompt (a newer version of this tool?)"


def _call(settings: Settings, model: str, messages: list[dict[str, str]]) -> str:
    request = CallRequest(model=model, messages=messages, api_base=settings.api_base, temperature=settings.temperature)
    loop = LoopThread(name="llmjudge-questions")
    try:
        result = loop.run(
            call_with_retries(LiteLLMBackend(), request, retries=settings.retries, timeout=settings.timeout)
        )
    finally:
        loop.stop()
    if result.finish_reason == "length":
        raise JudgeError("the model's reply was cut off at max_tokens (finish_reason=length); nothing was written")
    return result.text


def generate_question_set(
    spec: str | os.PathLike[str],
    n: int = 10,
    focus: str | None = None,
    kind: str = "binary",
    *,
    out: str | os.PathLike[str] | None = None,
    settings: Settings | None = None,
    **judge_options: Any,
) -> QuestionSet:
    """Generate (or read back) `n` questions of `kind` about `spec`; see `generate_questions`.

    `settings` given (the CLI's): used as they are; else resolved as `generate_questions` says.
    """
    text = _spec_text(spec)
    _check_arguments(text, n, focus, kind)
    settings = settings if settings is not None else _settings(judge_options)
    model = _model(settings)
    focus = focus.strip() if focus else None
    messages = question_messages(text, n, focus, kind)
    key = judgment_key({"model": model, "messages": messages, "params": {"temperature": settings.temperature}})
    about = {
        "model": model,
        "kind": kind,
        "n": n,
        "focus": focus,
        "temperature": settings.temperature,
        "spec_sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    }
    path = Path(out) if out is not None else None
    recorded = read_questions_file(path) if path is not None and path.exists() else None
    stored = dict(recorded.generation or {}) if recorded is not None else {}
    notes: list[str] = []
    if settings.mode in ("auto", "replay") and recorded is not None and stored.get("key") == key:
        dropped = [
            Dropped(str(d.get("question", "")), str(d.get("reason", "")))
            for d in stored.get("dropped") or []
            if isinstance(d, Mapping)
        ]
        reply = str(stored.get("reply", ""))
        return QuestionSet(recorded.questions, dropped, kind, model, key, reply, "recorded", path, n, notes)
    if settings.mode == "replay":
        where = f"in {path}" if path is not None else "(no questions file given to replay from: pass out=FILE)"
        if recorded is not None:
            what = (
                f"it holds key {str(stored.get('key', ''))[:12] or '(none)'}; differs in: {_differences(stored, about)}"
            )
        else:
            what = "the file does not exist" if path is not None else ""
        raise ReplayMiss(
            f"replay mode ({settings.mode_reason}): no recorded generation of these questions {where} "
            f"(key {key[:12]}{'; ' + what if what else ''}). Record it where the judge is reachable, with "
            "--judge-mode=auto (or refresh), and commit the file",
            key,
        )
    if recorded is not None and stored.get("key") != key and settings.mode == "auto":
        notes.append(f"{path}: the spec or options changed since it was written ({_differences(stored, about)})")
    reply = redact(_call(settings, model, messages))
    items = read_questions(reply)
    if items is None:
        raise JudgeError(
            f"the model's reply holds no JSON list of questions ({len(reply)} characters, key {key[:12]}); "
            "nothing was written. Try again with --judge-mode=refresh, or another --judge-model"
        )
    questions, dropped = select_questions(items, kind, n)
    if not questions:
        reasons = "; ".join(sorted({d.reason for d in dropped})) or "the list was empty"
        raise JudgeError(
            f"none of the {len(items)} questions the model wrote passed the check ({reasons}); nothing was written"
        )
    if path is not None:
        generation = {**about, "key": key, "reply": reply, "dropped": [d.to_json() for d in dropped]}
        try:
            dump_questions_file(path, kind, questions, generation)
        except OSError as exc:
            raise JudgeError(f"{path}: cannot write the questions file ({exc.__class__.__name__}: {exc})") from None
    return QuestionSet(questions, dropped, kind, model, key, reply, "live", path, n, notes)


def generate_questions(
    spec: str | os.PathLike[str],
    n: int = 10,
    focus: str | None = None,
    kind: str = "binary",
    *,
    out: str | os.PathLike[str] | None = None,
    **judge_options: Any,
) -> list[str]:
    """Have the judge model write `n` single-focus assessment questions about `spec` (its text, or a Path).

    `kind`: "binary" ("...? (Pass = ..., Fail = ...)"), "scaled" ("...? (1 = ..., 5 = ...)") or
    "multiple-choice" ("...? (A = ..., B = ...; Pass = A)").  Malformed and repeated questions are dropped,
    with a `QuestionsWarning` saying how many (when the model wrote them, not when read back).  With
    `out=FILE` the generation is recorded there and read back on the next call (no call made), as
    `llmjudge questions` does; `Questions.from_file(FILE)` loads it.
    The judge settings are the pytest run's (inside one), else those a run here would use (options, ini
    file, environment, CI detection); `judge_options` (model=, api_base=, mode=, ...) override them.
    """
    result = generate_question_set(spec, n, focus, kind, out=out, **judge_options)
    if result.dropped and result.source == "live":  # news once: a record keeps them for review
        warnings.warn(
            QuestionsWarning(
                f"{len(result.dropped)} of the questions the model wrote were dropped: "
                + "; ".join(f"{d.reason}: {d.question[:80]!r}" for d in result.dropped[:5])
            ),
            stacklevel=2,
        )
    return result.questions
