"""An index of every stored verdict, for a judgment missed in its own test's file.

Keys are content hashes, so an entry with the same key is the same judgment whichever verdict file
holds it: a judgment made in a session-scoped fixture (filed under whichever test set it up first),
a renamed test, a moved module.  The index is built on the first miss: one walk of the store
(`finder`), each file read once.  Files that cannot be read are listed in `problems`: one broken file
elsewhere must not fail this test's lookup.  Recorded generations are indexed apart from the verdicts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .finder import walk_verdict_files
from .verdict_file import Section, VerdictDocument

__all__ = ["StoredVerdict", "VerdictIndex"]


@dataclass(frozen=True)
class StoredVerdict:
    """One stored entry and the verdict file that holds it."""

    path: Path
    test: str
    key: str
    entry: Mapping[str, Any]


def _first_per(
    stored: Iterable[StoredVerdict], signature: Callable[[Mapping[str, Any]], Hashable | None]
) -> list[StoredVerdict]:
    """The first of `stored` for each `signature` of an entry (None: the entry is left out)."""
    first: dict[Hashable, StoredVerdict] = {}
    for each in stored:
        found = signature(each.entry)
        if found is not None:
            first.setdefault(found, each)
    return list(first.values())


def _model(entry: Mapping[str, Any]) -> str | None:
    model = entry.get("model")
    return model if isinstance(model, str) else None


class VerdictIndex:
    """Every entry of every verdict file under some roots, by key; built on first use.

    `roots` pairs a directory with whether any JSON file shaped like a verdict file in it counts (`True`, for a
    `--judge-store` directory) or only files inside `judge_verdicts/` folders (`False`, for the
    rootdir).  Missing roots are skipped.  Thread-safe.
    """

    def __init__(self, roots: Sequence[tuple[Path, bool]]) -> None:
        self.roots = list(roots)
        self.problems: list[str] = []  # one line per file that could not be read
        self._by_key: dict[Section, dict[str, StoredVerdict]] | None = None  # verdicts and generations apart
        self._lock = threading.Lock()

    @classmethod
    def for_layout(cls, rootdir: Path, store_root: Path | None = None) -> VerdictIndex:
        """The index of a pytest run: `judge_verdicts/` folders under the rootdir, and the store directory."""
        roots: list[tuple[Path, bool]] = [(rootdir, False)]
        if store_root is not None:
            roots.append((store_root, True))
        return cls(roots)

    def _build(self, what: Section) -> dict[str, StoredVerdict]:
        with self._lock:
            if self._by_key is not None:
                return self._by_key[what]
            by_key: dict[Section, dict[str, StoredVerdict]] = {"verdict": {}, "generation": {}}
            seen: set[Path] = set()
            for root, sniff in self.roots:
                if not root.is_dir():
                    continue
                for path in walk_verdict_files(root, sniff=sniff):
                    resolved = path.resolve()
                    if resolved in seen:
                        continue
                    seen.add(resolved)
                    try:
                        document = VerdictDocument.read(path)
                    except StoreError as exc:
                        self.problems.append(str(exc))
                        continue
                    for section, found in by_key.items():  # the same key is the same judgment: the first file serves
                        for key, entry in sorted(document.section(section).items()):
                            found.setdefault(key, StoredVerdict(path, document.test, key, entry))
            self._by_key = by_key
            return by_key[what]

    def find(self, key: str, what: Section = "verdict") -> StoredVerdict | None:
        """The stored verdict (or generation) for `key` in any verdict file, or None (builds the index on first use)."""
        return self._build(what).get(key)

    def by_model(self, what: Section = "verdict") -> dict[str, StoredVerdict]:
        """One stored verdict (or generation) per model that recorded anything (the models a replay could try)."""
        return {str(s.entry["model"]): s for s in self.distinct(what, _model)}

    def distinct(self, what: Section, signature: Callable[[Mapping[str, Any]], Hashable | None]) -> list[StoredVerdict]:
        """One stored verdict (or generation) per `signature` an entry has (the judges and settings a replay
        could try); entries whose signature is None are left out."""
        return _first_per(self._build(what).values(), signature)

    def note(self, path: Path, key: str, entry: Mapping[str, Any], test: str = "") -> None:
        """Keep a built index current after this process wrote `entry` (as stored) into `path`."""
        with self._lock:
            if self._by_key is not None:
                self._by_key["verdict"].setdefault(key, StoredVerdict(path, test, key, dict(entry)))
