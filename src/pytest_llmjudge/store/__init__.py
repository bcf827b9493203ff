"""Where verdicts live: the committed ledger files, the local cache under them, and the run's spend.

Two tiers.  The ledger (`ledger`) is the source of truth for replay: one readable JSON file per
test item.  The local cache (`cache`, git-ignored diskcache) sits under it, keyed the same way.
Both are untrusted input: ledger files are parsed as JSON and validated, and cache rows are read
back only when they hold inline text (`json_disk`).  `spend` shares the run's dollars across
xdist workers; `atomic` writes every file so a reader never sees half of one.  `finder` walks a tree for verdict
files (the CLI's and the index's one walk); `index` finds a key in any verdict file, on a miss;
`merge` is the git merge driver for verdict files (imported on its own: it is a command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from ..keys import canonical_json, judgment_key
    from .atomic import write_atomically
    from .cache import CacheWarning, LocalCache
    from .finder import SKIP_DIRS, find_ledger_files, walk_ledger_files
    from .index import StoredVerdict, VerdictIndex
    from .ledger import (
        LEDGER_FORMAT,
        REDACTED_FIELDS,
        Ledger,
        LedgerDocument,
        LedgerWriteError,
        ledger_filename,
        ledger_location,
        ledger_path,
        redact_entry,
        redact_value,
    )
    from .locks import LockDirWarning, default_lock_dir
    from .spend import SharedSpend

# Each name loads its module on first use: a replay opens verdict files (`ledger`) and needs neither
# the local cache, the index of the whole store, the finder nor the shared spend.
_MODULE_OF = {
    "LEDGER_FORMAT": ".ledger",
    "REDACTED_FIELDS": ".ledger",
    "SKIP_DIRS": ".finder",
    "CacheWarning": ".cache",
    "Ledger": ".ledger",
    "LedgerDocument": ".ledger",
    "LedgerWriteError": ".ledger",
    "LocalCache": ".cache",
    "LockDirWarning": ".locks",
    "SharedSpend": ".spend",
    "StoredVerdict": ".index",
    "VerdictIndex": ".index",
    "canonical_json": "..keys",
    "default_lock_dir": ".locks",
    "find_ledger_files": ".finder",
    "judgment_key": "..keys",
    "ledger_filename": ".ledger",
    "ledger_location": ".ledger",
    "ledger_path": ".ledger",
    "redact_entry": ".ledger",
    "redact_value": ".ledger",
    "walk_ledger_files": ".finder",
    "write_atomically": ".atomic",
}


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, globals())


__all__ = [
    "LEDGER_FORMAT",
    "REDACTED_FIELDS",
    "SKIP_DIRS",
    "CacheWarning",
    "Ledger",
    "LedgerDocument",
    "LedgerWriteError",
    "LocalCache",
    "LockDirWarning",
    "SharedSpend",
    "StoredVerdict",
    "VerdictIndex",
    "canonical_json",
    "default_lock_dir",
    "find_ledger_files",
    "judgment_key",
    "ledger_filename",
    "ledger_location",
    "ledger_path",
    "redact_entry",
    "redact_value",
    "walk_ledger_files",
    "write_atomically",
]
