"""A verdict file that cannot be written: one plain warning per judgment or generation, saying what
was not stored and where it is kept.

The store is blocked by a file where its directory should be, so the real write fails the way a
read-only tree does (no monkeypatched write).
"""

from __future__ import annotations

import re

import pytest

import pytest_llmjudge.assertions  # the outer session owns it, so in-process runs share one error class
import pytest_llmjudge.generation  # noqa: F401 - likewise
from helpers import MODEL

JUDGED = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
"""

GENERATED = """
from pytest_llmjudge import generate

def test_refund():
    assert generate("Can I return shoes after 20 days?")
"""

KEPT = "It is kept in the local cache, and the next run in auto mode with a writable store writes it"
NOT_KEPT = "No local cache is in use (pytest's cache provider is off), so it must be {again} again"


def unwritable_warnings(stdout: str) -> list[str]:
    """The text of every VerdictFileWriteWarning in pytest's warnings summary."""
    return [
        line.split("VerdictFileWriteWarning: ", 1)[1]
        for line in stdout.splitlines()
        if "VerdictFileWriteWarning: " in line
    ]


@pytest.mark.parametrize(
    ("source", "what", "again"), [(JUDGED, "verdict", "judged"), (GENERATED, "generation", "generated")]
)
@pytest.mark.parametrize("cache", [True, False])
def test_an_unwritable_verdict_file_is_one_plain_warning(
    pytester, openai_server, live_args, source, what, again, cache
):
    # Given a test whose verdict file cannot be written (a file where the store directory should be),
    pytester.makepyfile(test_refund=source)
    (pytester.path / "blocked").write_text("a file where the store directory should be")
    flags = [f"--generate-model={MODEL}", f"--generate-api-base={openai_server.base_url}"]
    flags += [] if cache else ["-p", "no:cacheprovider"]
    result = pytester.runpytest(*live_args, *flags, "--judge-mode=auto", "--judge-store=blocked")
    # when it runs, it passes on the reply it paid for,
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    # and says once, in one sentence, what was not stored, and where it is (the OS's reason in brackets).
    path = pytester.path / "blocked" / "test_refund" / "test_refund.json"
    where = KEPT if cache else NOT_KEPT.format(again=again)
    expected = (
        re.escape(f"llmjudge: cannot write the verdict file {path} (")
        + r"NotADirectoryError: [^()]*"
        + re.escape(f"); the {what} (key ")
        + "[0-9a-f]{12}"
        + re.escape(f") was not stored there. {where}: make {path.parent} writable, ")
        + re.escape("or point --judge-store at a writable directory.")
    )
    (warning,) = unwritable_warnings(result.stdout.str())
    assert re.fullmatch(expected, warning), warning
    assert warning.count("cannot write") == 1


@pytest.mark.parametrize(("source", "what"), [(JUDGED, "verdict"), (GENERATED, "generation")])
def test_an_entry_found_elsewhere_that_cannot_be_copied_says_where_it_still_is(
    pytester, openai_server, live_args, source, what
):
    # Given a reply recorded under another test's name (a renamed test),
    pytester.makepyfile(test_refund=source.replace("def test_refund", "def test_old"))
    flags = [f"--generate-model={MODEL}", f"--generate-api-base={openai_server.base_url}", "--judge-mode=auto"]
    pytester.runpytest(*live_args, *flags).assert_outcomes(passed=1)
    old = pytester.path / "judge_verdicts" / "test_refund" / "test_old.json"
    assert old.exists()
    # when the renamed test finds it there but cannot copy it into its own file,
    pytester.makepyfile(test_refund=source)
    pytester.makeconftest(
        """
        import pytest
        from pytest_llmjudge.store.verdict_file import VerdictFile, VerdictFileWriteError

        @pytest.fixture(autouse=True)
        def read_only_file(monkeypatch):
            def refuse(self, entries, *args, copies=None, **kwargs):
                key = next(iter(entries or copies))
                raise VerdictFileWriteError(self.path, key, "PermissionError: Permission denied")
            monkeypatch.setattr(VerdictFile, "put_many", refuse)
        """
    )
    result = pytester.runpytest(*live_args, *flags)
    # it passes on the stored reply, without a call, and says where the reply still is.
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    path = pytester.path / "judge_verdicts" / "test_refund" / "test_refund.json"
    expected = (
        re.escape(
            f"llmjudge: cannot write the verdict file {path} (PermissionError: Permission denied); the {what} (key "
        )
        + "[0-9a-f]{12}"
        + re.escape(
            f") was not stored there. It is still stored in {old}, and the next run in auto mode with a writable "
            f"store copies it: make {path.parent} writable, or point --judge-store at a writable directory."
        )
    )
    (warning,) = unwritable_warnings(result.stdout.str())
    assert re.fullmatch(expected, warning), warning
