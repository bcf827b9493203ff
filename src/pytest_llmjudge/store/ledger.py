"""The committed ledger: one readable JSON file of verdicts per test item.

The ledger is the source of truth for replay: sorted, with no timestamps or costs, so that
re-recording an unchanged verdict changes no byte and a review diff shows only what the judge said
differently.  A file may be hand-edited, so it is parsed as JSON and validated before use.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .atomic import write_atomically

__all__ = ["LEDGER_FORMAT", "Ledger", "LedgerDocument", "ledger_filename", "ledger_path", "read_ledger_file"]

# Bump when the prompt template or the stored format changes meaning: every key changes with it.
LEDGER_FORMAT = 1

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]")
_KEY = re.compile(r"[0-9a-f]{64}")


def ledger_filename(test_name: str) -> str:
    """A file name for a test (`TestX::test_y[a/b]`), unique even where characters were replaced."""
    cleaned = _UNSAFE_NAME.sub("_", test_name.replace("::", "."))
    if cleaned != test_name.replace("::", ".") or len(cleaned) > 120:
        digest = hashlib.sha256(test_name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        cleaned = f"{cleaned[:120]}-{digest}"
    return cleaned + ".json"


def ledger_path(module_path: Path, test_name: str, *, store_root: Path | None, rootdir: Path) -> Path:
    """Where one test item's verdicts live.

    By default beside the test module, in `judge_verdicts/<module>/<test>.json` (so a test and its
    verdicts move together, as pytest-recording does with cassettes); with `--judge-store DIR`,
    in `DIR/<module path relative to rootdir>/<test>.json`.
    """
    if store_root is None:
        return module_path.parent.joinpath("judge_verdicts", module_path.stem, ledger_filename(test_name))
    try:
        relative = module_path.resolve().relative_to(rootdir.resolve())
    except ValueError:
        relative = Path(module_path.name)
    return store_root.joinpath(relative.with_suffix(""), ledger_filename(test_name))


def _validate_entry(path: Path, key: str, entry: object) -> dict[str, Any]:
    if not _KEY.fullmatch(key):
        raise StoreError(f"{path}: {key!r} is not a verdict key (64 hex digits)")
    if not isinstance(entry, dict):
        raise StoreError(f"{path}: the entry for key {key[:12]} is not a JSON object")
    if not isinstance(entry.get("reply"), str):
        raise StoreError(f"{path}: the entry for key {key[:12]} has no 'reply' text")
    return entry


@dataclass
class LedgerDocument:
    """One verdict file as it is on disk: the only code that reads or writes the file format."""

    path: Path
    test: str
    entries: dict[str, dict[str, Any]]

    @classmethod
    def read(cls, path: Path) -> LedgerDocument:
        """Read and validate `path` (a missing file is empty); StoreError names a malformed one."""
        try:
            # Bytes then decode: as read_text does, without a text-wrapper per file (replay reads one per test).
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8")
        except FileNotFoundError:
            return cls(path, "", {})
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"{path}: cannot read the verdict file ({exc.__class__.__name__})") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise StoreError(
                f"{path}: the verdict file is not valid JSON ({exc}); fix it, or delete it and re-record"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("verdicts"), dict):
            raise StoreError(f"{path}: not a verdict file (expected an object with a 'verdicts' object)")
        if data.get("format") != LEDGER_FORMAT:
            raise StoreError(
                f"{path}: verdict file format {data.get('format')!r}, this plugin reads format {LEDGER_FORMAT}"
            )
        entries = {key: _validate_entry(path, key, entry) for key, entry in data["verdicts"].items()}
        return cls(path, str(data.get("test") or ""), entries)

    def write(self) -> None:
        """Rewrite atomically in the one layout (sorted, indented), so a diff shows only the change."""
        clean = {k: {f: v for f, v in e.items() if v is not None} for k, e in self.entries.items()}
        document = {"format": LEDGER_FORMAT, "test": self.test, "verdicts": clean}
        write_atomically(self.path, json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n")


def read_ledger_file(path: Path) -> dict[str, dict[str, Any]]:
    """Read and validate one ledger file; raise StoreError naming the file when it is malformed."""
    return LedgerDocument.read(path).entries


class Ledger:
    """The committed verdicts of one test item, loaded on first use and rewritten when changed."""

    def __init__(self, path: Path, nodeid: str) -> None:
        self.path = path
        self.nodeid = nodeid
        self._entries: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()  # score_many may record from several threads
        self.used: set[str] = set()  # keys this run read or wrote (for prune)

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = read_ledger_file(self.path)
        return self._entries

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for `key`, or None; a hit is remembered as used."""
        with self._lock:
            entry = self._load().get(key)
            if entry is not None:
                self.used.add(key)
            return entry

    def entries(self) -> dict[str, dict[str, Any]]:
        """A copy of every stored entry, by key."""
        with self._lock:
            return dict(self._load())

    def put(self, key: str, entry: Mapping[str, Any]) -> bool:
        """Store `entry` under `key` and rewrite the file if anything changed; return whether it did."""
        clean = {k: v for k, v in entry.items() if v is not None}
        with self._lock:
            entries = self._load()
            self.used.add(key)
            if entries.get(key) == clean:
                return False
            entries[key] = clean
            LedgerDocument(self.path, self.nodeid, entries).write()
            return True
