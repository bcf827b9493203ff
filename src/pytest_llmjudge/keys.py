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

__all__ = ["KEY_VERSION", "canonical_json", "judgment_key", "messages_sha256"]

KEY_VERSION = 2

# One encoder for every key: `json.dumps` with these arguments builds a new one per call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
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
    """JSON with sorted keys and no insignificant white space: equal values, equal text."""
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
