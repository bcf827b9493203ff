"""A git repository a test builds in its temporary folder, committing what pytest runs recorded there.

Commits are made by the real `git`, with an identity and dates of the test's own, and no configuration
of the caller's (global or system) read, so they are the same wherever the suite runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["GitRepo", "git_environment"]


def git_environment(home: Path) -> dict[str, str]:
    """The environment git runs in for a test: no global or system configuration, a fixed identity and date."""
    return {
        **os.environ,
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "GIT_CEILING_DIRECTORIES": str(home.parent),
    }


class GitRepo:
    """A repository at `path` (made here): `commit` stages everything and commits it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = git_environment(path)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=self.env, capture_output=True, text=True, check=True, timeout=60
        )
        return done.stdout.strip()

    def commit(self, message: str) -> str:
        """Stage everything (.gitignore aside) and commit it; the new commit's id."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")
