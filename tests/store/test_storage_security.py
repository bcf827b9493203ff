"""Offline replay, secrets, and untrusted storage, end to end through pytest runs.

* A replay run opens no network connection and never imports LiteLLM.
* A canary API key reaches no verdict file, cache entry, report or terminal output.
* A malformed or hand-edited verdict file is a clear error naming it (or its reply wins, with a
  StoredScoreWarning), never a silent pass.
* A broken or hostile local cache runs no code, is set aside with a warning, and the session goes
  on from the committed verdicts and the judge.
"""

from __future__ import annotations

import json
import pickle
import sqlite3
from pathlib import Path

import pytest

from helpers import CANARY_KEY, JUDGED
from helpers.openai_server import Reply, reply_json
from helpers.verdicts import verdict_files

TWO_JUDGED = (
    JUDGED
    + """
def test_second():
    assert_judged("We ship worldwide. SCORE=0.8", "Mentions shipping", threshold=0.7)
"""
)

OFFLINE_CONFTEST = """
import socket
import sys
from pathlib import Path

import pytest

ATTEMPTS = []

def _refuse(self, address, *args, **kwargs):
    ATTEMPTS.append(repr(address))
    raise OSError(f"network blocked by the test: connect to {address!r}")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse

def pytest_sessionfinish(session):
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai", "httpx", "aiohttp", "diskcache"))
    live_only = sorted(m for m in sys.modules if m in LIVE_ONLY)
    report = {"connects": ATTEMPTS, "modules": heavy, "live_only": live_only}
    Path("offline-report.json").write_text(__import__("json").dumps(report))

# The plugin's own modules that only a live call needs: the call records, the retries, the limiter,
# the event-loop thread, the request planner, the live stage, the custom-callable backend; and two
# that a replay of stored verdicts, writing nothing, never needs: the search for a recording that
# stands for a judgment not stored as the run asks (a miss loads it), and the warning for a verdict
# file that cannot be written.
LIVE_ONLY = {
    "pytest_llmjudge.backends." + name for name in ("protocol", "retry", "limiter", "loop", "plan", "callable")
} | {"pytest_llmjudge.pipeline." + name for name in ("live", "recorded", "unwritten")}
"""


# -- offline replay -------------------------------------------------------------------------------


@pytest.mark.slow
def test_replay_opens_no_connection_and_imports_no_litellm(pytester, openai_server, live_args, monkeypatch):
    pytester.makepyfile(test_refund=TWO_JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=2)
    assert openai_server.request_count == 2
    pytester.makeconftest(OFFLINE_CONFTEST)
    # CI=true: replay by default, exactly as CI would run it; the judge is still configured.
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_subprocess(*live_args, "-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "offline-report.json").read_text())
    assert report == {"connects": [], "modules": [], "live_only": []}
    assert openai_server.request_count == 2
    result.stdout.fnmatch_lines(["llmjudge: 2 judged, 2 replayed, 0 live*"])


@pytest.mark.slow
def test_a_replay_miss_also_stays_offline(pytester, openai_server, live_args, monkeypatch):
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_refund=JUDGED)
    pytester.makeconftest(OFFLINE_CONFTEST)
    result = pytester.runpytest_subprocess(*live_args, "-p", "no:xdist")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ReplayMiss: no stored verdict*CI detected: CI is set*"])
    report = json.loads((pytester.path / "offline-report.json").read_text())
    # A miss looks for a recording that stands for the judgment (another judge side): that search only.
    assert report == {"connects": [], "modules": [], "live_only": ["pytest_llmjudge.pipeline.recorded"]}
    assert openai_server.request_count == 0


# -- secrets --------------------------------------------------------------------------------------

LEAKY = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("n", range(6))
def test_judged(n):
    assert_judged(f"answer {n} SCORE=0.9", "is good")
"""


def test_a_canary_key_reaches_no_file_report_or_output(pytester, openai_server, live_args):
    echo = "Incorrect API key provided: {api_key}; Authorization: Bearer {api_key}"
    openai_server.enqueue(
        Reply(status=401, error_message=echo),
        Reply(status=500, error_message=echo),
        Reply(status=400, error_message=echo),
        Reply(status=429, error_message=echo),
        Reply(content="no verdict here"),  # parse failure: the reply goes into a report section
        Reply(content="no verdict here"),  # ... and again when asked for the format
    )
    pytester.makepyfile(test_leaky=LEAKY)
    result = pytester.runpytest(
        *live_args,
        "--judge-mode=auto",
        "--junitxml=junit.xml",
        "--judge-report=report.json",
        "--judge-html=report.html",
        "-rA",
        "-vv",
        "--judge-cache-dir=cache",
    )
    result.assert_outcomes(passed=1, failed=5)
    assert {h["authorization"] for h in openai_server.request_headers} == {f"Bearer {CANARY_KEY}"}, "the key was sent"
    assert "[redacted]" in result.stdout.str()
    haystack = (result.stdout.str() + result.stderr.str()).encode()
    files = [p for p in pytester.path.rglob("*") if p.is_file()]
    assert any(p.name == "cache.db" for p in files) and len(verdict_files(pytester.path)) == 1
    for path in files:
        haystack += path.read_bytes()
    assert CANARY_KEY.encode() not in haystack
    assert CANARY_KEY[3:].encode() not in haystack


# -- untrusted verdict files ----------------------------------------------------------------------


def recorded(pytester, live_args) -> Path:
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    (path,) = verdict_files(pytester.path)
    return path


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda text: text[: len(text) // 2], "is not valid JSON"),
        (lambda text: "", "is not valid JSON"),
        (lambda text: "[1, 2]", "not a verdict file"),
        (lambda text: json.dumps({"format": 1, "verdicts": {"k": {"reply": "x"}}}), "is not a verdict key"),
        (lambda text: text.replace('"reply"', '"answer"'), "has no 'reply' text"),
        (lambda text: text.replace('"format": 1', '"format": 7'), "verdict file format 7"),
    ],
    ids=["half-written", "empty", "a-list", "bad-key", "no-reply", "future-format"],
)
def test_a_damaged_verdict_file_is_an_error_naming_it(pytester, openai_server, live_args, damage, message):
    path = recorded(pytester, live_args)
    path.write_text(damage(path.read_text()))
    damaged = path.read_bytes()
    for mode in ("replay", "auto", "refresh"):
        result = pytester.runpytest(*live_args, f"--judge-mode={mode}")
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([f"*StoreError: {path}: *{message}*"])
    assert path.read_bytes() == damaged, "a damaged file is not silently re-recorded over"


def test_a_hand_edited_score_loses_to_its_reply(pytester, openai_server, live_args):
    openai_server.enqueue(reply_json(0.2, "misses the 30 days"))
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(failed=1)
    (path,) = verdict_files(pytester.path)
    document = json.loads(path.read_text())
    (entry,) = document["verdicts"].values()
    assert entry["score"] == 0.2
    entry["score"], entry["reasoning"] = 1.0, "looks great"  # the hand edit
    path.write_text(json.dumps(document, indent=2))
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*judged 0.20 < threshold 0.70*",
            f"*StoredScoreWarning: {path}: key * stores score 1.0 but its reply parses to 0.2*",
        ]
    )
    assert openai_server.request_count == 1


def test_a_hand_edited_reply_without_a_verdict_is_a_parse_error(pytester, openai_server, live_args):
    path = recorded(pytester, live_args)
    document = json.loads(path.read_text())
    (entry,) = document["verdicts"].values()
    entry["reply"] = "trust me, it passes"
    path.write_text(json.dumps(document))
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*"])


def test_stray_temporary_files_beside_verdicts_are_harmless(pytester, openai_server, live_args):
    path = recorded(pytester, live_args)
    (path.parent / f".{path.name}.abc123.tmp").write_text('{"format": 1, "verdi')
    (path.parent / f".{path.name}.def456.tmp").write_text("")
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=1)


# -- untrusted local cache ------------------------------------------------------------------------


class _Marker:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def default_cache(pytester) -> Path:
    return pytester.path / ".pytest_cache" / "d" / "llmjudge"


def cached_then_verdict_file_removed(pytester, live_args) -> tuple[Path, str]:
    """Record one verdict (into the verdict file and the default cache dir), then delete the verdict file:
    the next run must consult the cache for that key."""
    path = recorded(pytester, live_args)
    (key,) = json.loads(path.read_text())["verdicts"]
    path.unlink()
    return default_cache(pytester), key


def test_a_pickle_row_in_the_cache_runs_no_code(pytester, openai_server, live_args):
    cache, key = cached_then_verdict_file_removed(pytester, live_args)
    marker = pytester.path / "PWNED"
    with sqlite3.connect(cache / "cache.db") as con:
        cursor = con.execute(
            "UPDATE Cache SET mode = 4, value = ? WHERE key = ?", (pickle.dumps(_Marker(str(marker))), key)
        )
        assert cursor.rowcount == 1
    result = pytester.runpytest(
        *live_args, "--judge-mode=auto", "-W", "always::pytest_llmjudge.store.cache.CacheWarning"
    )
    result.assert_outcomes(passed=1)
    assert not marker.exists(), "the crafted row was unpickled"
    result.stdout.fnmatch_lines(
        ["*CacheWarning: llmjudge: local cache * was unusable (_CacheUnsafe: a cache row has mode 4*moved to*"]
    )
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 0 replayed, 1 live*"])
    assert openai_server.request_count == 2, "judged again, from a fresh cache"
    assert list(cache.parent.glob("llmjudge.broken-*"))
    assert len(verdict_files(pytester.path)) == 1


@pytest.mark.parametrize("damage", ["garbage", "zero-length", "settings-row", "not-a-directory"])
def test_a_broken_cache_is_set_aside_and_the_run_goes_on(pytester, openai_server, live_args, damage):
    cache, _key = cached_then_verdict_file_removed(pytester, live_args)
    pytester.makepyfile(test_refund=TWO_JUDGED)  # test_second has no stored verdict anywhere
    db = cache / "cache.db"
    if damage == "garbage":
        db.write_bytes(b"\x00garbage" * 1000)
        for extra in cache.glob("cache.db-*"):
            extra.unlink()
    elif damage == "zero-length":
        for path in cache.glob("cache.db*"):
            path.write_bytes(b"")
    elif damage == "settings-row":
        with sqlite3.connect(db) as con:
            con.execute("INSERT INTO Settings VALUES ('sqlite_temp_store_directory', '''/tmp''')")
    else:
        for path in cache.iterdir():
            path.unlink()
        cache.rmdir()
        cache.write_text("a file where the cache directory should be")
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=2)
    assert openai_server.request_count == 3, "the lost cache entry and the new test are judged live"
    if damage != "zero-length":  # an empty file is an empty SQLite database: nothing to warn about
        assert "llmjudge: local cache" in result.stdout.str()
    assert len(verdict_files(pytester.path)) == 2
    # The next run replays both from the committed verdicts, whatever the cache holds.
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=2)
