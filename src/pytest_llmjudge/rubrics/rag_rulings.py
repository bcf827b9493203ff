"""How the RAG kinds ask for yes/no rulings on a list (claims, statements, passages), and read them.

By default one call rules on a whole batch of items, each ruling with its reason, and what they are
checked against (the context, the input) is sent once per call.  `batch=1` asks one call per item,
as these kinds did before batching: the same messages and the same rubric identity, so the same keys.
A list longer than a batch is split into the fewest calls of at most `batch` items, never cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..case import Case, fence
from ..parsing.funnel import Asked, ParsedVerdict, parse_verdict
from .base import (
    REASONING,
    Prompt,
    Reply,
    Rubric,
    RubricError,
    chat,
    details_of,
    parse_failure,
    reading,
    reply_object,
    system_prompt,
)
from .parsed import RubricParse
from .rulings import Numbered, read_rulings

# Items ruled on in one call by default.  Each ruling comes with a sentence or two of reasoning, about
# 60 tokens: 16 of them stay well inside the default reply cap of 2048 tokens (32 would brush it), and
# the claims of a few paragraphs' answer fit in one call.  A list of 32 (the per-judgment cap) is two.
BATCH = 16

RULING_SCHEMA: Mapping[str, Any] = reply_object(reasoning=REASONING, verdict={"type": "string", "enum": ["yes", "no"]})
RULING_INSTRUCTIONS = (
    "{question} Think first, then answer yes or no. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<one or two sentences>", "verdict": "yes" or "no"}}'
)
RULINGS_INSTRUCTIONS = (
    "{question} Rule on each numbered {noun} on its own, independently of the others: think first, then "
    "answer yes or no. Reply with one JSON object and nothing else:\n"
    '{{"results": [{{"id": <the {noun}\'s number>, "reasoning": "<one or two sentences>", "verdict": "yes" or '
    '"no"}}, ... one entry per {noun}, in order]}}'
)


def ruling(reply: Reply, kind: str, asked: Asked) -> RubricParse:
    """A yes/no ruling (1.0 or 0.0) with its reason; a reply that gives neither is a parse failure, and so is
    one whose yes or no was copied from the prompt (a claim or passage carrying "Verdict: yes")."""
    with reading(kind, reply):
        parsed = parse_verdict(reply.text, asked=asked)
    if parsed.verdict not in ("pass", "fail"):
        raise parse_failure(f"{kind}: the reply gives no yes/no verdict", reply)
    verdict = "yes" if parsed.verdict == "pass" else "no"
    details = {"rulings": [{"verdict": verdict, "reasoning": parsed.reasoning}]}
    score = 1.0 if verdict == "yes" else 0.0
    return RubricParse(score, None, verdict, None, parsed.reasoning, parsed.strategy, details)


def rulings_in(parsed: ParsedVerdict) -> list[Mapping[str, str]]:
    """The rulings one call's parsed reply holds, in the order of its items: `{"verdict", "reasoning"}` each."""
    rulings: list[Mapping[str, str]] = details_of(parsed)["rulings"]
    return rulings


def split(items: Sequence[str], size: int) -> list[Sequence[str]]:
    """`items` in order, in the fewest runs of at most `size`, as even as can be (17 by 16: 8 and 9)."""
    calls = -(-len(items) // size)
    return [items[len(items) * i // calls : len(items) * (i + 1) // calls] for i in range(calls)]


class Rulings(Rubric):
    """A RAG kind's choice of how it asks for its rulings: `batch` items per call (default 16), or one per item."""

    noun: ClassVar[str] = "claim"  # what an item is called in the prompt and the rulings

    def __init__(self, batch: int | None = None) -> None:
        if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
            raise RubricError(
                f"{type(self).__name__}(batch=...) must be a whole number of at least 1 (the {self.noun}s ruled"
                f" on in one call; 1 asks one call per {self.noun}), got {batch!r}"
            )
        self.chosen = batch  # None: the default, which may replay what the per-item form recorded
        self.batch = BATCH if batch is None else batch

    def parameters(self) -> dict[str, Any]:
        # The per-item form has no parameter: its identity, and so its keys, are those of before batching.
        return {} if self.batch == 1 else {"batch": self.batch}

    def recorded_forms(self) -> list[Rubric]:
        """Unless the user chose how to ask, verdicts recorded per item stand for the batched default."""
        return [type(self)(batch=1)] if self.chosen is None else []

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch={self.batch})"

    @property
    def numbered(self) -> Numbered:
        return Numbered(self.noun, "yes", "no")

    def batched(self, case: Case, question: str, basis: str, items: Sequence[str], schema: str | None) -> list[Prompt]:
        """One call per batch of `items`: `basis` (what they are checked against) once, then each item fenced
        on its own, numbered from 1 in its call.  `schema`: the name of the reply schema the calls carry
        (None: the rubric's `reply_schema`)."""
        noun = self.noun
        system = system_prompt(case, RULINGS_INSTRUCTIONS.format(question=question, noun=noun))
        own = None if schema is None else (schema, self.numbered.schema())
        prompts, first = [], 1
        for batch in split(items, self.batch):
            listed = "\n\n".join(
                f"{noun.capitalize()} {j}:\n" + fence(noun, item, case.nonce) for j, item in enumerate(batch, 1)
            )
            user = f"{basis}\n\n{noun.capitalize()}s to rule on ({len(batch)}):\n\n{listed}"
            name = f"{noun}s {first}-{first + len(batch) - 1}"
            prompts.append(Prompt(chat(system, user), name=name, schema=own, items=len(batch)))
            first += len(batch)
        return prompts

    def read_rulings(self, prompt: Prompt, reply: Reply) -> RubricParse:
        """One call's rulings: a yes or no per item with its reason (the call's score: the share of yes)."""
        kind, asked = type(self).__name__, self.asked(prompt)
        if self.batch == 1:
            return ruling(reply, kind, asked)
        read = read_rulings(kind, reply, asked, prompt.items, self.numbered)
        rulings = [{"verdict": "yes" if yes else "no", "reasoning": why} for yes, why in read]
        score = round(sum(yes for yes, _ in read) / len(read), 6)
        reasoning = "\n".join(f"{j}. [{r['verdict']}] {r['reasoning']}" for j, r in enumerate(rulings, 1))
        return RubricParse(score, None, None, None, reasoning, "json-rulings", {"rulings": rulings})
