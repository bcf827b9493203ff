"""Reading verdict files at a git revision, in bulk: one `git ls-tree` and one `git cat-file --batch`.

A revision's files are listed once (`ls-tree -r -l`, with their sizes) and their bytes read in one
batch, never one process per file.  Paths are the repository's (relative to its top level), and named
literally (`--literal-pathspecs`: a path is never a glob).  Every failure is a `GitError` with a
one-line reason: git missing, not a repository, a revision git does not know.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Blob", "GitError", "Repository"]

# The branches a merge base is looked for against, in this order, after origin's own HEAD.
DEFAULT_BRANCHES = ("origin/main", "origin/master", "main", "master")


class GitError(Exception):
    """git could not answer: the message is one line, for the user."""


@dataclass(frozen=True)
class Blob:
    """A file at a revision: its path in the repository, its mode, its object id and size."""

    path: str
    mode: str
    sha: str
    size: int


class Repository:
    """The git repository `where` is in (its top level is `root`)."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.root = Path(self._git("rev-parse", "--show-toplevel", cwd=where).decode("utf-8", "replace").strip())

    def _git(self, *args: str, cwd: Path | None = None, stdin: bytes | None = None) -> bytes:
        try:
            done = subprocess.run(
                ["git", "--literal-pathspecs", *args],
                cwd=cwd or self.root,
                input=stdin,
                capture_output=True,
                check=False,
            )
        except FileNotFoundError:
            raise GitError("git is not installed (no `git` on PATH): llmjudge diff reads revisions with it") from None
        except OSError as exc:
            raise GitError(f"cannot run git ({exc.__class__.__name__}: {exc.strerror or exc})") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            reason = said[-1] if said else f"exit status {done.returncode}"
            if args[:2] == ("rev-parse", "--show-toplevel"):
                raise GitError(f"{cwd} is not in a git repository ({reason})")
            raise GitError(f"git {args[0]} failed: {reason}")
        return done.stdout

    def _succeeds(self, *args: str) -> str | None:
        """git's output, stripped, or None where it fails."""
        try:
            return self._git(*args).decode("utf-8", "replace").strip()
        except GitError:
            return None

    def commit(self, revision: str) -> str:
        """The commit `revision` names (40 hex digits); a GitError names an unknown one."""
        if revision.startswith("-"):
            raise GitError(f"unknown revision {revision!r}: a revision does not start with '-'")
        found = self._succeeds("rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
        if not found:
            raise GitError(f"unknown revision {revision!r}: git knows no commit by that name in {self.root}")
        return found

    def default_base(self) -> tuple[str, str]:
        """(revision, how it was chosen): the merge base of HEAD with the default branch (origin's HEAD, else
        main or master, remote first), else HEAD itself."""
        self.commit("HEAD")  # a repository with no commit has nothing to compare with: said once, here
        origin = self._succeeds("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
        branches = [origin.removeprefix("refs/remotes/")] if origin else []
        for branch in (*branches, *DEFAULT_BRANCHES):
            if self._succeeds("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}") is None:
                continue
            base = self._succeeds("merge-base", "HEAD", branch)
            if base:
                return base, f"the merge base of HEAD with {branch}"
        return "HEAD", "HEAD (no default branch to find a merge base with)"

    def relative(self, path: Path) -> str:
        """`path` (absolute, or relative to where the command runs) as a path in the repository."""
        absolute = (self.where / path).resolve()
        try:
            return absolute.relative_to(self.root.resolve()).as_posix()
        except ValueError:
            raise GitError(f"{path} is outside the repository {self.root}") from None

    def files(self, commit: str, paths: Sequence[str] = ()) -> list[Blob]:
        """Every file at `commit` under `paths` (repository paths; none: the whole tree), with its size."""
        listed = self._git("ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *paths)
        blobs = []
        for line in listed.split(b"\0"):
            if not line:
                continue
            meta, _, name = line.partition(b"\t")
            mode, kind, sha, size = meta.decode("ascii", "replace").split()
            if kind != "blob":  # a submodule's commit
                continue
            blobs.append(Blob(os.fsdecode(name), mode, sha, int(size) if size.isdigit() else 0))
        return blobs

    def read(self, blobs: Sequence[Blob]) -> list[bytes]:
        """The bytes of every blob, in order, from one `git cat-file --batch`."""
        if not blobs:
            return []
        out = self._git("cat-file", "--batch", stdin="".join(f"{b.sha}\n" for b in blobs).encode("ascii"))
        contents, at = [], 0
        for blob in blobs:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            if len(header) != 3 or header[1] == b"missing":
                raise GitError(f"git cat-file could not read {blob.path} ({blob.sha[:12]})")
            size = int(header[2])
            contents.append(out[end + 1 : end + 1 + size])
            at = end + 1 + size + 1  # the contents end with a newline of git's
        return contents
