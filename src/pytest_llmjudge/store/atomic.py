"""Atomic file writing: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import time
from pathlib import Path

__all__ = ["TEMP_DIR", "ignored_temp_dir", "remove_stale_temps", "remove_temp_dir", "write_atomically"]

# What `tempfile.mkstemp` passes, less its 0600 mode: the file is created 0666 less the umask, as
# `git checkout` makes it, and the system applies the umask (reading it would mean changing it).
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def write_atomically(path: Path, text: str, *, temp_dir: Path | None = None) -> None:
    """Replace `path` with `text` so a reader sees the old file or the new one, never half of one.

    The text is written to a temporary file first: in `temp_dir` when given (a folder on the same
    file system, see `ignored_temp_dir`), else beside `path`.
    """
    for attempt in range(3):
        # A prune may remove an emptied folder between the mkdir and the temporary file: make it again.
        path.parent.mkdir(parents=True, exist_ok=True)
        where = path.parent if temp_dir is None else ignored_temp_dir(temp_dir)
        tmp = os.path.join(where, f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, _CREATE, 0o666)
            break
        except (FileNotFoundError, FileExistsError):
            if attempt == 2:
                raise
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
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
