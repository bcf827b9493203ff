"""The exceptions the plugin raises.

Every error the plugin raises is a `JudgeError`, except `JudgmentFailed`, which is an
`AssertionError` so that a low score reads like any failed assertion.  Messages never
contain the judge's raw reply, and every message is redacted when shown (`Redacted`):
replies carry user data into error trackers, and keys must never leave the environment.
`first_line` is how an error reads in the plugin's one-line reports.
"""

from __future__ import annotations

import sys


class Redacted:
    """Text of the plugin's that leaves it (an error's, a warning's) is redacted when shown.

    Whatever built the message (a value of the case, a tool's arguments, a provider's error text),
    `str()` is what pytest prints, JUnit XML and error trackers record and reports copy: it is the
    one boundary every message passes, so a message of tomorrow is redacted too."""

    def __str__(self) -> str:
        from .redact import redact  # on first show: a run that raises nothing never loads it

        return redact(super().__str__())


class JudgeError(Redacted, Exception):
    """Base class of every error the plugin raises, other than `JudgmentFailed`."""

    # What reports call this error, and count it as (a judgment record's `error_kind`).
    kind = "error"


class JudgmentFailed(Redacted, AssertionError):
    """A judged score fell under its threshold.  Carries the `Verdict` as `.verdict`."""

    def __init__(self, message: str, verdict: object = None, *, comparison: object = None) -> None:
        super().__init__(message)
        self.verdict = verdict
        self.comparison = comparison  # a pairwise comparison that was lost (assert_better)


class ReplayMiss(JudgeError):
    """Replay mode, and no stored verdict exists for this judgment."""

    kind = "missing"

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


class VerdictParseError(JudgeError, ValueError):
    """The judge's reply holds no usable score or verdict.

    The message describes the problem without quoting the reply; the reply itself is on
    `.text` (for a report section), never in `str(error)`.  `cut_off`: the reply ran on to the token
    cap (finish_reason=length), so whatever it holds is no verdict.
    """

    kind = "unparseable"

    def __init__(self, message: str, text: str = "", *, key: str = "", cut_off: bool = False) -> None:
        super().__init__(message)
        self.text = text
        self.key = key
        self.cut_off = cut_off


class BackendError(JudgeError):
    """The judge could not be reached, or refused the request."""

    kind = "judge error"

    def __init__(
        self, message: str, *, retryable: bool = False, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after  # seconds the server asked us to wait, where it said


class BudgetExceeded(JudgeError):
    """`--judge-budget` is spent; no further live judge calls are made."""

    kind = "over budget"


class StoreError(JudgeError):
    """A stored verdict file or cache entry is unreadable or malformed."""


def first_line(exc: BaseException, *, default: str | None = None) -> str:
    """The first line of `exc`'s message, for a one-line report; `default` (else the class name) when it has none."""
    text = str(exc).strip()
    if text:
        return text.splitlines()[0]
    return type(exc).__name__ if default is None else default


def command_error(command: str, message: str) -> int:
    """Say a command's error as its one line on stderr (`llmjudge <command>: error: ...`, its whitespace folded);
    the exit status of bad input, 2."""
    print(f"llmjudge {command}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


# Show these as `pytest_llmjudge.X` in tracebacks and reprs: that is where users import them.
for _cls in (JudgeError, JudgmentFailed, ReplayMiss, VerdictParseError, BackendError, BudgetExceeded, StoreError):
    _cls.__module__ = "pytest_llmjudge"
del _cls
