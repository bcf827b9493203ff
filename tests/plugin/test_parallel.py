"""Parallel runs: nothing lost, nothing stored twice, nothing paid twice, nothing half-written.

The judge is the in-process local server; xdist workers and subprocess runs reach it over HTTP,
so `server.request_count` counts every call any process made.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.verdicts import verdict_files

pytestmark = pytest.mark.slow

MANY = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("n", range({n}))
def test_judged(n):
    assert_judged(f"answer number {{n}} SCORE=0.9", "is a numbered answer")
"""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"a key is stored twice in one file: {keys}"
    return dict(pairs)


def stored_keys(root: Path) -> list[str]:
    """Every stored verdict key; each file must parse, with no key twice in one object."""
    keys = []
    for path in verdict_files(root):
        document = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates)
        assert document["format"] == 1 and document["test"].startswith("test_")
        keys.extend(document["verdicts"])
    return keys


@pytest.mark.parametrize("workers", [2, 4])
def test_200_verdicts_recorded_in_parallel_are_all_stored_once_and_replay(pytester, openai_server, live_args, workers):
    pytester.makepyfile(test_many=MANY.format(n=200))
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "-n", str(workers), "-p", "xdist")
    result.assert_outcomes(passed=200)
    result.stdout.fnmatch_lines(["llmjudge: 200 judged, 0 replayed, 200 live, 0 below threshold, 0 unparseable*"])
    assert openai_server.request_count == 200, "one call per verdict: none repeated"
    files = verdict_files(pytester.path)
    keys = stored_keys(pytester.path)
    assert len(files) == 200 and len(keys) == 200 and len(set(keys)) == 200
    assert not [p for p in pytester.path.rglob("*.tmp")], "no temporary file left behind"
    # The same suite, replayed offline in parallel, finds every verdict.
    result = pytester.runpytest(*live_args, "--judge-mode=replay", "-n", str(workers), "-p", "xdist")
    result.assert_outcomes(passed=200)
    result.stdout.fnmatch_lines(["llmjudge: 200 judged, 200 replayed, 0 live*"])
    assert openai_server.request_count == 200


BARRIER_CONFTEST = """
import os
import time
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def _start_together():
    # Import LiteLLM first, then wait for the other worker: both first judgments start together.
    from pytest_llmjudge.backends.litellm_import import import_litellm

    import_litellm()
    Path(f"ready-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}").touch()
    deadline = time.monotonic() + 60
    while len(list(Path('.').glob('ready-*'))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
"""

SAME_PROMPT = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("n", range(8))
def test_same(n):
    assert_judged("the very same answer SCORE=0.9", "the very same criteria")
"""


def test_two_workers_judging_the_same_prompt_pay_once(pytester, openai_server, live_args):
    openai_server.latency_s = 1.0  # both workers' first calls overlap: one waits for the other's lock
    pytester.makeconftest(BARRIER_CONFTEST)
    pytester.makepyfile(test_same=SAME_PROMPT)
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "-n", "2", "-p", "xdist", "--dist=load")
    result.assert_outcomes(passed=8)
    assert openai_server.request_count == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["llmjudge: 8 judged, 0 replayed, 7 cached, 1 live*"])
    assert len(verdict_files(pytester.path)) == 8, "each test's committed file holds the shared verdict"
    assert len(set(stored_keys(pytester.path))) == 1


# -- interrupted runs ----------------------------------------------------------------------------

PID_CONFTEST = """
import os
from pathlib import Path

def pytest_configure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        Path(f"pid-{worker}").write_text(str(os.getpid()))
"""


def _default_sigint() -> None:
    # A suite started in the background by a shell without job control inherits SIGINT ignored, and so would
    # the run: it must take the signal these tests send, as a run started from a terminal does.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_run(pytester, live_args, *args: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *live_args, "--judge-mode=auto", *args]
    return subprocess.Popen(
        command,
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_default_sigint,  # only signal.signal between fork and exec
    )


def wait_for_verdicts(pytester, proc: subprocess.Popen, count: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while len(verdict_files(pytester.path)) < count:
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "the run made too little progress"
        time.sleep(0.05)


def assert_every_file_whole(root: Path) -> int:
    keys = stored_keys(root)  # raises on any half-written file
    assert len(keys) == len(set(keys))
    return len(keys)


def test_sigint_mid_recording_leaves_whole_files_and_the_next_run_proceeds(pytester, openai_server, live_args):
    openai_server.latency_s = 0.05
    pytester.makepyfile(test_many=MANY.format(n=80))
    proc = start_run(pytester, live_args, "-p", "no:xdist")
    try:
        wait_for_verdicts(pytester, proc, 15)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, output
    assert "KeyboardInterrupt" in output
    stored = assert_every_file_whole(pytester.path)
    assert 15 <= stored < 80
    calls_before = openai_server.request_count
    # A stray temporary file, as a killed writer would leave it, does not disturb the next run.
    first = verdict_files(pytester.path)[0]
    (first.parent / f".{first.name}.x1y2z3.tmp").write_text('{"format": 1, "verd')
    openai_server.latency_s = 0.0
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "-p", "no:xdist")
    result.assert_outcomes(passed=80)
    assert openai_server.request_count == calls_before + (80 - stored), "every stored verdict was kept"
    assert assert_every_file_whole(pytester.path) == 80


def test_a_killed_worker_leaves_whole_files_and_the_next_run_proceeds(pytester, openai_server, live_args):
    openai_server.latency_s = 0.05
    pytester.makeconftest(PID_CONFTEST)
    pytester.makepyfile(test_many=MANY.format(n=80))
    proc = start_run(pytester, live_args, "-n", "2", "-p", "xdist")
    try:
        wait_for_verdicts(pytester, proc, 15)
        victim = int((pytester.path / "pid-gw0").read_text())
        os.kill(victim, signal.SIGKILL)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "crashed" in output or "node down" in output, output[-3000:]
    stored = assert_every_file_whole(pytester.path)
    assert stored >= 15
    openai_server.latency_s = 0.0
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=80)
    assert assert_every_file_whole(pytester.path) == 80
    result = pytester.runpytest(*live_args, "--judge-mode=replay", "-p", "no:xdist")
    result.assert_outcomes(passed=80)
