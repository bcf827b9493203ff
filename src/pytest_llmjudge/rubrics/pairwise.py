"""Pairwise judging: is the candidate better than the baseline?  Both orders, ties on disagreement.

Judges prefer a position (MT-Bench measured GPT-4 consistent on only ~65% of swapped pairs), so each
comparison is asked in both orders, each its own call and key; a win needs both to agree, else a tie
(MT-Bench's rule).  A sample scores the candidate 1.0, 0.5 or 0.0; samples and panel models combine like
any other judgment, and the winner is read off the combined score.  How strongly an order prefers its side
(Arena-Hard's ``A>>B`` against ``A>B``) is kept beside it, not in the score.  The case carries the candidate as
`output` and the baseline as `expected`, so one nonce fences both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..case import Case, data_rules, fence
from ..errors import JudgeError
from ..parsing.answers import COMPARISON, Answer
from ..parsing.funnel import ParsedVerdict
from ..parsing.preference import parse_preference
from ..redact import redact
from .base import (
    REASONING,
    Outcome,
    Prompt,
    Reply,
    Rubric,
    RubricError,
    chat,
    declaration,
    details_of,
    one_of,
    reading,
    register_rubric,
    reply_object,
)
from .parsed import RubricParse
from .template import placeholders

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
# Your own comparison prompt: the system message keeps the data rules, your template is the user message.
PAIRWISE_TEMPLATE_SYSTEM = (
    "You are an impartial judge comparing two responses (A and B) of AI systems. {rules}\n\n"
    "Follow the evaluation instructions in the user message, and give your verdict in the form they ask for."
)
PAIRWISE_FIELDS = ("criteria", "input", "response_a", "response_b")
# What a template asks the judge for: a verdict label (any of those the parser reads: [[A]], [[A>>B]],
# "Output (a)", "WINNER: B", JSON...), or one score per response (JudgeLM, Vicuna-bench: "8 9").
ANSWERS = ("labels", "scores")
_SCORES = {"candidate": 1.0, "tie": 0.5, "baseline": 0.0}  # the candidate's score by the side preferred


@register_rubric
class Pairwise(Rubric):
    """Two prompts per sample (candidate first, baseline first); the candidate's win share as score.

    `template` (optional) is your own comparison prompt, with `{response_a}` and `{response_b}` (both required),
    `{criteria}` and `{input}` placeholders; `answer` says what it asks the judge for: `"labels"` (a verdict label,
    the default), `"scores"` (one score per response, the higher wins: "8 9" on the first line), or the template's
    own answer words and the side each names, `{"1": "first", "2": "second", "3": "tie"}` (or an `Answer`), read
    as the judge gives them ("Output: 2", a last line "3", "…選択します。1").  Without a template the judge is
    asked for a JSON object; every form the parser knows is read either way, and must agree with the declared one.
    """

    name = "pairwise"

    def __init__(self, template: str | None = None, *, answer: str | Mapping[str, str] | Answer = "labels") -> None:
        if isinstance(answer, str):
            one_of("Pairwise(answer=...)", answer, ANSWERS)
        else:
            self.declared = declaration("Pairwise(answer=...)", answer, COMPARISON, template)
            if not self.declared.words:
                raise RubricError("Pairwise(answer=...): declare the template's answer words and the side each names")
        fields: tuple[str, ...] = ()
        if template is not None:
            fields = placeholders("Pairwise", template, PAIRWISE_FIELDS)
            missing = [f"{{{f}}}" for f in ("response_a", "response_b") if f not in fields]
            if missing:
                raise RubricError(
                    f"Pairwise: the template must contain {' and '.join(missing)}, where the two responses go"
                )
        elif answer != "labels":
            raise RubricError("Pairwise(answer=...) describes your own template: pass template=... with it")
        self.template, self.fields = template, fields
        self.answer = answer if isinstance(answer, str) else "declared"

    def parameters(self) -> dict[str, Any]:
        # The default prompt has no parameters: its verdicts keep their keys.
        if self.template is None:
            return {}
        answer = self.answer if self.declared is None else self.declared.describe()
        return {"template": self.template, "answer": answer}

    def prompts(self, case: Case) -> list[Prompt]:
        assert case.expected is not None, "a pairwise case carries the baseline as `expected`"
        system = (PAIRWISE_SYSTEM if self.template is None else PAIRWISE_TEMPLATE_SYSTEM).format(
            rules=data_rules(case.nonce)
        )
        prompts = []
        for order, (first, second) in zip(
            ORDERS, [(case.output, case.expected), (case.expected, case.output)], strict=True
        ):
            values = {
                "criteria": case.criteria,
                "input": "" if case.input is None else fence("input", case.input, case.nonce),
                "response_a": fence("response_a", first, case.nonce),
                "response_b": fence("response_b", second, case.nonce),
            }
            prompts.append(Prompt(messages=chat(system, self._user(case, values)), name=order))
        return prompts

    def _user(self, case: Case, values: dict[str, str]) -> str:
        if self.template is not None:
            if case.input is None and "input" in self.fields:
                raise JudgeError("this Pairwise template uses {input}, but no input= was given to compare with")
            return self.template.format(**values)
        parts = [f"Criteria:\n{case.criteria}"]
        if case.input is not None:
            parts.append("Input given to both systems:\n" + values["input"])
        parts.append("Response A:\n" + values["response_a"])
        parts.append("Response B:\n" + values["response_b"])
        return "\n\n".join(parts)

    def reply_schema(self) -> dict[str, Any] | None:
        if self.template is not None:
            return None  # your template says what the reply looks like
        return reply_object(reasoning=REASONING, winner={"type": "string", "enum": ["A", "B", "tie"]})

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        """The winner the judge names in its own words (see `parse_preference`): a response or instructions it
        copied cannot vote, a reasoning that is the format's placeholder or a copy is no judgment, two final
        verdicts that disagree are none."""
        with reading("pairwise", reply):
            said = parse_preference(reply.text, self.asked(prompt), scores=self.answer == "scores")
        candidate_letter = "A" if prompt.name == "candidate-first" else "B"
        winner = said.winner
        preferred = "tie" if winner == "tie" else ("candidate" if winner == candidate_letter else "baseline")
        details = {"order": prompt.name, "preferred": preferred, "strength": said.strength}
        return RubricParse(_SCORES[preferred], None, None, None, said.reasoning, "pairwise", details)

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        orders: list[dict[str, Any]] = [
            {
                "order": p.name,
                "preferred": details_of(r).get("preferred"),
                "strength": details_of(r).get("strength"),
                "reasoning": r.reasoning,
            }
            for p, r in results
        ]
        picks = {o["preferred"] for o in orders}
        winner = next(iter(picks)) if len(picks) == 1 else "tie"
        reasoning = "\n".join(f"{o['order']}: prefers {_preference(o)}. {o['reasoning']}" for o in orders)
        return Outcome(
            _SCORES[winner], reasoning, details={"winner": winner, "consistent": len(picks) == 1, "orders": orders}
        )


def _preference(order: dict[str, Any]) -> str:
    """Who an order preferred, and how strongly where the judge said: e.g. `candidate (strongly)`."""
    strength = order.get("strength")
    return str(order["preferred"]) + (f" ({strength}ly)" if strength in ("strong", "slight") else "")


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
    # How strongly the judge preferred its side: "strong" (Arena-Hard's A>>B), "slight" (A>B), or None (a tie, or a
    # reply that does not say, as a JSON winner or [[A]] does not).  A word, not a number: the two-level scale is
    # what judges are asked for, and no reply format gives a margin that means the same across formats.
    strength: str | None = None


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
            lines.append(f"  {tag}{o.order} ({label}): prefers {_preference(vars(o))}: {reason}")
        lines.append(
            f"  judge:     {self.verdict.model} ({self.verdict.source}, keys {', '.join(k[:12] for k in self.keys)})"
        )
        return redact("\n".join(lines))


def comparison_from(verdict: Verdict) -> Comparison:
    """Read a pairwise Verdict back as a Comparison."""
    orders = [
        OrderResult(
            order["order"],
            order["preferred"],
            order["reasoning"],
            key,
            s.model,
            s.sample,
            s.source,
            order.get("strength"),
        )
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
