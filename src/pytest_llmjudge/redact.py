"""Keep secrets out of everything the plugin says or stores.

Error texts from providers and HTTP clients sometimes quote request headers or parameters, and a
test's criteria, context, tool arguments or name may hold a key.  `redact` blanks the value of any
environment variable whose name looks like a credential (KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL
in it), or that the user named (`--judge-redact-env`), and any key-shaped or `Bearer` string.

It is applied where text leaves the plugin, to the whole of what leaves, never to a list of fields:
`redact_value` over every stored entry (verdict files, the local cache) and report document, the
errors' and warnings' `str()` (`errors.Redacted`), the terminal's lines and report sections.  What a
judge is sent is not redacted: the test decides what it judges, and keys hash the real content.
"""

from __future__ import annotations

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
    if re.search(_BEARER, text) is not None:  # a sub with a template costs several searches that find nothing
        text = re.sub(_BEARER, r"\1[redacted]", text)
    return re.sub(_KEY_SHAPED, "[redacted]", text)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential-like value replaced by `[redacted]`."""
    return _blank(text, secret_values(environ))


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
            self._values = secret_values()

    def __call__(self, text: str) -> str:
        values = self._values
        if values is None:
            values = self._values = secret_values()
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
