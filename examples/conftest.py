"""Example suite configuration: a small, clearly labelled DEMO judge for offline runs.

No real LLM can be reached from a fresh checkout, so when no `--judge-model` is given these
examples are judged by `demo_judge` below: a deterministic keyword-overlap scorer written for this
demo, NOT an LLM. Its name ("demo-judge ...") is recorded in every verdict it produced, so its
verdicts can never be mistaken for a real model's.

To judge the examples with a real model instead (needs that provider's API key):

    pytest examples --judge-model=gpt-4o-mini --judge-mode=refresh
"""

from __future__ import annotations

import json
import re

import pytest

STOPWORDS = {
    "says",
    "that",
    "with",
    "from",
    "this",
    "into",
    "every",
    "each",
    "mentions",
    "names",
    "their",
    "within",
    "should",
    "does",
    "have",
    "calls",
}


def _between_tags(text: str, name: str) -> str:
    match = re.search(rf"<{name}-([0-9a-f]+)>\n(.*?)\n</{name}-\1>", text, re.S)
    return match.group(2) if match else ""


def _terms(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return list(dict.fromkeys(w for w in words if (len(w) >= 4 or w.isdigit()) and w not in STOPWORDS))


def demo_judge(messages: list[dict]) -> str:
    """Score = share of the criteria's key terms found in the output (the reference is not read)."""
    prompt = messages[-1]["content"]
    criteria = prompt.split("Criteria:\n", 1)[1].split("\n\n", 1)[0]
    output = _between_tags(prompt, "output").lower()
    wanted = _terms(criteria) or ["(nothing)"]
    found = [t for t in wanted if t in output]
    missing = [t for t in wanted if t not in output]
    reasoning = f"Demo keyword judge: found {found or 'none'} of the key terms; missing {missing or 'none'}."
    return json.dumps({"reasoning": reasoning, "score": round(len(found) / len(wanted), 2)})


demo_judge.name = "demo-judge (keyword overlap, not an LLM)"


@pytest.fixture(scope="session")
def judge_backend(request: pytest.FixtureRequest):
    """The demo judge, unless a real judge model was asked for on the command line or in the environment."""
    if request.config.getoption("judge_model") or request.config.getini("judge_model"):
        return None  # LiteLLM with the configured model
    import os

    if os.environ.get("LLMJUDGE_MODEL"):
        return None
    return demo_judge
