"""The verdict-file merge driver moved to `pytest_llmjudge.store.merge`; this name is kept for imports
and `python -m pytest_llmjudge.ledger_merge %O %A %B` driver commands already configured."""

from __future__ import annotations

import sys

from .store.merge import (
    ATTRIBUTES_LINE,
    DRIVER_COMMAND,
    DRIVER_NAME,
    Conflict,
    MergeResult,
    install,
    install_instructions,
    main,
    merge_ledgers,
)

__all__ = [
    "ATTRIBUTES_LINE",
    "DRIVER_COMMAND",
    "DRIVER_NAME",
    "Conflict",
    "MergeResult",
    "install",
    "install_instructions",
    "main",
    "merge_ledgers",
]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
