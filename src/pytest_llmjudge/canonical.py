"""One canonical form for whatever is keyed or shown: the same value gives the same JSON in every process.

Outputs, chat messages, tool arguments and tool results become plain JSON data here before any text is
made of them: sets are sorted (by their items' JSON), tuples are lists, a mapping's keys are strings as
JSON writes them, and any other object is its `str()`.  What has no stable text is refused with a
`JudgeError` that names where it sits: a value shown by its memory address (different in every run) and
a cycle (no JSON can hold one).  Dicts keep their insertion order: sorting them here would change the
key of every stored verdict of a dict output (tool calls sort their own, as they always have).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import JudgeError

__all__ = ["dumps", "plain", "stable_str"]

# `<foo.Bar object at 0x7f3a...>`: a default repr names a memory address, different every run.
_ADDRESS = re.compile(r"<[^\n]*? at 0x[0-9a-fA-F]{4,}>")
_SCALARS = (str, int, float, type(None))  # bool is an int
_NAMED_KEYS = {True: "true", False: "false", None: "null"}  # as JSON writes these keys


def plain(value: Any, where: str) -> Any:
    """`value` as plain JSON data (dicts, lists, strings, numbers, booleans, None), the same in every run.

    `where` names the value in an error (`output[2].tool_calls[0].arguments`)."""
    if isinstance(value, _SCALARS):
        return value
    try:
        return _plain(value, where, set())
    except RecursionError:
        raise JudgeError(f"{where} nests too deeply to be shown as JSON") from None


def dumps(value: Any, where: str, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """The JSON text of `value`'s canonical form (see `plain`); non-ASCII characters kept as they are."""
    return json.dumps(plain(value, where), indent=indent, sort_keys=sort_keys, ensure_ascii=False)


def stable_str(value: object, where: str) -> str:
    """`str(value)`, refused where it shows a memory address (its key could never be replayed)."""
    text = str(value)
    found = _ADDRESS.search(text)
    if found:
        raise JudgeError(
            f"{where} holds a {type(value).__name__} shown by its memory address ({found[0]!r}),"
            " which differs in every run, so its verdict could never be replayed: pass its text, or give the"
            " class a __str__ that shows its content"
        )
    return text


def _plain(value: Any, where: str, active: set[int]) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if not isinstance(value, (dict, list, tuple, set, frozenset)):
        return stable_str(value, where)
    if id(value) in active:
        raise JudgeError(
            f"{where} contains itself (a cycle): no JSON can show it, so it cannot be judged or matched; "
            "pass a copy without the cycle"
        )
    active.add(id(value))
    try:
        if isinstance(value, dict):
            return {_key(k, where): _plain(v, f"{where}[{k!r}]", active) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [_plain(v, f"{where}[{i}]", active) for i, v in enumerate(value)]
        items = [_plain(v, f"{where}{{...}}", active) for v in value]  # a set's items have no index
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    finally:
        active.discard(id(value))


def _key(key: Any, where: str) -> str:
    """A mapping key as JSON writes it (str, int, float, bool and None; anything else has no JSON key)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return _NAMED_KEYS[key]
    if isinstance(key, (int, float)):
        return json.dumps(key)
    raise JudgeError(f"{where} has a key of type {type(key).__name__} ({key!r:.40}): JSON keys are strings")
