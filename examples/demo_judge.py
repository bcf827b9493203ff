"""The DEMO judge: a deterministic keyword-overlap scorer written for these examples, NOT an LLM.

The examples' tests use it as their `judge_backend` (see conftest.py) when no judge model is
configured.  `llmjudge calibrate`, which runs outside pytest, reaches it as a model instead: its
verdicts (judge_verdicts/calibration/) were recorded against a small local OpenAI-compatible server
answering with `reply` below, under a model named `openai/demo-judge-keyword-overlap-not-an-llm`.
To record them again (two terminals, from the repository root):

    PYTHONPATH=examples python tests/helpers/openai_server.py --port 8766 --responder demo_judge:reply
    cd examples && llmjudge calibrate calibration_labels.jsonl --threshold 0.7 --judge-mode=refresh \
        --judge-model=openai/demo-judge-keyword-overlap-not-an-llm --judge-api-base=http://127.0.0.1:8766/v1
"""

from __future__ import annotations

import json
import re

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


def reply(request: dict) -> str:
    """The demo judge as a server responder (request body -> the judge's reply text)."""
    return demo_judge(request["messages"])
