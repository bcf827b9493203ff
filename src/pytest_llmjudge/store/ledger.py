"""The committed ledger: one readable JSON file of verdicts per test item.

The ledger is the source of truth for replay: sorted, with no timestamps or costs, so that
re-recording an unchanged verdict changes no byte and a review diff shows only what the judge said
differently.  A file may be hand-edited, so it is parsed as JSON and validated before use.

Several processes may record into one file at once (two terminals, two CI jobs on one runner, a
model matrix): every write re-reads the file and adds its entry under a cross-process lock, so no
process's entry is lost.  The lock files live in one private directory of the temp dir
(`default_lock_dir`), named by a hash of the verdict file's resolved path, never beside the
verdict files: nothing to ignore, nothing committed by mistake.  Processes that do not share a
temp dir (containers sharing only a bind-mounted tree) do not see each other's locks.

What is written is redacted (`redact_entry`): a key-shaped string or a credential from the
environment inside the output, input, expected answer, criteria, reasoning or judge reply is
stored as `[redacted]`.  The key was computed from the real content before, so replay is unaffected.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..redact import redact
from .atomic import write_atomically

__all__ = [
    "LEDGER_FORMAT",
    "REDACTED_FIELDS",
    "Ledger",
    "LedgerDocument",
    "LedgerWriteError",
    "default_lock_dir",
    "ledger_filename",
    "ledger_path",
    "read_ledger_file",
    "redact_entry",
    "redact_value",
]

# Bump when the prompt template or the stored format changes meaning: every key changes with it.
LEDGER_FORMAT = 1

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]")
_KEY = re.compile(r"[0-9a-f]{64}")


@functools.lru_cache(maxsize=4096)
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
        return _beside_module(module_path, test_name)
    try:
        relative = module_path.resolve().relative_to(rootdir.resolve())
    except ValueError:
        relative = Path(module_path.name)
    return store_root.joinpath(relative.with_suffix(""), ledger_filename(test_name))


def _beside_module(module_path: Path, test_name: str) -> Path:
    # Pure path arithmetic (no file system); the folder is the same for every test of a module.
    return _module_folder(module_path) / ledger_filename(test_name)


@functools.lru_cache(maxsize=1024)
def _module_folder(module_path: Path) -> Path:
    return module_path.parent.joinpath("judge_verdicts", module_path.stem)


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
        except (FileNotFoundError, NotADirectoryError):  # no file can be there: an empty ledger
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


# The fields of an entry that can hold the user's data or the judge's words about it.  The others
# (model, rubric, prompt name, sample, messages_sha256, score, verdict, confidence, logprobs) are
# the plugin's own values and stay as they are.
REDACTED_FIELDS = ("criteria", "input", "expected", "output", "reasoning", "reply")

# How long a writer waits for another process's write of the same file (each takes milliseconds).
LOCK_TIMEOUT_S = 120.0


def redact_value(value: Any) -> Any:
    """`value` with every string in it (dict keys too) redacted; other values as they are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def redact_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """`entry` as it is stored: None-valued fields dropped, the `REDACTED_FIELDS` redacted.

    Redacting is idempotent, so a stored entry redacts to itself.  A secret inside the judge's reply
    becomes `[redacted]` (no quote, brace or digit), so the reply parses to the same score.
    """
    return {k: (redact_value(v) if k in REDACTED_FIELDS else v) for k, v in entry.items() if v is not None}


class LedgerWriteError(StoreError):
    """A verdict could not be written into its verdict file (read-only tree, a file in the way, ...).

    `path` is the verdict file, `key` the judgment's key, `reason` the operating system's words.
    The verdict itself is not lost where a local cache holds it: a later run in auto mode, with a
    writable store, finds it there and writes it.
    """

    def __init__(self, path: Path, key: str, reason: str) -> None:
        self.path = path
        self.key = key
        self.reason = reason
        super().__init__(
            f"cannot write the verdict file {path} ({reason}); the verdict (key {key[:12]}) was not stored there. "
            f"It is kept in the local cache, and the next run in auto mode with a writable store writes it: "
            f"make {path.parent} writable, or point --judge-store (LLMJUDGE_STORE) at a writable directory."
        )


def _describe_os_error(exc: OSError) -> str:
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.__class__.__name__}: {exc.strerror or exc}{where}"


def default_lock_dir() -> Path:
    """The directory of the verdict files' lock files: private to this user, in the temp dir."""
    uid = getattr(os, "getuid", None)
    suffix = str(uid()) if uid is not None else (os.environ.get("USERNAME") or "user")
    return Path(tempfile.gettempdir()) / f"pytest-llmjudge-locks-{_UNSAFE_NAME.sub('_', suffix)}"


def _lock_file(path: Path, lock_dir: Path | None) -> Path:
    folder = default_lock_dir() if lock_dir is None else lock_dir
    name = os.path.normcase(str(path.resolve()))
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return folder / f"{digest}.lock"


class Ledger:
    """The committed verdicts of one test item, loaded on first use and rewritten when changed.

    Writes (`put`, `adopt`) re-read the file under a cross-process lock and add to what is there,
    so recorders running at once keep every entry.  `release` frees the loaded entries of a test
    that finished, keeping `used` for prune.
    """

    def __init__(self, path: Path, nodeid: str, *, lock_dir: Path | None = None) -> None:
        self.path = path
        self.nodeid = nodeid
        self.lock_dir = lock_dir  # None: default_lock_dir()
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
        """Store `entry` (redacted) under `key`, replacing what the file held for it; return whether
        the file changed.  Entries other processes wrote meanwhile are kept.

        Raises `LedgerWriteError` (a `StoreError`) when the file cannot be written, and
        `StoreError` when the file on disk is malformed (it is never overwritten then).
        """
        return self._write(key, redact_entry(entry), replace=True)

    def adopt(self, key: str, entry: Mapping[str, Any]) -> bool:
        """Copy an entry found in another verdict file (same key, so the same judgment) into this one.

        Never replaces an entry this file already holds for `key`.  Returns whether the file
        changed; raises as `put` does, and `StoreError` when `entry` has no reply text.
        """
        _validate_entry(self.path, key, entry)
        return self._write(key, redact_entry(entry), replace=False)

    def release(self) -> None:
        """Forget the loaded entries (the test finished); `used` is kept, and a later `get` re-reads."""
        with self._lock:
            self._entries = None

    def _write(self, key: str, clean: dict[str, Any], *, replace: bool) -> bool:
        with self._lock:
            self.used.add(key)
            if self._entries is not None:
                known = self._entries.get(key)
                if known == clean or (known is not None and not replace):
                    return False
            from filelock import FileLock, Timeout  # only when recording: replay never imports it

            lock_path = _lock_file(self.path, self.lock_dir)
            try:
                lock_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                with FileLock(str(lock_path), timeout=LOCK_TIMEOUT_S):
                    on_disk = LedgerDocument.read(self.path).entries
                    self._entries = on_disk
                    current = on_disk.get(key)
                    if current == clean or (current is not None and not replace):
                        return False
                    on_disk[key] = clean
                    LedgerDocument(self.path, self.nodeid, on_disk).write()
                    return True
            except Timeout:
                raise LedgerWriteError(
                    self.path, key, f"another process held its lock {lock_path} for {LOCK_TIMEOUT_S:.0f} s"
                ) from None
            except OSError as exc:
                raise LedgerWriteError(self.path, key, _describe_os_error(exc)) from None
