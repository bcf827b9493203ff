"""Identity vs record: who judged a stored verdict, and how, where the run does not say.

A verdict is found by what the test decides (the case, the criteria, the rubric and its options) and
by who judged and how: the judge's model and the call settings the option table marks
`keyed="judge"` (temperature, token cap, reasoning effort, further parameters, structured output,
where the instructions go), each read from a stored entry as its row says (see `judge_settings`).
Where a run leaves one of those unset (a clone's plain `pytest`, CI), the value a verdict was
recorded with is a recorded fact, adopted as the model is, when exactly one recording matches the
judgment; a setting the run does set must match.  An earlier form of the
rubric (`Rubric.recorded_forms`) stands for it the same way.  Nothing here runs while a judgment's own
keys are stored: only a miss looks further.

`recorded_by` finds the model of recorded generations, where none is configured.  What keys a call
is the planner's: it is handed in, so this module knows the store and the settings, not the pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, TypeVar

from ..errors import JudgeError
from ..keys import canonical_json
from ..options import OPTIONS_BY_NAME
from .judge_settings import JUDGE_SETTINGS, alike, current, recorded

if TYPE_CHECKING:
    from ..rubrics.base import Rubric
    from ..settings import Settings
    from ..store.index import VerdictIndex
    from ..store.verdict_file import VerdictFile


class Side(NamedTuple):
    """Who judged a stored verdict and how: its model, and each judge setting's value as recorded."""

    model: str
    settings: tuple[tuple[str, Any], ...]


def side_of(entry: Mapping[str, Any]) -> Side | None:
    """The judge side an entry was recorded with; None for an entry that does not say (no parameters)."""
    model, params = entry.get("model"), entry.get("params")
    if not isinstance(model, str) or not isinstance(params, Mapping):
        return None
    values = []
    for option in JUDGE_SETTINGS:  # each read as its row says the entry holds it
        value = recorded(option, entry)
        if isinstance(value, (Mapping, list)):  # kept as its canonical JSON: a Side is hashable
            value = _Json(canonical_json(value))
        values.append((option.name, value))
    return Side(model, tuple(values))


class _Json(str):
    """A recorded value that is an object or a list, as its canonical JSON."""


def adopted(settings: Settings, side: Side) -> Settings:
    """`settings` with the judge settings it leaves unset taken from `side`.  One the run sets stays as set:
    where it differs from the recorded one, the keys say that this recording is not the judgment (a
    setting a rubric does not use, such as structured output for one with no reply schema, keys alike)."""
    changes: dict[str, Any] = {}
    for name, held in side.settings:
        option = OPTIONS_BY_NAME[name]
        value = json.loads(held) if isinstance(held, _Json) else held
        if not alike(option, current(settings, option), value) and not settings.configured(name):
            changes[name] = value
    if not changes:
        return settings
    return settings._replace(**changes, overridden=settings.overridden | changes.keys())


class Found(NamedTuple):
    """A recording that stands for a judgment: the settings and rubric form its calls were keyed with, and
    what keyed them (the planner's: its Setup and its calls)."""

    settings: Settings
    rubric: Rubric
    keyed: Any
    keys: frozenset[str]


def find_recorded(
    verdict_file: VerdictFile,
    index: Callable[[], VerdictIndex],
    settings: Settings,
    rubric: Rubric,
    keyed: Callable[[Settings, Side, Rubric], tuple[Any, Sequence[str]]],
    *,
    judges: set[str] | None,
) -> Found | None:
    """The one judge side and rubric form, among those recorded (the test's own file first, then the whole
    store: `index`), under which every step-one key of the judgment is stored; None where none is.

    `keyed(settings, side, form)` keys the judgment's step-one calls under those settings and that form:
    what keyed them (kept in the result) and their keys.  `judges`: the judge ids the run names (its
    models, or its backend's name), so that no other judge's recording stands for it; None where it names
    none.  Several: a JudgeError naming what tells them apart.
    """
    known: VerdictIndex | None = None

    def elsewhere() -> VerdictIndex:
        nonlocal known
        if known is None:
            known = index()
        return known

    def stored_elsewhere(key: str) -> bool:
        return elsewhere().find(key) is not None

    forms = (rubric, *rubric.recorded_forms())
    for sides in _sides(verdict_file, elsewhere):
        matches: dict[frozenset[str], Found] = {}
        for side in sides:
            if judges is not None and side.model not in judges:
                continue
            adopted_settings = adopted(settings, side)
            if judges is None:
                adopted_settings = adopted_settings._replace(model=(side.model,))
            for form in forms:
                if adopted_settings is settings and form is rubric:
                    continue  # the judgment as the run asks it: looked for before
                made, keys = keyed(adopted_settings, side, form)
                if keys and verdict_file.holds_all(keys, stored_elsewhere):
                    key_set = frozenset(keys)
                    matches.setdefault(key_set, Found(adopted_settings, form, made, key_set))
        if len(matches) > 1:
            raise several_recorded(list(matches.values()))
        if matches:
            (found,) = matches.values()
            return found
    return None


def _sides(verdict_file: VerdictFile, index: Callable[[], VerdictIndex]) -> Iterable[list[Side]]:
    """The judge sides to try: the test's own file's, then (none of them matching) the whole store's."""
    yield _distinct(side_of(entry) for entry in _recorded(verdict_file))
    yield _distinct(side_of(stored.entry) for stored in index().distinct("verdict", side_of))


def _recorded(verdict_file: VerdictFile) -> list[dict[str, Any]]:
    """A file's entries that say who judged: its verdicts, and the unreadable replies it keeps on record."""
    return [*verdict_file.entries().values(), *verdict_file.entries("unreadable").values()]


def _distinct(sides: Iterable[Side | None]) -> list[Side]:
    return list(dict.fromkeys(side for side in sides if side is not None))


def only_side(verdict_file: VerdictFile) -> Side | None:
    """The one judge side a test's verdicts were recorded with, or None (none, or several)."""
    sides = _distinct(side_of(entry) for entry in _recorded(verdict_file))
    return sides[0] if len(sides) == 1 else None


def several_recorded(matches: Sequence[Found]) -> JudgeError:
    """The error where several recordings stand for one judgment: each, by what tells them apart."""
    names = [
        name
        for name in ("model", *(option.name for option in JUDGE_SETTINGS))
        if len({_shown(getattr(m.settings, name), name) for m in matches}) > 1
    ]
    if not names:  # only the rubric's form differs
        names = ["rubric"]
    flags = ", ".join(OPTIONS_BY_NAME[n].cli for n in names if n in OPTIONS_BY_NAME) or "the rubric's own options"
    lines = [
        "  - "
        + ", ".join(f"{n} {_shown(getattr(m.settings, n, None), n)}" for n in names if n != "rubric")
        + (f"{m.rubric!r}" if "rubric" in names else "")
        for m in matches
    ]
    first = names[0]
    option = OPTIONS_BY_NAME.get(first)
    how = f"pass {option.cli}=... (or {option.ini} in the ini file)" if option is not None else "pass the rubric"
    return JudgeError(
        f"this judgment was recorded by several judges, or with several judge settings, and the run sets none "
        f"of what tells them apart ({flags}):\n" + "\n".join(lines) + f"\n  pick one: {how}"
    )


def _shown(value: Any, name: str) -> str:
    if name == "model" and isinstance(value, tuple):
        value = ",".join(value)
    return "unset" if value is None else str(value)


# -- the whole store, and generations by model ------------------------------------------------------


class Keyed(Protocol):
    """A call named by its key (a judge call, a generation)."""

    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def recorded_by(
    verdict_file: VerdictFile | None,
    what: Literal["verdict", "generation"],
    calls_for: Callable[[str], Sequence[K]],
    *,
    index: Callable[[], VerdictIndex] | None,
    several: str,
) -> tuple[str, Sequence[K]] | None:
    """Replay with no model configured: the model under which `calls_for(model)` has a stored key
    (a verdict's, or a generation's), from the test's own file, else the rest of the store (`index`;
    None: outside a test, nothing else is looked at), with the calls keyed for it; None where no model
    has.  `several` is the error when more than one has (see `recorded_model`)."""
    own = verdict_file.entries(what) if verdict_file is not None else {}
    found = recorded_model(own, calls_for, several=several)
    if found is None and index is not None:  # recorded elsewhere (a session fixture, a renamed test)?
        store = index()
        firsts = {s.key: s.entry for s in store.by_model(what).values()}
        found = recorded_model(firsts, calls_for, lambda key: store.find(key, what) is not None, several=several)
    return found


def recorded_model(
    entries: Mapping[str, Mapping[str, Any]],
    calls_for: Callable[[str], Sequence[K]],
    has: Callable[[str], bool] | None = None,
    *,
    several: str,
) -> tuple[str, Sequence[K]] | None:
    """The model under which `calls_for(model)` has a stored key, of the models named in `entries`, and
    those calls.

    `has` says whether a key is stored (default: it is one of `entries`).  One model matches: that
    model.  None: None (the replay misses as usual).  Several: a JudgeError, `several` with the models
    in place of `{models}` (it names the option that picks one).
    """
    matching: list[tuple[str, Sequence[K]]] = []
    for model in dict.fromkeys(str(e.get("model")) for e in entries.values() if isinstance(e.get("model"), str)):
        calls = calls_for(model)
        keys = {call.key for call in calls}
        if any(has(k) for k in keys) if has is not None else not keys.isdisjoint(entries):
            matching.append((model, calls))
    if len(matching) > 1:
        raise JudgeError(several.format(models=", ".join(sorted(model for model, _ in matching))))
    return matching[0] if matching else None
