"""Pairwise judging: is the candidate better than the baseline?  Both orders, ties on disagreement.

Judges prefer a position (MT-Bench measured GPT-4 consistent on only ~65% of swapped pairs), so each
comparison is asked in both orders, each its own call and key; a win needs both to agree, else a tie
(MT-Bench's rule).  A sample scores the candidate 1.0, 0.5 or 0.0; samples and panel models combine like
any other judgment, and the winner is read off the combined score.  The case carries the candidate as
`output` and the baseline as `expected`, so one nonce fences both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..case import Case, data_rules, fence
from ..parsing.funnel import ParsedVerdict, own_text, parse_json_object, reasoning_from
from ..redact import redact
from .base import (
    REASONING,
    Outcome,
    Prompt,
    Reply,
    Rubric,
    chat,
    details_of,
    parse_failure,
    reading,
    register_rubric,
    reply_object,
)
from .parsed import RubricParse

if TYPE_CHECKING:
    from ..verdict import Verdict

ORDERS = ("candidate-first", "baseline-first")
PAIRWISE_SYSTEM = (
    "You are an impartial judge comparing two responses (A and B) of AI systems. Judge them only "
    "against the criteria. {rules}\n\n"
    "The order of the responses must not influence you, and length alone is not quality. Think first, "
    "then decide. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<a few sentences comparing A and B against the criteria>", "winner": "A", "B" or "tie"}}'
)
_LETTER = {
    "a": "A",
    "response a": "A",
    "b": "B",
    "response b": "B",
    "tie": "tie",
    "c": "tie",
    "equal": "tie",
    "draw": "tie",
    "neither": "tie",
    "both": "tie",
}
_MARKER = re.compile(r"\[\[\s{0,3}(A|B|C|tie)\s{0,3}\]\]", re.IGNORECASE)
_SCORES = {"candidate": 1.0, "tie": 0.5, "baseline": 0.0}  # the candidate's score by the side preferred


@register_rubric
class Pairwise(Rubric):
    """Two prompts per sample (candidate first, baseline first); the candidate's win share as score."""

    name = "pairwise"

    def prompts(self, case: Case) -> list[Prompt]:
        assert case.expected is not None, "a pairwise case carries the baseline as `expected`"
        system = PAIRWISE_SYSTEM.format(rules=data_rules(case.nonce))
        prompts = []
        for order, (first, second) in zip(
            ORDERS, [(case.output, case.expected), (case.expected, case.output)], strict=True
        ):
            parts = [f"Criteria:\n{case.criteria}"]
            if case.input is not None:
                parts.append("Input given to both systems:\n" + fence("input", case.input, case.nonce))
            parts.append("Response A:\n" + fence("response_a", first, case.nonce))
            parts.append("Response B:\n" + fence("response_b", second, case.nonce))
            prompts.append(Prompt(messages=chat(system, "\n\n".join(parts)), name=order))
        return prompts

    def reply_schema(self) -> dict[str, Any]:
        return reply_object(reasoning=REASONING, winner={"type": "string", "enum": ["A", "B", "tie"]})

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        """The winner the judge names in its own words: a response or instructions it copied (tagged or not)
        cannot vote, a reasoning that is the format's placeholder or a copy is no judgment, and a winner
        other than A, B or a tie is none."""
        letter, asked = None, self.asked(prompt)
        with reading("pairwise", reply):
            obj = parse_json_object(reply.text, asked)
            reasoning = "" if obj is None else reasoning_from(obj, asked)
        if obj is not None:
            for key in ("winner", "better", "preferred", "choice", "verdict"):
                value = obj.get(key)
                if isinstance(value, str) and value.strip().strip("[]").lower() in _LETTER:
                    letter = _LETTER[value.strip().strip("[]").lower()]
                    break
        if letter is None:
            text = own_text(reply.text, asked)  # copies masked: an echoed response's marker cannot vote
            found = list(_MARKER.finditer(text))
            if found:
                letter = _LETTER[found[-1].group(1).lower()]
                reasoning = text[: found[-1].start()].strip()
        if letter is None:
            raise parse_failure("pairwise: the reply names no winner (A, B or tie)", reply)
        candidate_letter = "A" if prompt.name == "candidate-first" else "B"
        preferred = "tie" if letter == "tie" else ("candidate" if letter == candidate_letter else "baseline")
        details = {"order": prompt.name, "preferred": preferred}
        return RubricParse(_SCORES[preferred], None, None, None, reasoning, "pairwise", details)

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        orders: list[dict[str, Any]] = [
            {"order": p.name, "preferred": details_of(r).get("preferred"), "reasoning": r.reasoning} for p, r in results
        ]
        picks = {o["preferred"] for o in orders}
        winner = next(iter(picks)) if len(picks) == 1 else "tie"
        reasoning = "\n".join(f"{o['order']}: prefers {o['preferred']}. {o['reasoning']}" for o in orders)
        return Outcome(
            _SCORES[winner], reasoning, details={"winner": winner, "consistent": len(picks) == 1, "orders": orders}
        )


@dataclass(frozen=True)
class OrderResult:
    """One order of one comparison: who the judge preferred, and why."""

    order: str  # "candidate-first" (A = candidate) or "baseline-first" (A = baseline)
    preferred: str  # "candidate", "baseline" or "tie"
    reasoning: str
    key: str
    model: str
    sample: int
    source: str


@dataclass(frozen=True)
class Comparison:
    """The result of `judge.compare`: the winner, both orders' reasoning, and the underlying Verdict."""

    winner: str  # "candidate", "baseline" or "tie"
    score: float  # the candidate's win share: 1 win, 0.5 tie, 0 loss (combined over samples / models)
    consistent: bool  # every order of every sample preferred the same side
    orders: tuple[OrderResult, ...]
    criteria: str
    verdict: Verdict  # the pipeline's Verdict (samples, keys, source, cost)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.orders)

    @property
    def source(self) -> str:
        return self.verdict.source

    def failure_message(self, allow_tie: bool = True) -> str:
        wanted = "at least as good as" if allow_tie else "better than"
        lines = [
            f"candidate not judged {wanted} the baseline: winner {self.winner} (score {self.score:.2f}"
            + ("" if self.consistent else ", the two orders disagreed")
            + ")",
            f"  criteria:  {self.criteria}",
        ]
        for o in self.orders:
            label = "A = candidate, B = baseline" if o.order == "candidate-first" else "A = baseline, B = candidate"
            tag = f"{o.model}#{o.sample} " if len(self.orders) > 2 else ""
            reason = (o.reasoning or "(none given)").strip().replace("\n", "\n             ")
            lines.append(f"  {tag}{o.order} ({label}): prefers {o.preferred}: {reason}")
        lines.append(
            f"  judge:     {self.verdict.model} ({self.verdict.source}, keys {', '.join(k[:12] for k in self.keys)})"
        )
        return redact("\n".join(lines))


def comparison_from(verdict: Verdict) -> Comparison:
    """Read a pairwise Verdict back as a Comparison."""
    orders = [
        OrderResult(order["order"], order["preferred"], order["reasoning"], key, s.model, s.sample, s.source)
        for s in verdict.samples
        for key, order in zip(s.keys, s.details.get("orders", ()), strict=False)
    ]
    score = verdict.score
    winner = "candidate" if score > 0.5 else "baseline" if score < 0.5 else "tie"
    return Comparison(
        winner=winner,
        score=score,
        consistent=len({o.preferred for o in orders}) == 1,
        orders=tuple(orders),
        criteria=verdict.criteria,
        verdict=verdict,
    )
