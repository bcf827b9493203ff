"""Keep secrets out of everything the plugin says or stores.

Error texts from providers and HTTP clients sometimes quote request headers or parameters.  Every
message the plugin shows, and every error it records, passes through `redact` first, which blanks
the value of any environment variable that looks like a credential.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
# Also catch key-shaped strings that never came from the environment (a key passed in code).
_KEY_SHAPED = re.compile(r"\b(sk|pk|rk|ak)-[A-Za-z0-9_\-]{12,}")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}")


# (os.environ's variable names, the credential-like ones among them, their values, the result)
# os.environ._data holds bytes on POSIX: names and values are compared as it stores them.
_cached: tuple[frozenset[object], tuple[object, ...], tuple[object, ...], list[str]] | None = None


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of credential-like environment variables, longest first (so no part is left)."""
    global _cached
    raw = getattr(os.environ, "_data", None) if environ is None else None
    if raw is not None and _cached is not None:
        names, secret_names, secret_raw, values = _cached
        # pytest rewrites PYTEST_CURRENT_TEST at every test phase: watch only the names and the
        # credential-like values, or the cache would never hit.
        if raw.keys() == names and tuple(raw.get(n) for n in secret_names) == secret_raw:
            return values
    environ = os.environ if environ is None else environ
    values = sorted({v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}, key=len, reverse=True)
    if raw is not None:
        secret_names = tuple(n for n in raw if _SECRET_NAME.search(os.fsdecode(n) if isinstance(n, bytes) else n))
        _cached = (frozenset(raw.keys()), secret_names, tuple(raw[n] for n in secret_names), values)
    return values


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential-like value replaced by `[redacted]`."""
    for value in secret_values(environ):
        if value in text:
            text = text.replace(value, "[redacted]")
    text = _BEARER.sub(r"\1[redacted]", text)
    return _KEY_SHAPED.sub("[redacted]", text)
