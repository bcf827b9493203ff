"""Keep secrets out of everything the plugin says or stores.

Error texts from providers and HTTP clients sometimes quote request headers or parameters, and a
test's criteria, context, tool arguments or name may hold a key.  `redact` blanks the value of any
environment variable whose name looks like a credential (KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL
in it), or that the user named (`--judge-redact-env`), and any key-shaped or `Bearer` string, and the
credentials of a URL (`http://user:password@host`: the part before `@`), wherever a URL is shown.

A value is blanked however the text it sits in spells it (`spellings`): as it is, as JSON writes it
(`\\` and `\"`, `\u00dc` for non-ASCII, `\u0007` for a control character, JSON quoted in JSON again),
as Python's repr and pytest's ids write it, HTML-escaped, percent-encoded.  A dict output is judged
as its JSON text and a judge quotes it in JSON: text is all there is by then, so every spelling is
looked for.  A text clipped for showing in the middle of a secret (`C:\\vault\\hun...`) loses the
secret's first characters too (`clipped`).

It is applied where text leaves the plugin, to the whole of what leaves, never to a list of fields:
`redact_value` over every stored entry (verdict files, the local cache) and report document, the
errors' and warnings' `str()` (`errors.Redacted`), the terminal's lines and report sections.  A live
reply is redacted as it arrives (`pipeline.live`), so what is read from it (a reasoning, claims, a
simulated user's turn) is what a replay reads from the stored reply.  What a judge is sent is not
redacted: the test decides what it judges, and keys hash the real content.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

# Patterns, not compiled ones: `re` compiles each on first use and keeps it, so a run that redacts
# nothing compiles nothing (compiling at import cost every pytest start-up about a millisecond).
_SECRET_NAME = r"(?i)(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)"
# Also catch key-shaped strings that never came from the environment (a key passed in code).
_KEY_SHAPED = r"\b(sk|pk|rk|ak)-[A-Za-z0-9_\-]{12,}"
_BEARER = r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"
# A URL's credentials (`scheme://user:password@`, or a token as the user), as RFC 3986 spells them.
_URL_CREDENTIALS = r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@\"'<>]+@"
# Where a text shown was clipped: a secret cut there keeps none of its first characters (`clipped`).
_ELLIPSES = ("...", "\u2026")
MIN_SECRET_LENGTH = 8  # shorter values ("1", "true") are settings, not secrets, and would blank common words

# Variables the user named (--judge-redact-env), redacted whatever their names look like.
_named: frozenset[str] = frozenset()
# Whether each variable name seen is a secret's (pytest and the plugin set and unset variables of
# their own at every test, so the set of names changes: each name is judged once).
_secret_names: dict[str, bool] = {}


def redact_variables(names: Iterable[str]) -> None:
    """Redact these variables' values too, whatever their names (the run's --judge-redact-env)."""
    global _named
    _named = frozenset(names)
    _secret_names.clear()


def _is_secret(name: str) -> bool:
    secret = _secret_names.get(name)
    if secret is None:
        secret = _secret_names[name] = name in _named or re.search(_SECRET_NAME, name) is not None
    return secret


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of credential-like (or named) environment variables, longest first (so no part is left).

    Every name is read afresh each time: a credential may have been set while another variable went.
    A judgment reads them once (see `redactor`)."""
    if environ is None:
        environ = os.environ
    found = {environ.get(n) or "" for n in environ if _is_secret(n)}
    return sorted((v for v in found if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def _blank(text: str, values: list[str]) -> str:
    for value in values:
        if value in text:
            text = text.replace(value, "[redacted]")
    if values and ("..." in text or "\u2026" in text):
        text = clipped(text, values)
    if re.search(_BEARER, text) is not None:  # a sub with a template costs several searches that find nothing
        text = re.sub(_BEARER, r"\1[redacted]", text)
    if "@" in text and "://" in text:
        text = re.sub(_URL_CREDENTIALS, r"\1[redacted]@", text)
    return re.sub(_KEY_SHAPED, "[redacted]", text)


@functools.lru_cache(maxsize=256)
def spellings(value: str) -> tuple[str, ...]:
    """`value` as the writers whose text the plugin shows or stores spell it: as it is; as JSON writes it
    (non-ASCII kept, or `\\u00dc`, also upper-case; `/` as `\\/` too), and JSON of that JSON (a judge's
    JSON reply quoting a dict output); as Python's repr and pytest's ids write it; HTML-escaped;
    percent-encoded.  Distinct, longest first (so a spelling is blanked before a shorter one inside it)."""
    import html
    import json
    from urllib.parse import quote, quote_plus

    once = {json.dumps(value, ensure_ascii=ascii)[1:-1] for ascii in (False, True)}
    once |= {re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m[1].upper(), form) for form in once}
    once |= {form.replace("/", "\\/") for form in once}
    forms = {value, *once}
    forms |= {json.dumps(form, ensure_ascii=ascii)[1:-1] for form in once for ascii in (False, True)}
    forms |= {repr(value)[1:-1], value.encode("unicode_escape").decode("ascii")}
    forms |= {html.escape(form, quote=q) for form in (value, *once) for q in (False, True)}
    forms |= {quote(value, safe=""), quote_plus(value, safe="")}
    return tuple(sorted(forms, key=len, reverse=True))


def _spelled(values: list[str]) -> list[str]:
    """Every spelling of every one of `values`, longest first."""
    if all(re.fullmatch(_PLAIN, v) for v in values):  # the usual secret: every writer spells it as it is
        return values
    forms = {form for value in values for form in spellings(value)}
    return sorted(forms, key=len, reverse=True)


# Characters every writer of `spellings` keeps as they are: a value of only these has one spelling.
_PLAIN = r"[A-Za-z0-9_.\-]*"


def clipped(text: str, values: list[str]) -> str:
    """`text` with a secret's first characters blanked where the text was clipped right after them
    (`... "C:\\vault\\hun..."`), where at least `MIN_SECRET_LENGTH` of them are left."""
    grams = _grams(tuple(values))
    for mark in _ELLIPSES:
        end = text.find(mark)
        while end != -1:
            cut = 0
            if text[max(0, end - MIN_SECRET_LENGTH) : end] in grams:  # the usual "...": no secret's characters
                cut = max(_cut_prefix(text, end, value) for value in values)
            if cut:
                text = text[: end - cut] + "[redacted]" + text[end:]
                end += len("[redacted]") - cut
            end = text.find(mark, end + len(mark))
    return text


@functools.lru_cache(maxsize=16)
def _grams(values: tuple[str, ...]) -> frozenset[str]:
    """Every run of `MIN_SECRET_LENGTH` characters in `values`: what a text clipped inside one ends with."""
    return frozenset(v[i : i + MIN_SECRET_LENGTH] for v in values for i in range(len(v) - MIN_SECRET_LENGTH + 1))


def _cut_prefix(text: str, end: int, value: str) -> int:
    """The length of the longest start of `value` (a secret's spelling, cut short) that `text[:end]` ends
    with, if at least `MIN_SECRET_LENGTH` long (each place `value` holds those last characters is tried)."""
    if end < MIN_SECRET_LENGTH:
        return 0
    tail = text[end - MIN_SECRET_LENGTH : end]
    longest = 0
    at = value.find(tail)
    while at != -1:
        size = at + MIN_SECRET_LENGTH
        if size < len(value) and text.endswith(value[:size], 0, end):
            longest = size
        at = value.find(tail, at + 1)
    return longest


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential-like value, however spelled, replaced by `[redacted]`."""
    return _blank(text, _spelled(secret_values(environ)))


class Redactor:
    """`redact` with the environment read once, on first use: for the several texts of one judgment
    (its verdict file's name, its record).  A judgment that shows and writes nothing (a replay that
    passes in a quiet run) never reads it; `settle` reads it now, before the environment may change."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: list[str] | None = None

    def settle(self) -> None:
        """Read the environment's secrets now (if not yet): later texts are redacted under this one."""
        if self._values is None:
            self._values = _spelled(secret_values())

    def __call__(self, text: str) -> str:
        values = self._values
        if values is None:
            values = self._values = _spelled(secret_values())
        return _blank(text, values)


def redactor() -> Redactor:
    """A `Redactor`: `redact`, with the environment read once, when a text is first redacted."""
    return Redactor()


_SHARED_TEXT = 1024  # a text this long or longer is redacted once per object, however many places hold it


def redact_value(value: Any, clean: Callable[[str], str] | None = None) -> Any:
    """`value` with every string in it (dict keys too) redacted, lists and tuples as lists; other values as
    they are.  `clean`: the redactor to use (default: one that reads the environment once, for all of it).

    A part shared by several places (one judgment's context in each of its entries) is redacted once and
    stays shared in the result."""
    return _redacted(value, clean or Redactor(), {})


def _redacted(value: Any, clean: Callable[[str], str], seen: dict[int, Any]) -> Any:
    if isinstance(value, str) and len(value) < _SHARED_TEXT:
        return clean(value)
    if not isinstance(value, (str, dict, list, tuple)):
        return value
    known = seen.get(id(value))
    if known is not None:
        return known[1]
    if isinstance(value, str):  # a long text several entries share (a transcript): redacted once
        result: Any = clean(value)
    elif isinstance(value, dict):
        result = {_redacted(k, clean, seen): _redacted(v, clean, seen) for k, v in value.items()}
    else:
        result = [_redacted(v, clean, seen) for v in value]
    seen[id(value)] = (value, result)  # the value is kept too: its id is not reused while the memo lives
    return result
