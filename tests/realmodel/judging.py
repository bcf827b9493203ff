"""What the real-model tests share: the plugin's options for the real server, and reading what a run did.

Imported as `realmodel.judging` (the tests directory is on pytest's pythonpath).
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.verdicts import stored_entries

__all__ = [
    "MODEL",
    "TIMEOUT_S",
    "assert_no_crash_inside_the_plugin",
    "failure_kind",
    "judged_reply",
    "real_args",
    "summary_line",
    "unparseable_reply",
]

MODEL = "openai/smollm2"  # the alias the server is started with (conftest.py)
TIMEOUT_S = 240  # a 135M model on two shared cores; a runaway reply may fill the context

ERROR_NAMES = ("VerdictParseError", "BackendError", "JudgmentFailed")


def real_args(api_base: str, *extra: str) -> list[str]:
    """pytest options that send judgments to the real server: no retries, one judgment's deadline."""
    return [
        f"--judge-model={MODEL}",
        f"--judge-api-base={api_base}",
        f"--judge-timeout={TIMEOUT_S}",
        "--judge-retries=0",
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def summary_line(output: str) -> str:
    found = (line for line in output.splitlines() if re.match(r"llmjudge: \d+ judged", line))
    return next(found, "(no summary line)")


def unparseable_reply(output: str) -> str | None:
    """The reply the plugin shows under "llmjudge: unparseable judge reply (key ...)", if any."""
    match = re.search(r"llmjudge: unparseable judge reply \(key [^)]*\)[^\n]*\n(.*?)(?:\n[-=_]{5,}|\Z)", output, re.S)
    return match.group(1).strip() if match else None


def assert_no_crash_inside_the_plugin(output: str) -> None:
    """A failure is the plugin's own error, not an exception escaping from its code."""
    assert "INTERNALERROR" not in output, output
    # Tracebacks the user sees end in the test's own frames: no frame inside the package's modules.
    assert not re.search(r"pytest_llmjudge[/\\]\w+(?:[/\\]\w+)?\.py:\d+", output), output


def failure_kind(output: str) -> str | None:
    for name in ERROR_NAMES:
        if re.search(rf"^E\s+.*{name}", output, re.M):
            return name
    return None


def judged_reply(root: Path, output: str) -> tuple[str, str | None]:
    """("stored", reply) from the verdict file, else ("unparseable", the reply the failure shows)."""
    entries = stored_entries(root)
    if entries:
        (entry,) = entries
        return "stored", entry["reply"]
    return "unparseable", unparseable_reply(output)
