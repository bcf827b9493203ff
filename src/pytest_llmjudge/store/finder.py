"""Finding verdict files on disk: one walk shared by the CLI and the store's index.

A directory tree is walked once, skipping what is never a test tree of the project's own:
version control, tox/nox environments, node_modules, caches (pytest's, mypy's, ruff's, any
directory tagged with a `CACHEDIR.TAG`) and virtual environments (any directory holding a
`pyvenv.cfg`).  Inside a `judge_verdicts` directory every `*.json` is a verdict file; elsewhere a
JSON file counts only when its first bytes look like one (as `--judge-store DIR` writes them), and
only when asked to look (`sniff=True`).  Files starting with a dot (temporary files of a write in
progress) are never taken.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from .verdict_file import read_regular_file

__all__ = [
    "SKIP_DIRS",
    "VERDICTS_DIR",
    "find_verdict_files",
    "skipped_path",
    "starts_like_verdict_file",
    "walk_verdict_files",
]

VERDICTS_DIR = "judge_verdicts"

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".tox", ".nox", "node_modules", "__pycache__", ".venv", "venv", ".env", "env",
    ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "site-packages", ".eggs",
})  # fmt: skip

# How a verdict file starts (its keys sorted): "format" and the section after it, or the "cases" before it.
_VERDICT_FILE_SNIFF = re.compile(
    r'\A\s*\{\s*(?:"cases"\s*:\s*\{|"format"\s*:\s*\d+\s*,\s*"(?:generations|outcomes|test)"\s*:)'
)


def _skipped(folder: Path, name: str) -> bool:
    if name in SKIP_DIRS:
        return True
    here = folder / name
    return (here / "pyvenv.cfg").is_file() or (here / "CACHEDIR.TAG").is_file()


def _looks_like_verdict_file(path: Path) -> bool:
    try:  # a FIFO or a device is never waited on or read
        return starts_like_verdict_file(read_regular_file(path, 512, head=True))
    except OSError:
        return False


def starts_like_verdict_file(head: bytes) -> bool:
    """Whether a JSON file that is not in a `judge_verdicts` folder is taken for a verdict file, by its first bytes."""
    return bool(_VERDICT_FILE_SNIFF.match(head[:512].decode("utf-8", "replace")))


def skipped_path(parts: Sequence[str]) -> bool:
    """Whether a file at these path parts (folders, then its name) is never taken: in a folder every walk skips,
    or named as a temporary file (a dot first), or not JSON.  A revision's files are filtered this way."""
    *folders, name = parts
    return any(folder in SKIP_DIRS for folder in folders) or name.startswith(".") or not name.endswith(".json")


def walk_verdict_files(root: Path, *, sniff: bool = True) -> Iterable[Path]:
    """The verdict files under the directory `root`, in a stable order (see the module docstring)."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not _skipped(here, d))
        inside = VERDICTS_DIR in here.parts
        if not inside and not sniff:
            continue
        for name in sorted(filenames):
            if not name.endswith(".json") or name.startswith("."):
                continue
            path = here / name
            if inside or _looks_like_verdict_file(path):
                yield path


def find_verdict_files(paths: Sequence[str | Path], *, sniff: bool = True) -> list[Path]:
    """Every verdict file under `paths` (a file is taken as given), sorted and without duplicates.

    Raises `FileNotFoundError` naming a path that does not exist.
    """
    found: list[Path] = []
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            raise FileNotFoundError(2, "no such file or directory", str(raw))
        if root.is_file():
            found.append(root)
        else:
            found.extend(walk_verdict_files(root, sniff=sniff))
    return sorted(dict.fromkeys(found))
