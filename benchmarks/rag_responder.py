"""A responder for tests/helpers/openai_server.py that answers the RAG prompts of pytest-llmjudge,
DeepEval and ragas alike, for the RAG cost benchmark (bench_rag.py).

Every tool gets answers of the same kind, so what differs between them is what they ask:
- a list of claims, statements or truths: the sentences of the text the prompt asks about;
- a ruling on an item (a claim against the context, a statement or a passage against the question):
  "yes" when at least half of the item's key terms are in the context, or two of them in the
  question, with a one-sentence reason of the same length for every tool;
- a question generated from an answer (ragas' answer relevancy): the answer's first sentence, asked;
- a closing reason (DeepEval): one sentence.

Every request is logged, as one JSON line, to the file named by `RAG_BENCH_LOG` (when set): its
arrival time, which tool's prompt it was, and the characters of its messages and of the reply.
"""

from __future__ import annotations

import ast
import json
import os
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

_LOG_LOCK = threading.Lock()
_STOP = {"the", "and", "that", "with", "from", "this", "your", "have", "will", "what", "when", "does", "which", "into"}
REASON = "The score follows from the verdicts: the supported items count for it, the others against it."


def terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if (len(w) > 3 or w.isdigit()) and w not in _STOP}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if terms(s)]


def ruled(item: str, basis: str, what: str) -> tuple[bool, str]:
    """A ruling on `item` against `basis`: against a context, yes when at least half of its key terms are
    there (supported); against a question, yes when it shares two of them with it (relevant)."""
    wanted = terms(item)
    found = wanted & terms(basis)
    yes = bool(wanted) and len(found) >= (min(2, len(wanted)) if what == "question" else len(wanted) / 2)
    verb = "supports" if yes else "does not support"
    return yes, f"The {what} {verb} this: {len(found)} of its {len(wanted)} key terms appear in it."


def _after(text: str, label: str, end: str = "\n\nJSON:") -> str:
    """The text between the last `label` and the next `end` (all of it where there is no `end`)."""
    at = text.rfind(label)
    if at < 0:
        return ""
    rest = text[at + len(label) :]
    stop = rest.find(end)
    return (rest if stop < 0 else rest[:stop]).strip()


# -- pytest-llmjudge: the data is fenced in tags carrying a nonce -------------------------------------


def _fenced(text: str, name: str) -> str:
    found = re.search(rf"<{name}-([0-9a-f]+)>\n(.*?)\n</{name}-\1>", text, re.S)
    return found.group(2) if found else ""


def ours(system: str, user: str) -> str:
    if '"claims": ["<claim>"' in system:
        return json.dumps({"claims": sentences(_fenced(user, "output") or _fenced(user, "expected"))})
    context, asked = _fenced(user, "context"), _fenced(user, "input") + " " + _fenced(user, "expected")
    items = re.findall(r"<(claim|statement|passage)-([0-9a-f]+)>\n(.*?)\n</\1-\2>", user, re.S)

    def one(kind: str, item: str) -> dict[str, str]:
        basis, what = (context, "context") if context and kind != "passage" else (asked, "question")
        yes, why = ruled(item, basis, what)
        return {"reasoning": why, "verdict": "yes" if yes else "no"}

    if '"results"' in system:
        return json.dumps({"results": [{"id": i, **one(k, item)} for i, (k, _, item) in enumerate(items, 1)]})
    if not items:  # a plain criteria judgment (the benchmark's untimed first call)
        return json.dumps({"reasoning": "It answers from the passages.", "score": 1.0})
    kind, _, item = items[0]
    return json.dumps(one(kind, item))


# -- DeepEval: its templates end with the text asked about; the reply schema travels as response_format --


def _listed(text: str) -> list[str]:
    """A list DeepEval wrote into its prompt (in Python's or JSON's notation), as strings."""
    try:
        found = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            found = json.loads(text)
        except ValueError:
            return []
    return [str(item) for item in found] if isinstance(found, list) else []


def deepeval(schema: str, prompt: str) -> str:
    if schema == "Truths":
        return json.dumps({"truths": sentences(_after(prompt, "Text:\n"))})
    if schema == "Claims":
        return json.dumps({"claims": sentences(_after(prompt, "AI Output:\n"))})
    if schema == "Statements":
        return json.dumps({"statements": sentences(_after(prompt, "Text:\n"))})
    if schema != "Verdicts":
        return json.dumps({"reason": REASON})
    if "\nClaims:\n" in prompt:  # faithfulness: each claim against the truths
        items = _listed(_after(prompt, "Claims:\n"))
        basis, what = _after(prompt, "Retrieval Contexts:\n", "\n\nClaims:"), "context"
    elif "\nStatements:\n" in prompt:  # answer relevancy: each statement against the input
        items = _listed(_after(prompt, "Statements:\n"))
        basis, what = _after(prompt, "Input:\n", "\n\n"), "question"
    elif "Expected output:\n" in prompt:  # contextual precision: each passage against the input and reference
        items = _listed(_after(prompt, "documents):\n"))
        basis = _after(prompt, "Input:\n", "\n\n") + " " + _after(prompt, "Expected output:\n", "\n\n")
        what = "question"
    else:  # contextual recall: each sentence of the reference against the passages
        items = sentences(_after(prompt, "Expected Output:\n", "\n\nRetrieval Context:"))
        basis, what = _after(prompt, "Retrieval Context:\n"), "context"
    verdicts = []
    for item in items:
        yes, why = ruled(item, basis, what)
        verdicts.append({"verdict": "yes" if yes else "no", "reason": why})
    return json.dumps({"verdicts": verdicts})


# -- ragas: its prompts end with the input as JSON; the reply schema's title is in the system message --


def ragas(system: str, user: str) -> str:
    titles = re.findall(r'"title": "(\w+)",\s*"type": "object"\s*}\s*Make sure', system)
    title = titles[-1] if titles else ""
    try:
        given = json.loads(_after(user, "Now perform the same with the following input\ninput: ", "\nOutput:"))
    except ValueError:
        given = {}
    if title == "StatementGeneratorOutput":
        return json.dumps({"statements": sentences(given.get("answer", ""))})
    if title == "ResponseRelevanceOutput":
        first = (sentences(given.get("response", "")) or ["The answer says something"])[0].rstrip(".")
        return json.dumps({"question": f"Is it true that {first[0].lower()}{first[1:]}?", "noncommittal": 0})
    if title == "Verification":  # context precision: one passage against the question and the reference
        yes, why = ruled(given.get("context", ""), f"{given.get('question', '')} {given.get('answer', '')}", "question")
        return json.dumps({"reason": why, "verdict": int(yes)})
    if title == "ContextRecallClassifications":  # each sentence of the reference against the passages
        classified = []
        for statement in sentences(given.get("answer", "")):
            yes, why = ruled(statement, given.get("context", ""), "context")
            classified.append({"statement": statement, "reason": why, "attributed": int(yes)})
        return json.dumps({"classifications": classified})
    ruled_on = []  # faithfulness (NLIStatementOutput): each statement against the context
    for statement in given.get("statements", []):
        yes, why = ruled(str(statement), given.get("context", ""), "context")
        ruled_on.append({"statement": statement, "reason": why, "verdict": int(yes)})
    return json.dumps({"statements": ruled_on})


# -- dispatch -----------------------------------------------------------------------------------------


def text_of(message: dict[str, Any]) -> str:
    """A message's text: its content, or the text of its content parts (as DeepEval sends them)."""
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def _texts(messages: Sequence[dict[str, Any]]) -> tuple[str, str]:
    system = next((text_of(m) for m in messages if m.get("role") == "system"), "")
    user = next((text_of(m) for m in messages if m.get("role") == "user"), "")
    return system, user


def respond(request: dict[str, Any]) -> str:
    """The reply to any tool's RAG prompt; logged to `RAG_BENCH_LOG`."""
    messages = request.get("messages") or []
    system, user = _texts(messages)
    if system.startswith("You are an impartial evaluator"):
        tool, reply = "pytest-llmjudge", ours(system, user)
    elif "Now perform the same with the following input" in user:
        tool, reply = "ragas", ragas(system, user)
    else:
        schema = str(((request.get("response_format") or {}).get("json_schema") or {}).get("name") or "")
        tool, reply = "deepeval", deepeval(schema, user)
    log = os.environ.get("RAG_BENCH_LOG")
    if log:
        chars = sum(len(text_of(m)) for m in messages)
        line = json.dumps({"t": time.time(), "tool": tool, "prompt_chars": chars, "reply_chars": len(reply)})
        with _LOG_LOCK, open(log, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    return reply
