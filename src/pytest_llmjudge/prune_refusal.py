"""Why the last run left no used-keys manifest: kept in pytest's cache beside the manifest.

A run that cannot say which stored verdicts it used (it failed, ran node ids, judged live) writes
no manifest; `pytest --judge-prune` says why at once.  `llmjudge prune` runs later, so the run
keeps its reason here, and the command says the real one rather than "run the whole suite once".
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .prune import PYTEST_CACHE_DIR, manifest_file

if TYPE_CHECKING:  # the CLI imports this module too, and runs without pytest
    import pytest

REFUSAL_KEY = "llmjudge/no-manifest"
_MAX_BYTES = 64 * 1024  # a reason is one line: anything bigger is not one this plugin wrote


class Refusal(NamedTuple):
    """The last refused run's reason and when it ended (seconds since the epoch)."""

    reason: str
    written: float


def save_refusal(config: pytest.Config, reason: str) -> None:
    """Keep why this run wrote no manifest (nothing with the cache provider off)."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        cache.set(REFUSAL_KEY, {"reason": reason, "written": time.time()})


def last_refusal(cache_dir: str | Path | None, start: Path) -> Refusal | None:
    """The reason the last refused run left, in `cache_dir`, else in the nearest pytest cache at or above `start`."""
    here = start.resolve()
    folders = [Path(cache_dir)] if cache_dir else [folder / PYTEST_CACHE_DIR for folder in (here, *here.parents)]
    for folder in folders:
        path = manifest_file(folder, REFUSAL_KEY)
        if path.is_file():
            return _read(path)
    return None


def _read(path: Path) -> Refusal | None:
    # The cache directory is untrusted: a regular file, bounded, plain JSON; anything else is no reason.
    try:
        if path.stat().st_size > _MAX_BYTES:
            return None
        note: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(note, dict):
        return None
    reason, written = note.get("reason"), note.get("written")
    if not isinstance(reason, str) or isinstance(written, bool) or not isinstance(written, (int, float)):
        return None
    return Refusal(" ".join(reason.split())[:500], float(written))
