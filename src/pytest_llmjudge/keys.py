"""Judgment keys: canonical JSON, and the sha256 that names a judgment.

A key hashes what changes a verdict (who judges, the messages, the sampling parameters, the sample
index, the rubric) and nothing that only changes how the call travels or what the test does with the
verdict: never the api base, a proxy, API keys, timeouts, retries or the threshold.

KEY_VERSION 2 took the api base out of the key (a judge is named by its model, or a custom
backend's name): every key changed once, so verdicts recorded before must be recorded again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KEY_VERSION", "KeyTemplate", "canonical_json", "judgment_key", "messages_sha256"]

KEY_VERSION = 2


def _plain(value: object) -> object:
    # A mapping that is not a dict (a rubric's read-only messages) is keyed as the dict it holds.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# One encoder for every key: `json.dumps` with these arguments builds a new one per call.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_plain
)
# The same encoder's C core, called without the circular-reference check (what is keyed is plain data
# built here, never cyclic): `encode` spends half its time on that check and its Python wrapper, and
# every judgment encodes its key.  Where the C core is missing, `encode` itself.
_MAKE_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODER: Any = (
    _MAKE_C_ENCODER(None, _CANONICAL.default, json.encoder.encode_basestring, None, ":", ",", True, False, False)
    if _MAKE_C_ENCODER is not None
    else None
)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant white space: equal values, equal text.

    A mapping that is not a dict is written as the dict it holds."""
    if _C_ENCODER is None or isinstance(value, str):
        return _CANONICAL.encode(value)
    return "".join(_C_ENCODER(value, 0))


def _sha256(text: str) -> str:
    # surrogatepass: an output may hold lone surrogates, and its key must still be computable.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def judgment_key(request: Mapping[str, Any]) -> str:
    """The sha256 hex of everything that changes a verdict (never keys, timeouts or thresholds)."""
    return _sha256(canonical_json({"key_version": KEY_VERSION, **request}))


def messages_sha256(messages: Sequence[Mapping[str, Any]]) -> str:
    """The sha256 hex of the rendered judge messages, as stored beside each verdict."""
    return _sha256(canonical_json(list(messages)))


# Where the messages go while the rest of a key's JSON is written once (see KeyTemplate).
_SLOT = "\x00llmjudge:messages\x00"


class KeyTemplate:
    """The keys of calls that differ only in their messages: the rest of the key is encoded and hashed once.

    A key's JSON has sorted keys, so the messages' value sits between a fixed head and tail; each
    key hashes the head, the messages' JSON and the tail: the same bytes `judgment_key` hashes.
    A suite judges many outputs with one judge, rubric and settings; a key made so takes about half the time.
    """

    __slots__ = ("_head", "_request", "_tail")

    def __init__(self, request: Mapping[str, Any]) -> None:
        """`request`: every field `judgment_key` would get, except the messages."""
        self._request = dict(request)
        text = canonical_json({"key_version": KEY_VERSION, **request, "messages": _SLOT})
        head, slot, tail = text.partition(canonical_json(_SLOT))
        self._head: Any = None  # hashlib's sha256 of the head, copied for each key
        self._tail = b""
        if head.endswith('"messages":') and slot not in tail:  # else (a value holds the slot's text): keys in full
            self._head = hashlib.sha256(head.encode("utf-8", "surrogatepass"))
            self._tail = tail.encode("utf-8", "surrogatepass")

    def keyed(self, messages: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
        """`judgment_key` of the template's fields with these messages, and the messages' `messages_sha256`
        (a replay checks each stored entry against it), from one encoding of the messages."""
        if self._head is None:
            return judgment_key({**self._request, "messages": list(messages)}), messages_sha256(messages)
        encoded = canonical_json(messages).encode("utf-8", "surrogatepass")
        digest = self._head.copy()
        digest.update(encoded)
        digest.update(self._tail)
        return digest.hexdigest(), hashlib.sha256(encoded).hexdigest()
