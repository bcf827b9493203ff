"""Atomic file writing: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path

__all__ = ["current_umask", "write_atomically"]

_umask_lock = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux's /proc).

    Elsewhere it is read by setting and restoring it, under a lock, which a thread creating a file
    at that very moment could notice; files are written only while recording, so that window is rare.
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` so a reader sees the old file or the new one, never half of one.

    The file gets the permissions a newly created file would (0666 less the umask), as
    `git checkout` gives it, not the 0600 of the temporary file it is written through.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), 0o666 & ~current_umask())
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
