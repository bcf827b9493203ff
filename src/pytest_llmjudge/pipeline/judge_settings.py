"""How a stored entry holds each judge setting: the readers an option row's `stored` names.

A row of the option table that says who judges and how (`keyed="judge"`) declares where a verdict
file entry keeps its value: `stored=(reader, field, ...)`.  From that one declaration,
`pipeline.recorded` reads back the value a verdict was recorded with (a run that leaves the setting
unset adopts it), and `pipeline.replay_miss` compares a stored entry with the one a miss wanted,
naming the setting by its row's `missed` words and its flag.  A setting held in a way no reader here
reads adds its reader; any other new judge setting touches nothing in this module.

Loaded on a replay miss, or where a run does not set what a recording used: never on a plain replay.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..options import OPTIONS, Option

if TYPE_CHECKING:
    from ..settings import Settings

Entry = Mapping[str, Any]


class Reader(NamedTuple):
    """One way an entry holds a setting (`field` is the row's first argument; `more` the rest)."""

    read: Callable[[Entry, str, tuple[Any, ...]], Any]  # the value as recorded (None: unset)
    alike: Callable[[Any, Any, tuple[Any, ...]], bool]  # a run's value keys as the recorded one does
    differs: Callable[[Any, Any], str | None]  # a miss: None where the same, else "" or what differs within
    in_params: bool = False  # held among the parameters the call asked for (an entry may predate them)


def _params(entry: Entry) -> Mapping[str, Any]:
    params = entry.get("params")
    return params if isinstance(params, Mapping) else {}


def _equal(a: Any, b: Any, more: tuple[Any, ...] = ()) -> bool:
    same: bool = a == b
    return same


def _differ(a: Any, b: Any) -> str | None:
    return None if a == b else ""


def _names(old: Any, new: Any) -> str | None:
    """The names of an object's members that differ ("seed,top_p"), or None where none does."""
    old, new = dict(old or {}), dict(new or {})
    if old == new:
        return None
    return ",".join(sorted(n for n in {*old, *new} if old.get(n, _ABSENT) != new.get(n, _ABSENT)))


_ABSENT = object()

READERS: dict[str, Reader] = {
    # The entry's own field; absent: unset.
    "field": Reader(lambda entry, field, more: entry.get(field), _equal, _differ),
    # The entry's own field, true or absent.
    "flag": Reader(lambda entry, field, more: bool(entry.get(field)), lambda a, b, more: bool(a) == bool(b), _differ),
    # The entry's own field, an object of named values (absent or empty: unset); a miss names the members.
    "object": Reader(
        lambda entry, field, more: entry.get(field) or None, lambda a, b, more: dict(a or {}) == dict(b or {}), _names
    ),
    # A parameter the call asked for, in the entry's `params`.
    "param": Reader(lambda entry, field, more: _params(entry).get(field), _equal, _differ, in_params=True),
    # Whether the call asked for a parameter at all: `more[0]` where it did, `more[1]` where not.  Every
    # value but `more[1]` asks, so they key alike.
    "asks": Reader(
        lambda entry, field, more: more[0] if field in _params(entry) else more[1],
        lambda a, b, more: (a == more[1]) == (b == more[1]),
        _differ,
        in_params=True,
    ),
}

# Every judge setting besides the model, in the table's order: what a recording's judge side holds.
JUDGE_SETTINGS: tuple[Option, ...] = tuple(o for o in OPTIONS if o.keyed == "judge" and o.name != "model")


def _reader(option: Option) -> tuple[Reader, str, tuple[Any, ...]]:
    if option.stored is None:
        raise LookupError(f"option {option.name!r} is a judge setting without `stored`: say where an entry holds it")
    kind, field, *more = option.stored
    return READERS[kind], field, tuple(more)


def recorded(option: Option, entry: Entry) -> Any:
    """The value of `option` an entry was recorded with (None: unset)."""
    reader, field, more = _reader(option)
    return reader.read(entry, field, more)


def alike(option: Option, current: Any, recorded_value: Any) -> bool:
    """Whether a run's value of `option` keys as the recorded one does."""
    reader, _, more = _reader(option)
    return reader.alike(current, recorded_value, more)


def current(settings: Settings, option: Option) -> Any:
    """The value of `option` a judgment under `settings` asks for (the temperature as its samples make it)."""
    return settings.judge_temperature() if option.name == "temperature" else getattr(settings, option.name)


def differs(option: Option, stored: Entry, wanted: Entry) -> str | None:
    """A replay miss's name for `option` where the two entries hold it differently (`name` or `name:what`),
    else None.  An entry that asked for no parameters at all (an old one) says nothing of those it holds there."""
    reader, field, more = _reader(option)
    if reader.in_params and not ("params" in stored and "params" in wanted):
        return None
    what = reader.differs(reader.read(stored, field, more), reader.read(wanted, field, more))
    if what is None:
        return None
    return option.name + (f":{what}" if what else "")


def in_params(option: Option) -> str | None:
    """The parameter of a call's `params` that holds `option`, where one does."""
    reader, field, _ = _reader(option)
    return field if reader.in_params else None


def described(option: Option, what: str) -> str:
    """How a miss names the setting: its row's words, what differs within it, its flag."""
    return f"{option.missed or option.name}{f' {what}' if what else ''} ({option.cli})"
