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
    """Score = share of the criteria's key terms found in the output (the reference is not read).

    The steps of the RAG kinds (test_rag.py) get answers of the same kind: the claims of a text are
    its sentences with key terms; a claim is supported when most of its key terms are in the context;
    a statement or a passage is relevant when it holds one of the input's key terms.
    """
    prompt = messages[-1]["content"]
    if '"claims"' in messages[0]["content"]:
        text = _between_tags(prompt, "output") or _between_tags(prompt, "expected")
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text)]
        return json.dumps({"claims": [s for s in sentences if _terms(s)]})
    if "Criteria:\n" not in prompt:
        return _demo_ruling(prompt)
    criteria = prompt.split("Criteria:\n", 1)[1].split("\n\n", 1)[0]
    output = _between_tags(prompt, "output").lower()
    wanted = _terms(criteria) or ["(nothing)"]
    found = [t for t in wanted if t in output]
    missing = [t for t in wanted if t not in output]
    reasoning = f"Demo keyword judge: found {found or 'none'} of the key terms; missing {missing or 'none'}."
    return json.dumps({"reasoning": reasoning, "score": round(len(found) / len(wanted), 2)})


def _demo_ruling(prompt: str) -> str:
    claim, context = _between_tags(prompt, "claim"), _between_tags(prompt, "context").lower()
    if claim and context:
        wanted = _terms(claim)
        found = [t for t in wanted if t in context]
        supported = len(found) * 2 >= len(wanted)
        reasoning = f"Demo keyword judge: {len(found)} of the claim's {len(wanted)} key terms are in the context."
        return json.dumps({"reasoning": reasoning, "verdict": "yes" if supported else "no"})
    subject = (claim or _between_tags(prompt, "passage")).lower()
    found = [t for t in _terms(_between_tags(prompt, "input")) if t in subject]
    reasoning = f"Demo keyword judge: it holds {found or 'none'} of the input's key terms."
    return json.dumps({"reasoning": reasoning, "verdict": "yes" if found else "no"})


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
