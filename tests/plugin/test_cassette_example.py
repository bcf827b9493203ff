"""The examples' cassette configuration, with pytest-recording and vcrpy for real: a changed prompt misses.

vcrpy matches a request on method and URI by default, not on its body: after an app's prompt
changed, its old cassette still answered, and CI passed on a stale reply.  The examples' conftest
matches on the body too; this runs an app like the example's under that conftest.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

APP = """
import os

import openai

SYSTEM = {system!r}


def answer(question):
    client = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key=os.environ["APP_API_KEY"], max_retries=0)
    response = client.chat.completions.create(
        model="app-model",
        messages=[{{"role": "system", "content": SYSTEM}}, {{"role": "user", "content": question}}],
        temperature=0,
    )
    return response.choices[0].message.content or ""
"""

TEST = """
import pytest
from app import answer

from pytest_llmjudge import assert_judged


@pytest.mark.vcr
def test_refund_timing():
    question = "How long does a refund take?"
    assert_judged(answer(question), "Says refunds arrive within 5 business days", input=question, threshold=0.7)
"""


@pytest.fixture
def app_project(pytester: pytest.Pytester, openai_server, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The examples' conftest (the demo judge and the cassette configuration), an app on the local server."""
    pytest.importorskip("pytest_recording", reason="the test extra installs pytest-recording")
    for name in ("conftest.py", "demo_judge.py"):
        shutil.copyfile(EXAMPLES / name, pytester.path / name)
    pytester.syspathinsert()
    pytester.makepyfile(app=APP.format(system="Answer questions about refunds."), test_app=TEST)
    openai_server.set_responder(lambda request: "Refunds arrive within 5 business days of the return.")
    monkeypatch.setenv("APP_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("APP_API_KEY", "sk-app-secret-in-a-header")
    return pytester


def test_a_changed_system_prompt_misses_the_old_cassette(app_project, openai_server):
    app_project.runpytest("--judge-mode=auto", "--record-mode=once").assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    (cassette,) = app_project.path.rglob("cassettes/**/*.yaml")
    (interaction,) = yaml.safe_load(cassette.read_text())["interactions"]
    assert "Answer questions about refunds." in interaction["request"]["body"]
    assert "sk-app-secret-in-a-header" not in cassette.read_text(), "the app's key went into the cassette"

    # Unchanged: replayed from the cassette, the app's server is not asked.
    app_project.runpytest("--judge-mode=replay").assert_outcomes(passed=1)
    assert openai_server.request_count == 1

    # The app's prompt changed: the old cassette must not answer it.
    app_project.makepyfile(app=APP.format(system="Answer questions about refunds. Be brief."))
    result = app_project.runpytest("--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*CannotOverwriteExistingCassetteException*"])
    assert openai_server.request_count == 1, "record mode none: nothing went out"
