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
    """Score = share of the criteria's key terms found in the output (the reference is not read).

    The steps of the RAG kinds (test_rag.py) get answers of the same kind: the claims of a text are
    its sentences with key terms; a claim is supported when most of its key terms are in the context;
    a statement or a passage is relevant when it holds one of the input's key terms.  A call that asks
    for rulings on a numbered list gets one per item, each as a call of its own would have it.
    """
    prompt = messages[-1]["content"]
    if '"claims"' in messages[0]["content"]:
        text = _between_tags(prompt, "output") or _between_tags(prompt, "expected")
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text)]
        return json.dumps({"claims": [s for s in sentences if _terms(s)]})
    if '"results"' in messages[0]["content"]:
        items = re.findall(r"<(claim|statement|passage)-([0-9a-f]+)>\n(.*?)\n</\1-\2>", prompt, re.S)
        results = [{"id": i, **_demo_ruling(prompt, kind, item)} for i, (kind, _, item) in enumerate(items, 1)]
        return json.dumps({"results": results})
    if "Criteria:\n" not in prompt:
        kind = "claim" if _between_tags(prompt, "claim") else "passage"
        return json.dumps(_demo_ruling(prompt, kind, _between_tags(prompt, kind)))
    criteria = prompt.split("Criteria:\n", 1)[1].split("\n\n", 1)[0]
    output = _between_tags(prompt, "output").lower()
    wanted = _terms(criteria) or ["(nothing)"]
    found = [t for t in wanted if t in output]
    missing = [t for t in wanted if t not in output]
    reasoning = f"Demo keyword judge: found {found or 'none'} of the key terms; missing {missing or 'none'}."
    return json.dumps({"reasoning": reasoning, "score": round(len(found) / len(wanted), 2)})


def _demo_ruling(prompt: str, kind: str, item: str) -> dict[str, str]:
    context = _between_tags(prompt, "context").lower()
    if kind != "passage" and context:
        wanted = _terms(item)
        found = [t for t in wanted if t in context]
        supported = len(found) * 2 >= len(wanted)
        reasoning = f"Demo keyword judge: {len(found)} of the claim's {len(wanted)} key terms are in the context."
        return {"reasoning": reasoning, "verdict": "yes" if supported else "no"}
    found = [t for t in _terms(_between_tags(prompt, "input")) if t in item.lower()]
    reasoning = f"Demo keyword judge: it holds {found or 'none'} of the input's key terms."
    return {"reasoning": reasoning, "verdict": "yes" if found else "no"}


demo_judge.name = "demo-judge (keyword overlap, not an LLM)"


def reply(request: dict) -> str:
    """The demo judge as a server responder (request body -> the judge's reply text)."""
    return demo_judge(request["messages"])
