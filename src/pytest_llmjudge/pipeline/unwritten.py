"""The one warning for a verdict file that cannot be written: what was not stored, and where it is."""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import Literal

from ..errors import first_line
from ..verdict import VerdictFileWriteWarning

# What must happen again when nothing keeps the reply, by what was not stored.
_AGAIN = {"verdict": "judged", "generation": "generated"}


def warn_unwritten(
    path: Path,
    key: str,
    exc: BaseException,
    *,
    kept: bool | Path | None,
    what: Literal["verdict", "generation"] = "verdict",
    stacklevel: int = 3,
) -> None:
    """Say, once per judgment or generation, that its verdict file could not be written, and where the
    reply is: `kept` is True for the local cache, False for nowhere (no cache), None for nowhere (the cache
    could not store it either), or the verdict file it was copied from.
    """
    from ..store.verdict_file import VerdictFileWriteError

    if isinstance(exc, VerdictFileWriteError):  # its own message is a sentence; only the reason belongs here
        reason = exc.reason
    elif isinstance(exc, OSError):
        reason = f"{exc.__class__.__name__}: {exc.strerror or exc}"
    else:
        reason = first_line(exc)
    if isinstance(kept, Path):
        where = f"It is still stored in {kept}, and the next run in auto mode with a writable store copies it"
    elif kept:
        where = "It is kept in the local cache, and the next run in auto mode with a writable store writes it"
    elif kept is None:
        where = f"The local cache could not store it either, so it must be {_AGAIN[what]} again"
    else:
        where = f"No local cache is in use (pytest's cache provider is off), so it must be {_AGAIN[what]} again"
    message = (
        f"llmjudge: cannot write the verdict file {path} ({reason}); the {what} (key {key[:12]}) was not stored "
        f"there. {where}: make {path.parent} writable, or point --judge-store at a writable directory."
    )
    with contextlib.suppress(Warning):  # warnings turned into errors: the paid reply still stands
        warnings.warn(VerdictFileWriteWarning(message), stacklevel=stacklevel)
