"""Regular expressions compiled on their first use rather than when the parser is imported.

Why: compiling the parser's ~60 patterns cost ~115 million instructions (~30 ms) at import, in every
pytest run that imports the plugin's parser, although a replay or a clean JSON reply uses only a few
of them.  `lazy` returns a stand-in that compiles its pattern on first use.  `install(globals())` at
the end of each module that defines or imports stand-ins lets that first use put the compiled pattern
in place of the stand-in under every such module-level name: from then on the parser calls the real
`re.Pattern`, with no extra step per call.
"""

from __future__ import annotations

import re
import threading
from typing import Any, cast

# Compiling and swapping in happen under one lock, so a module name only ever holds the stand-in or the
# one compiled pattern, and every first use (from any thread) gets that same pattern.
_LOCK = threading.Lock()


class LazyPattern:
    """A pattern's source, compiled on the first attribute use (``.search``, ``.groupindex``...)."""

    __slots__ = ("_compiled", "_flags", "_homes", "pattern")

    def __init__(self, source: str, flags: int) -> None:
        self.pattern = source  # as on re.Pattern; reading it compiles nothing
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        self._homes: list[tuple[dict[str, Any], str]] = []  # module namespaces and names holding this

    def compile(self) -> re.Pattern[str]:
        """The compiled pattern; the first call also puts it in place of this stand-in in its modules."""
        compiled = self._compiled
        if compiled is None:
            with _LOCK:
                if self._compiled is None:
                    self._compiled = re.compile(self.pattern, self._flags)
                    for namespace, name in self._homes:
                        namespace[name] = self._compiled
                compiled = self._compiled
        return compiled

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class lacks: every re.Pattern method and attribute.
        return getattr(self.compile(), name)


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, deferred until the pattern is first used."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))


def install(namespace: dict[str, Any]) -> None:
    """Let the first use of each stand-in in a module's ``namespace`` replace it there by the compiled pattern."""
    with _LOCK:
        for name, value in list(namespace.items()):
            if isinstance(value, LazyPattern):
                if value._compiled is not None:
                    namespace[name] = value._compiled
                else:
                    value._homes.append((namespace, name))
