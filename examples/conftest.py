"""Example suite configuration: a small, clearly labelled DEMO judge for offline runs.

No real LLM can be reached from a fresh checkout, so when no `--judge-model` is given these
examples are judged by `demo_judge` (demo_judge.py): a deterministic keyword-overlap scorer written for this
demo, NOT an LLM. Its name ("demo-judge ...") is recorded in every verdict it produced, so its
verdicts can never be mistaken for a real model's.

To judge the examples with a real model instead (needs that provider's API key):

    pytest examples --judge-model=gpt-4o-mini --judge-mode=refresh

`vcr_config` below is the HTTP cassettes' configuration (pytest-recording) for every example.
"""

from __future__ import annotations

import pytest
from demo_judge import demo_judge


@pytest.fixture(scope="session")
def judge_backend(request: pytest.FixtureRequest):
    """The demo judge, unless a real judge model was asked for on the command line or in the environment."""
    if request.config.getoption("judge_model") or request.config.getini("judge_model"):
        return None  # LiteLLM with the configured model
    import os

    if os.environ.get("LLMJUDGE_MODEL"):
        return None
    return demo_judge


@pytest.fixture(scope="session")
def vcr_config():
    """Cassettes for the app's own LLM calls (pytest-recording; record the first time with --record-mode=once).

    vcrpy matches a request on method and URI by default: every prompt to one endpoint would be
    answered by the first one recorded.  Matching on the body too makes a changed prompt (a new
    system message, another temperature) miss the cassette instead of replaying a stale reply.
    """
    return {
        "filter_headers": ["authorization"],  # never a key in a committed cassette
        "match_on": ["method", "scheme", "host", "port", "path", "query", "body"],
    }
