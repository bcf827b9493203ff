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


# -- a support bot's judged tests, recorded twice: one answer got worse, one better -------------------

SUPPORT_BOT = """
from pytest_llmjudge import assert_judged

REFUND = {refund!r}
TONE = {tone!r}

def test_refund():
    assert_judged(REFUND, "Says returns are accepted within 30 days", threshold=0.7)

def test_tone():
    assert_judged(TONE, "Is polite", threshold=0.7)

def test_steady():
    assert_judged("You can track your parcel from the order page.", "Says where to track a parcel", threshold=0.7)
"""

GOOD_REFUND = "You can return shoes within 30 days of delivery."
BAD_REFUND = "Returns close after 14 days."
RUDE = "Read the FAQ."
POLITE = "Happy to help! You can return them within 30 days."

# What the judge says of each answer: (score, reasoning).
SAID = {
    GOOD_REFUND: (0.9, "States the 30-day return window."),
    BAD_REFUND: (0.2, "Gives a 14-day window; the policy allows 30 days."),
    RUDE: (0.3, "Curt: sends the customer away without an answer."),
    POLITE: (0.9, "Friendly, and answers the question."),
    "You can track your parcel from the order page.": (0.8, "Says where to track the parcel."),
}


def support_judge(request: dict) -> str:
    """A local judge server's responder for SUPPORT_BOT: what SAID says of the answer in the prompt."""
    import json

    text = request["messages"][-1]["content"]
    score, reasoning = next(said for answer, said in SAID.items() if answer in text)
    return json.dumps({"reasoning": reasoning, "score": score})
