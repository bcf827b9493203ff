"""What a run stored: the verdict files under each judge_verdicts/ folder, and the entries in them.

The tests read the files as JSON, as a reviewer or another tool would, not through the store's code.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["edit_only_entry", "entries_by_key", "only_entry", "stored_entries", "verdict_files", "whole_entries"]


def verdict_files(root: Path) -> list[Path]:
    """Every verdict file in a judge_verdicts/ folder anywhere below `root`, sorted."""
    return sorted(root.rglob("judge_verdicts/**/*.json"))


def whole_entries(document: dict, section: str = "verdicts") -> dict[str, dict]:
    """A verdict file's entries by key, each with the fields of the case it names (a judgment of several
    calls stores its case once, under "cases"), as a tool reading the file puts them together."""
    cases = document.get("cases", {})
    return {key: {**cases.get(entry.get("case"), {}), **entry} for key, entry in document[section].items()}


def stored_entries(root: Path) -> list[dict]:
    """Every stored verdict entry below `root`: file by file (in `verdict_files` order), each file's in its order."""
    entries: list[dict] = []
    for path in verdict_files(root):
        entries.extend(whole_entries(json.loads(path.read_text())).values())
    return entries


def entries_by_key(root: Path) -> dict[str, dict]:
    """The stored verdict entries below `root` by key (a key stored in two files: the later file's entry)."""
    entries: dict[str, dict] = {}
    for path in verdict_files(root):
        entries.update(whole_entries(json.loads(path.read_text())))
    return entries


def only_entry(root: Path) -> dict:
    """The one entry of the one verdict file below `root` (a ValueError if there are more or none)."""
    (path,) = verdict_files(root)
    (entry,) = json.loads(path.read_text())["verdicts"].values()
    return entry


def edit_only_entry(root: Path, **fields: object) -> Path:
    """Hand-edit the one entry of the one verdict file below `root` (as a reviewer might); return the file."""
    (path,) = verdict_files(root)
    document = json.loads(path.read_text())
    (entry,) = document["verdicts"].values()
    entry.update(fields)
    path.write_text(json.dumps(document, indent=2))
    return path
