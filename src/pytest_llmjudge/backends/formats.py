"""Structured output, the sending side: which `response_format` a live call sends, and the fallback.

A call whose parameters ask for a JSON schema (`response_format`, see `structured`) sends, under
`--judge-structured=auto`: the schema where LiteLLM says the model supports response schemas; else,
at a server of your own (an api base), `{"type": "json_object", "schema": ...}`: JSON mode with the
schema beside it, which llama.cpp's servers turn into a grammar and other servers ignore; else
`{"type": "json_object"}` where LiteLLM maps `response_format` for the model at all; else nothing.
LiteLLM's answer is a hint (it says no for every local route): a server that refuses what was sent
(HTTP 400/422/500/501 naming response_format, json_schema or schema) is asked again at once with the
next format down (schema -> json_object+schema -> json_object -> none).  What works is remembered per
model and api base for the run (its event loop), and while the first call to a model learns it the
others wait for its answer, so a refusal costs one extra call per run (per xdist worker).  Under `on` only the
forms that carry the schema are sent, and a refusal of them all fails the call: the user asked for
structure, so nothing less is quietly accepted.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import BackendError
from ..keys import canonical_json
from ..redact import redact

if TYPE_CHECKING:
    import asyncio


# Most structured first: the fallback order.  "json_object+schema" is JSON mode with the schema beside it
# (llama-cpp-python's and llama.cpp's server read it; llama-cpp-python refuses "json_schema").
FORMATS = ("json_schema", "json_object+schema", "json_object", "none")
SCHEMA_FORMATS = FORMATS[:2]  # the forms that send the schema: all `on` accepts
REFUSAL_STATUS = frozenset({400, 422, 500, 501})
_REFUSAL_WORDS = re.compile(r"response_format|json_schema|json_object|\bschema\b|guided_json", re.IGNORECASE)

T = TypeVar("T")


# The schemas of this process's calls, by reference (see `register_schema`).
_SCHEMAS: dict[str, dict[str, Any]] = {}
_DIGESTS: dict[str, str] = {}  # canonical name and schema -> digest: a suite plans the same few schemas again and again


def register_schema(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The reference a call's parameters carry for a reply schema: its name and sha256, not the schema.

    The reference stands for the schema in every key (a changed schema is another digest) and in
    the verdict file (a few dozen bytes, not the whole schema beside each reply); the backend sends
    the schema it stands for, registered here by the plan of the same process.
    """
    text = canonical_json({"name": name, "schema": schema})
    digest = _DIGESTS.get(text)
    if digest is None:
        digest = _DIGESTS[text] = hashlib.sha256(text.encode()).hexdigest()[:16]
        named = json.loads(text)
        _SCHEMAS[digest] = {"type": "json_schema", "json_schema": {**named, "strict": True}}
    return {"type": "json_schema", "json_schema": {"name": name, "sha256": digest}}


def schema_format(reference: Any) -> dict[str, Any] | None:
    """The `response_format` (with the full schema) a call's reference stands for; None if unknown.

    A full json_schema `response_format` (one that holds its schema) stands for itself.
    """
    if not isinstance(reference, Mapping) or reference.get("type") != "json_schema":
        return None
    inner = reference.get("json_schema")
    if not isinstance(inner, Mapping):
        return None
    if "schema" in inner:
        return dict(reference)
    found = _SCHEMAS.get(str(inner.get("sha256")))
    return dict(found) if found is not None else None


def first_format(mode: str, litellm: Any, model: str, provider: str | None, api_base: str | None = None) -> str:
    """The format to try first: the schema under `on`; under `auto`, what LiteLLM says the model takes
    (JSON mode with the schema beside it at a server of your own, which may read it)."""
    if mode == "on":
        return "json_schema"
    try:
        if litellm.supports_response_schema(model=model, custom_llm_provider=provider):
            return "json_schema"
    except Exception:  # noqa: BLE001 - a hint only: an unknown model is asked for plain JSON
        pass
    try:
        takes = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or ()
    except Exception:  # noqa: BLE001 - LiteLLM cannot place the model: send no response_format
        takes = ()
    if "response_format" not in takes:
        return "none"
    return "json_object+schema" if api_base else "json_object"


def sent_value(fmt: str, schema_format: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `response_format` sent for `fmt` (None: the parameter is left out)."""
    if fmt == "json_schema":
        return dict(schema_format)
    if fmt == "json_object+schema":
        return {"type": "json_object", "schema": schema_format["json_schema"]["schema"]}
    if fmt == "json_object":
        return {"type": "json_object"}
    return None


def format_of(value: Any) -> str:
    """Which of `FORMATS` a `response_format` value is, as sent (`sent_value`) or as recorded (`recorded_value`)."""
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "json_object" and "schema" in value:
        return "json_object+schema"
    return kind if kind in ("json_schema", "json_object") else "none"


def ladder(mode: str, api_base: str | None) -> tuple[str, ...]:
    """The formats a call may go down, most structured first: under `on` only those that send the schema;
    the schema beside JSON mode only at a server of your own (a hosted API reads no such field)."""
    formats = SCHEMA_FORMATS if mode == "on" else FORMATS
    return formats if api_base else tuple(f for f in formats if f != "json_object+schema")


def recorded_value(fmt: str, sent: Mapping[str, Any], reference: Mapping[str, Any]) -> dict[str, Any]:
    """What the verdict file records of the `response_format` sent: a schema by its reference (name and
    sha256, as in the key), never the whole schema beside each reply."""
    if fmt == "json_schema":
        return dict(reference)
    if fmt == "json_object+schema":
        return {"type": "json_object", "schema": dict(reference["json_schema"])}
    return dict(sent)


def refuses_format(exc: BaseException) -> bool:
    """Whether a failed call is the server refusing the response_format sent (and not any other failure)."""
    status = getattr(exc, "status_code", None)
    refused_early = type(exc).__name__ == "UnsupportedParamsError"  # LiteLLM refuses before sending
    return (status in REFUSAL_STATUS or refused_early) and bool(_REFUSAL_WORDS.search(str(exc)))


class _Learned:
    """What one run learned: the format each (model, api base) took, and the call learning it now."""

    def __init__(self) -> None:
        self.works: dict[tuple[str, str | None], str] = {}
        self.learning: dict[tuple[str, str | None], asyncio.Future[None]] = {}


class FormatMemory:
    """What each (model, api base) accepted, for the run; one call at a time learns it.

    A run is its event loop (a pytest session's runtime has one, per xdist worker): a later run in the
    same process (pytester, a notebook, a server restarted at the same address) learns again.
    """

    def __init__(self) -> None:
        self._runs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Learned] = weakref.WeakKeyDictionary()

    async def send(
        self,
        key: tuple[str, str | None],
        mode: str,
        start: str,
        attempt: Callable[[str], Awaitable[T]],
    ) -> tuple[T, str]:
        """`attempt(format)`, down the `ladder` from `start` on each refusal; returns its result and the format."""
        import asyncio  # on a live call only: a replay never loads the event loop's modules

        loop = asyncio.get_running_loop()
        learned = self._runs.get(loop)
        if learned is None:  # only calls on this loop's thread read or set its entry: no lock
            learned = self._runs[loop] = _Learned()
        while True:
            known = learned.works.get(key)
            if known is not None:
                return await self._down(learned, key, mode, max(start, known, key=FORMATS.index), attempt)
            learning = learned.learning.get(key)
            if learning is not None and not learning.done():
                await asyncio.shield(learning)  # the first call to this server is finding out what it takes
                continue
            done: asyncio.Future[None] = loop.create_future()
            learned.learning[key] = done
            try:
                return await self._down(learned, key, mode, start, attempt)
            finally:
                done.set_result(None)
                if learned.learning.get(key) is done:
                    del learned.learning[key]

    @staticmethod
    async def _down(
        learned: _Learned,
        key: tuple[str, str | None],
        mode: str,
        start: str,
        attempt: Callable[[str], Awaitable[T]],
    ) -> tuple[T, str]:
        formats = ladder(mode, api_base=key[1])
        start = min(start, formats[-1], key=FORMATS.index)  # `on` never goes below a form with the schema
        tried = [f for f in formats if FORMATS.index(f) >= FORMATS.index(start)]
        for fmt in tried:
            try:
                result = await attempt(fmt)
            except Exception as exc:
                if fmt == "none" or not refuses_format(exc):
                    raise
                if fmt == tried[-1]:  # under `on`: no form of the schema is taken
                    raise _schema_refused(exc) from None
                continue
            learned.works[key] = fmt
            return result, fmt
        raise AssertionError("unreachable: the last format either returns or raises")


def _schema_refused(exc: BaseException) -> BackendError:
    """The error of a server that takes the schema in no form it was sent in, under `on`."""
    from .retry import error_detail  # the retry policy loads with the first live call

    return BackendError(
        redact(
            f"the judge's server refused the JSON schema sent as response_format under --judge-structured=on "
            f"(not retried): {error_detail(exc)}. "
            "Use --judge-structured=auto to fall back to plain JSON where it is refused, or off."
        ),
        retryable=False,
        status=getattr(exc, "status_code", None),
    )
