"""Keep secrets out of everything the plugin says or stores.

Error texts from providers and HTTP clients sometimes quote request headers or parameters, and a
test's criteria or name may hold a key.  Every message the plugin shows, every report record and
every stored entry passes through `redact` first, which blanks the value of any environment variable
whose name looks like a credential (KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL in it), or that
the user named (`--judge-redact-env`), and any key-shaped or `Bearer` string.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping

__all__ = ["redact", "redact_variables", "redactor", "secret_values"]

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
# Also catch key-shaped strings that never came from the environment (a key passed in code).
_KEY_SHAPED = re.compile(r"\b(sk|pk|rk|ak)-[A-Za-z0-9_\-]{12,}")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}")
MIN_SECRET_LENGTH = 8  # shorter values ("1", "true") are settings, not secrets, and would blank common words

# Variables the user named (--judge-redact-env), redacted whatever their names look like.
_named: frozenset[str] = frozenset()
# (the variable names seen, the secret ones among them, their values, the values to blank)
_cached: tuple[frozenset[str], tuple[str, ...], tuple[str | None, ...], list[str]] | None = None


def redact_variables(names: Iterable[str]) -> None:
    """Redact these variables' values too, whatever their names (the run's --judge-redact-env)."""
    global _named, _cached
    _named = frozenset(names)
    _cached = None


def _is_secret(name: str) -> bool:
    return name in _named or _SECRET_NAME.search(name) is not None


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of credential-like (or named) environment variables, longest first (so no part is left)."""
    global _cached
    if environ is not None:
        return _values(environ, [n for n in environ if _is_secret(n)])
    # The names are read afresh every time (a credential may have been set while another variable
    # went); the work of sorting out the secret ones is kept while the names and their values stay.
    names = frozenset(os.environ)
    cached = _cached
    if cached is not None and cached[0] == names:
        secret_names, seen = cached[1], cached[2]
        if tuple(os.environ.get(n) for n in secret_names) == seen:
            return cached[3]
    secret_names = tuple(n for n in names if _is_secret(n))
    values = _values(os.environ, secret_names)
    _cached = (names, secret_names, tuple(os.environ.get(n) for n in secret_names), values)
    return values


def _values(environ: Mapping[str, str], names: Iterable[str]) -> list[str]:
    found = {environ.get(n) or "" for n in names}
    return sorted((v for v in found if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def _blank(text: str, values: list[str]) -> str:
    for value in values:
        if value in text:
            text = text.replace(value, "[redacted]")
    text = _BEARER.sub(r"\1[redacted]", text)
    return _KEY_SHAPED.sub("[redacted]", text)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential-like value replaced by `[redacted]`."""
    return _blank(text, secret_values(environ))


def redactor() -> Callable[[str], str]:
    """`redact` with the environment read once: for the several texts of one record."""
    values = secret_values()
    return lambda text: _blank(text, values)
