"""Atomic file writing: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["TEMP_DIR", "current_umask", "ignored_temp_dir", "remove_stale_temps", "remove_temp_dir", "write_atomically"]

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


def write_atomically(path: Path, text: str, *, temp_dir: Path | None = None) -> None:
    """Replace `path` with `text` so a reader sees the old file or the new one, never half of one.

    The text is written to a temporary file first: in `temp_dir` when given (a folder on the same
    file system, see `ignored_temp_dir`), else beside `path`.  The file gets the permissions a
    newly created file would (0666 less the umask), as `git checkout` gives it, not the 0600 of the
    temporary file it is written through.
    """
    for attempt in range(3):
        # A prune may remove an emptied folder between the mkdir and the temporary file: make it again.
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            where = path.parent if temp_dir is None else ignored_temp_dir(temp_dir)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=where)
            break
        except FileNotFoundError:
            if attempt == 2:
                raise
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


# Temporary files of a write in progress; one left by a killed process is removed once this old.
TEMP_DIR = ".llmjudge-tmp"
STALE_TEMP_S = 600.0
_IGNORE_ALL = "# temporary files of pytest-llmjudge's writes: never committed\n*\n"


def ignored_temp_dir(folder: Path) -> Path:
    """`folder`, made with a `.gitignore` that ignores everything in it (as pytest's cache does), and
    swept of stale temporary files: a kill mid-write leaves none for `git add`."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir()
    ignore = folder / ".gitignore"
    if not ignore.is_file():
        ignore.write_text(_IGNORE_ALL, encoding="utf-8")
    # A name scan each write, far cheaper than the write's fsync; only dot-files ending .tmp are looked at.
    remove_stale_temps(folder)
    remove_stale_temps(folder.parent)  # written beside the files by earlier versions
    return folder


def remove_stale_temps(folder: Path, max_age_s: float = STALE_TEMP_S) -> list[Path]:
    """Remove the temporary files of writes (`.NAME.XXXX.tmp`) in `folder` older than `max_age_s`:
    left by a process killed mid-write (a write in progress takes milliseconds).  Returns them."""
    removed: list[Path] = []
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(folder) as found:
        for each in found:
            if not (each.name.startswith(".") and each.name.endswith(".tmp")):
                continue
            with contextlib.suppress(OSError):
                info = each.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and now - info.st_mtime > max_age_s:
                    os.unlink(each.path)
                    removed.append(Path(each.path))
    return removed


def remove_temp_dir(folder: Path) -> None:
    """Remove the stale temporary files in `folder`, and the folder itself when nothing else is left."""
    remove_stale_temps(folder)
    with contextlib.suppress(OSError):
        if {p.name for p in folder.iterdir()} <= {".gitignore"}:
            (folder / ".gitignore").unlink(missing_ok=True)
            folder.rmdir()
