"""The docs' repeated test whose app calls its LLM over HTTP, with vcrpy for real: one cassette open across
the runs records each run's reply in order and replays each run its own, while the judge's calls (through
LiteLLM, to the same local server) stay out of the cassette and go in the verdict file.

The test module is the one docs/suites.md shows, taken from the page, so the page's example is what runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer, score_from_prompt

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[2] / "docs" / "suites.md"

APP = """
import os

import openai


def answer(question):
    client = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app-key", max_retries=0)
    response = client.chat.completions.create(
        model="app-model", messages=[{"role": "user", "content": question}], temperature=0.7
    )
    return response.choices[0].message.content or ""
"""


def docs_module() -> str:
    """The page's example module (the block under its "not run" note, which names this file)."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"<!-- not run: [^>]*test_suite_cassette\.py[^>]*-->\s*```python\n(.*?)```", text, re.S)
    assert found, "docs/suites.md shows the cassette example this test runs"
    return found.group(1)


class App:
    """The app's model: three different replies to the same question, the second of them wrong (the judge
    scores the SCORE=x it finds); the judge for every other request."""

    def __init__(self) -> None:
        self.replies = 0

    def __call__(self, request: dict) -> str:
        if request.get("model") != "app-model":
            return score_from_prompt(request)
        self.replies += 1
        score = 0.2 if self.replies == 2 else 0.9
        return f"Reply {self.replies}: refunds arrive within 5 business days. SCORE={score}"


def test_a_cassette_open_across_the_runs_records_and_replays_each_runs_reply(pytester, monkeypatch):
    pytest.importorskip("vcr", reason="the test extra installs vcrpy")
    pytester.makepyfile(my_app=APP, test_faq_runs=docs_module())
    pytester.syspathinsert()
    with OpenAIServer(App()) as server:
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        judge = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        recorded = pytester.runpytest(*judge, "--judge-mode=auto", "--record-mode=once", "-p", "no:randomly")
        assert server.request_count == 6, "three replies of the app, three verdicts"
    recorded.assert_outcomes(passed=1)
    cassette = (pytester.path / "cassettes" / "test_faq_runs.yaml").read_text()
    assert [f"Reply {n}:" in cassette for n in (1, 2, 3)] == [True, True, True]
    assert "judge-test" not in cassette and "sk-app-key" not in cassette

    # The server is gone: the app's replies come from the cassette, in order, and the verdicts from the file.
    monkeypatch.setenv("CI", "true")
    replayed = pytester.runpytest("-p", "no:randomly", "-rA")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(
        [
            "2 of 3 runs passed; @pytest.mark.judge(runs=3, min_passes=2) needs 2",
            "run 1: judged 0.20 < threshold 0.70",
            "llmjudge: 3 judged, 3 replayed, 0 live*",
        ]
    )
