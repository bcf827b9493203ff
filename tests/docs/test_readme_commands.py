"""The README's commands, run as written: record with its local-judge command line against a local judge
server, commit with its git lines, clone, then replay with its replay command and with plain `pytest`,
the server gone.  What the README says cannot drift from what works.

The only substitutions are the README's own placeholders: `<name>` (the model a local server serves)
and its example api base (`http://127.0.0.1:8080/v1`), for the test server's; `pytest` is run as this
interpreter's `python -m pytest`.  No key variable is set: a local judge needs none.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.openai_server import OpenAIServer, reply_json

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, re.S)


def _line(start: str) -> str:
    """The one command line of a shell block of the README that starts with `start`."""
    found = [
        line.split("  #")[0].strip()
        for lang, code in BLOCKS
        if lang == "sh"
        for line in code.splitlines()
        if line.startswith(start)
    ]
    assert len(found) == 1, (start, found)
    return found[0]


def _run(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assignments = {}
    while "=" in words[0] and not words[0].startswith("-"):  # `CI=true pytest`
        name, _, value = words.pop(0).partition("=")
        assignments[name] = value
    if words[0] == "pytest":
        words = [sys.executable, "-m", "pytest", *words[1:]]
    environ = {**os.environ, **env, **assignments, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    environ |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(words, cwd=cwd, env=environ, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_readme_commands_record_commit_clone_and_replay_as_written(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local judge needs no key
    first_test = next(code for lang, code in BLOCKS if lang == "python" and code.startswith("# tests/"))
    project = tmp_path / "project"
    path = project / first_test.splitlines()[0].removeprefix("# ").strip()
    path.parent.mkdir(parents=True)
    path.write_text(first_test)
    for setup in ("git init -q", "git add tests", "git commit -qm tests"):  # the project's tests, committed before
        assert _run(setup, project).returncode == 0, setup

    record = _line("pytest --judge-model=openai/<name> --judge-api-base=")
    assert "--judge-max-tokens" in record, "the README's local-judge line sets a flag the replay never repeats"
    with OpenAIServer(lambda request: reply_json(0.9, "Gives the 30-day window, as asked.")) as server:
        command = record.replace("<name>", "judge-test").replace("http://127.0.0.1:8080/v1", server.base_url)
        recorded = _run(command, project)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        assert "1 judged, 0 replayed, 1 live" in recorded.stdout
        assert server.request_count == 1
        for step in (_line("git add tests/judge_verdicts"), _line("git commit -m")):
            done = _run(step, project)
            assert done.returncode == 0, done.stdout + done.stderr
    clone = tmp_path / "clone"
    assert _run(f"git clone -q {project} {clone}", tmp_path).returncode == 0

    for replay in (_line("CI=true pytest"), "pytest"):  # the README's replay command, and a teammate's
        replayed = _run(replay, clone)
        assert replayed.returncode == 0, replay + "\n" + replayed.stdout + replayed.stderr
        assert "1 judged, 1 replayed, 0 live" in replayed.stdout, replayed.stdout
