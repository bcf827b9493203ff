"""A stand-in RAG judge: it answers every step of the RAG kinds, per item or batched, by shared words.

The claims of a text are its sentences.  A claim is supported when every word of it is in the
context; a statement addresses the input when one word of it is there; a passage is relevant when
one word of it is in the input.  A batched call gets the same ruling on each item as a call of its
own would, so both forms of a kind see the same rulings.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["fenced", "rag_backend", "rag_judge", "words"]

_ITEMS = re.compile(r"<(claim|statement|passage)-([0-9a-f]+)>\n(.*?)\n</\1-\2>", re.S)


def fenced(text: str, name: str) -> str:
    """The body of the first `<name-NONCE>` block of `text` ("" if none)."""
    found = re.search(rf"<{name}-([0-9a-f]+)>\n(.*?)\n</{name}-\1>", text, re.S)
    return found.group(2) if found else ""


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3 or w.isdigit()}


def ruled(kind: str, item: str, user: str) -> dict[str, str]:
    """The ruling on one item: a claim against the context (or the input), a passage against the input."""
    said = words(item)
    if kind == "passage":
        relevant = bool(said & words(fenced(user, "input")))
        return {"reasoning": "shares words with the input", "verdict": "yes" if relevant else "no"}
    basis = words(fenced(user, "context") or fenced(user, "input"))
    checked = said <= basis if "<context-" in user else bool(said & basis)
    return {"reasoning": f"words not found: {sorted(said - basis)}", "verdict": "yes" if checked else "no"}


def rag_judge(request: dict[str, Any]) -> str:
    """The judge as a server responder: the step is told by the reply schema's name, or else by the prompt."""
    messages = request["messages"]
    system = messages[0]["content"]
    user = next(m["content"] for m in messages if m["role"] == "user")  # the first: a re-ask adds another
    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    if schema.endswith("_claims") or '"claims"' in system:
        text = fenced(user, "output") or fenced(user, "expected")
        return json.dumps({"claims": [s.strip() for s in text.split(".") if s.strip()]})
    items = _ITEMS.findall(user)
    if '"results"' in system:  # a batched call: one ruling per numbered item, each in its own fence
        return json.dumps({"results": [{"id": i, **ruled(k, item, user)} for i, (k, _, item) in enumerate(items, 1)]})
    if items:
        kind, _, item = items[0]
        return json.dumps(ruled(kind, item, user))
    return json.dumps({"reasoning": "a plain judgment of the criteria", "score": 1.0})  # a Score, as it asked


def rag_backend(messages: list[dict[str, Any]]) -> str:
    """The judge as a callable backend (`judge_backend`, `Judge(backend=...)`)."""
    return rag_judge({"messages": messages})


rag_backend.name = "rag-words-judge"  # type: ignore[attr-defined]
