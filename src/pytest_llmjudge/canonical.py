"""One canonical form for whatever is keyed or shown: the same value gives the same JSON in every process.

Outputs, chat messages, tool arguments and tool results become plain JSON data here before any text is
made of them: sets are sorted (by their items' JSON), tuples are lists, a mapping's keys are strings as
JSON writes them, and any other object is its `str()`.  What has no stable text is refused with a
`JudgeError` that names where it sits: a value shown by its memory address (different in every run), a
cycle (no JSON can hold one), two keys JSON writes alike (`True` and `"true"`: one would silently
replace the other) and an integer too long for Python to write (`10**5000`).  Dicts keep their
insertion order: sorting them here would change the key of every stored verdict of a dict output (tool
calls sort their own, as they always have).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from .errors import JudgeError

__all__ = ["dumps", "plain", "stable_str"]

# `<foo.Bar object at 0x7f3a...>`: a default repr names a memory address, different every run.
_ADDRESS = re.compile(r"<[^\n]*? at 0x[0-9a-fA-F]{4,}>")
_SCALARS = (str, int, float, type(None))  # bool is an int
_NAMED_KEYS = {True: "true", False: "false", None: "null"}  # as JSON writes these keys
# Integers longer than this may pass Python's limit on writing them as text (4,300 digits by default):
# only those are tried (14,000 bits is about 4,200 digits).
_LONG_BITS = 14_000


def plain(value: Any, where: str) -> Any:
    """`value` as plain JSON data (dicts, lists, strings, numbers, booleans, None), the same in every run.

    `where` names the value in an error (`output[2].tool_calls[0].arguments`)."""
    if isinstance(value, _SCALARS):
        return _written(value, where)
    try:
        return _plain(value, where, set())
    except RecursionError:
        raise JudgeError(f"{where} nests too deeply to be shown as JSON") from None


def dumps(value: Any, where: str, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """The JSON text of `value`'s canonical form (see `plain`); non-ASCII characters kept as they are."""
    return json.dumps(plain(value, where), indent=indent, sort_keys=sort_keys, ensure_ascii=False)


def stable_str(value: object, where: str) -> str:
    """`str(value)`, refused where it shows a memory address (its key could never be replayed)."""
    text = str(_written(value, where))
    found = _ADDRESS.search(text)
    if found:
        raise JudgeError(
            f"{where} holds a {type(value).__name__} shown by its memory address ({found[0]!r}),"
            " which differs in every run, so its verdict could never be replayed: pass its text, or give the"
            " class a __str__ that shows its content"
        )
    return text


def _written(value: Any, where: str) -> Any:
    """`value`, refused where it is an integer too long for Python to turn into text (JSON or str())."""
    if isinstance(value, int) and value.bit_length() > _LONG_BITS:
        try:
            str(value)
        except ValueError:
            limit = sys.get_int_max_str_digits()
            raise JudgeError(
                f"{where} is an integer of more than {limit} digits, which Python will not write as text "
                "(sys.set_int_max_str_digits), so it cannot be judged or matched: pass it as a string"
            ) from None
    return value


def _plain(value: Any, where: str, active: set[int]) -> Any:
    if isinstance(value, _SCALARS):
        return _written(value, where)
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
            return _plain_dict(value, where, active)
        if isinstance(value, (list, tuple)):
            return [_plain(v, f"{where}[{i}]", active) for i, v in enumerate(value)]
        items = [_plain(v, f"{where}{{...}}", active) for v in value]  # a set's items have no index
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    finally:
        active.discard(id(value))


def _plain_dict(value: dict[Any, Any], where: str, active: set[int]) -> dict[str, Any]:
    """A mapping with its keys as JSON writes them; two keys written alike (`True`, `"true"`) are refused."""
    plain = {_key(k, where): _plain(v, f"{where}[{k!r}]", active) for k, v in value.items()}
    if len(plain) < len(value):
        seen: dict[str, Any] = {}
        for k in value:
            first = seen.setdefault(_key(k, where), k)
            if first is not k:
                raise JudgeError(
                    f"{where} has the keys {first!r} and {k!r}, which JSON writes alike ({_key(k, where)!r}): "
                    "one would silently replace the other, so it cannot be judged or matched; give them "
                    "different names"
                )
    return plain


def _key(key: Any, where: str) -> str:
    """A mapping key as JSON writes it (str, int, float, bool and None; anything else has no JSON key)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return _NAMED_KEYS[key]
    if isinstance(key, (int, float)):
        return json.dumps(_written(key, f"{where}'s key"))
    raise JudgeError(f"{where} has a key of type {type(key).__name__} ({key!r:.40}): JSON keys are strings")
