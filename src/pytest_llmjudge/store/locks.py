"""The cross-process lock of a verdict file: held while it is re-read and rewritten, then removed.

Lock files live in one private directory of the temp dir (`lock_dir`), named by a hash of the
verdict file's path, never beside the verdict files.  The holder removes its lock file before it
lets go; a waiter that wins the lock checks it still holds the file at that name (same inode).

The directory is trusted only when it is a real directory of this user that no one else can write
to (in the shared temp dir anyone can create that name first); otherwise the locks move to the
user's cache directory, with a `LockDirWarning` naming what was refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from ..errors import Redacted

try:
    import fcntl
except ImportError:  # Windows: filelock's lock, whose files stay
    fcntl = None  # type: ignore[assignment]

TAKES_LOCKS = fcntl is not None  # whether `take_lock` works here

__all__ = [
    "TAKES_LOCKS",
    "HeldLock",
    "LockDirWarning",
    "LockTimeout",
    "default_lock_dir",
    "lock_path",
    "take_lock",
    "verdict_file_lock",
]


class LockDirWarning(Redacted, UserWarning):
    """The lock directory in the temp dir could not be trusted; another one is used."""


class LockTimeout(Exception):
    """Another process held a verdict file's lock for longer than the timeout."""


# How long a writer waits for another process's write of the same file (each takes milliseconds).
LOCK_TIMEOUT_S = 120.0
_POLL_S = 0.005
_POLL_MAX_S = 0.05

_checked: dict[Path, Path] = {}  # a lock directory asked for -> the one used (checked once per process)
_checked_lock = threading.Lock()


def default_lock_dir() -> Path:
    """The directory of the verdict files' lock files: private to this user, in the temp dir."""
    uid = getattr(os, "getuid", None)
    suffix = str(uid()) if uid is not None else (os.environ.get("USERNAME") or "user")
    safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in suffix)
    return Path(tempfile.gettempdir()) / f"pytest-llmjudge-locks-{safe}"


def _fallback_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pytest-llmjudge" / "locks"


def _distrust(folder: Path) -> str | None:
    """Why `folder` cannot hold this user's locks (made private when missing), or None."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        return f"it belongs to another user (uid {info.st_uid})"
    if getuid is not None and info.st_mode & 0o022:
        return f"other users can write to it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def lock_dir(wanted: Path | None = None) -> Path:
    """The lock directory to use for `wanted` (default: `default_lock_dir()`), checked once per process;
    OSError when neither it nor the fallback can be used."""
    folder = default_lock_dir() if wanted is None else wanted
    with _checked_lock:
        used = _checked.get(folder)
        if used is None:
            problem = _distrust(folder)
            used = folder
            if problem is not None:
                used = _fallback_dir()
                if _distrust(used) is not None:
                    raise PermissionError(f"the lock directory {folder} is not safe to use ({problem})")
                with contextlib.suppress(Warning):  # warnings as errors: the write still goes ahead
                    warnings.warn(
                        LockDirWarning(
                            f"llmjudge: not using the lock directory {folder} ({problem}); "
                            f"verdict files are locked in {used} instead (remove {folder} to use it again)"
                        ),
                        stacklevel=4,
                    )
            _checked[folder] = used
            _sweep(used)
    return used


def lock_path(path: Path, wanted: Path | None = None) -> Path:
    """The lock file of verdict file `path` (in `lock_dir(wanted)`)."""
    name = os.path.normcase(str(path.resolve()))
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return lock_dir(wanted) / f"{digest}.lock"


class HeldLock:
    """A lock file this process holds; `release` removes the file, then lets go."""

    __slots__ = ("_fd", "path")

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Remove the lock file while still holding it, then let go; releasing twice does nothing."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(fd)


def take_lock(where: Path, deadline: float) -> HeldLock:
    """Lock the file at `where` (created when missing), polling until `deadline` (time.monotonic);
    `LockTimeout` at the deadline, OSError when the file cannot be made.  Needs `fcntl`."""
    assert fcntl is not None, "take_lock needs fcntl"
    pause = _POLL_S
    while True:
        fd = os.open(where, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(str(where)) from None
                    time.sleep(pause)
                    pause = min(pause * 2, _POLL_MAX_S)
            if _same_file(fd, where):
                return HeldLock(where, fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the holder removed it before letting go: lock the one at that name now


@contextlib.contextmanager
def verdict_file_lock(path: Path, wanted: Path | None = None, timeout: float = LOCK_TIMEOUT_S) -> Iterator[Path]:
    """Hold the cross-process lock of verdict file `path`, yielding the lock file; `LockTimeout` after
    `timeout` seconds, OSError when no lock file can be made."""
    where = lock_path(path, wanted)
    if fcntl is None:
        from filelock import FileLock, Timeout

        try:
            with FileLock(str(where), timeout=timeout):
                yield where
        except Timeout:
            raise LockTimeout(str(where)) from None
        return
    deadline = time.monotonic() + timeout
    try:
        held = take_lock(where, deadline)
    except FileNotFoundError:  # the directory went since it was checked (a temp-dir cleaner): check it again
        with _checked_lock:
            _checked.pop(default_lock_dir() if wanted is None else wanted, None)
        where = lock_path(path, wanted)
        held = take_lock(where, deadline)
    try:
        yield where
    finally:
        held.release()


def _same_file(fd: int, where: Path) -> bool:
    try:
        named = os.stat(where, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _sweep(folder: Path) -> None:
    """Remove the lock files no one holds (left by a killed process, or by an earlier version)."""
    if fcntl is None:
        return
    with contextlib.suppress(OSError), os.scandir(folder) as found:
        for each in found:
            if each.name.endswith(".lock"):
                with contextlib.suppress(OSError, LockTimeout):
                    take_lock(Path(each.path), deadline=0.0).release()  # held: LockTimeout at once
