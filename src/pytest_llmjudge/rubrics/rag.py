"""RAG: an answer judged with the context it was retrieved for, claim by claim or passage by passage.

`Faithfulness`, `AnswerRelevancy` and `ContextRecall` list the claims of a text (step "claims"), then
rule yes or no on each (step "verdicts"): the score is the share ruled "yes".  `ContextPrecision`
rules on each passage, and scores the ranking like average precision.  The rulings are asked in
batches, or one call per item (`batch=1`): see `rag_rulings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..case import Case, fence, labelled, render_context
from ..parsing.echo import only_copies
from ..parsing.funnel import Asked, ParsedVerdict, parse_json_object
from .base import (
    Outcome,
    Prompt,
    Reply,
    Rubric,
    chat,
    details_of,
    listing,
    parse_failure,
    reading,
    register_rubric,
    reply_object,
    require,
    system_prompt,
)
from .parsed import RubricParse
from .rag_rulings import RULING_INSTRUCTIONS, RULING_SCHEMA, Rulings, rulings_in

CLAIMS_SCHEMA: Mapping[str, Any] = reply_object(claims={"type": "array", "items": {"type": "string"}})
CLAIMS_INSTRUCTIONS = (
    "List the {what} made in the {where}. Each is one short sentence that stands on its own (names "
    "instead of pronouns), in the order the text makes them. {which} A text that makes none gives an "
    "empty list. Do not judge them. Reply with one JSON object and nothing else:\n"
    '{{"claims": ["<claim>", ...]}}'
)


def claims_of(reply: Reply, kind: str, asked: Asked) -> RubricParse:
    """The claims a reply lists (distinct, in order; the score 1.0 only keeps a stored entry in range).

    A claim may copy the text it came from; the list may not be a copy (an output carrying
    `{"claims": []}`), nor a claim the format's placeholder."""
    with reading(kind, reply):
        obj = parse_json_object(reply.text, asked)
    items = None if obj is None else next((obj[k] for k in ("claims", "statements") if k in obj), None)
    if not isinstance(items, list):
        raise parse_failure(f"{kind}: the reply has no list of claims", reply)
    claims: list[str] = []
    for item in items:
        if isinstance(item, Mapping):  # {"claim": "..."} or {"statement": "..."}
            item = next((item[k] for k in ("claim", "statement", "text") if k in item), None)
        if not isinstance(item, str):
            raise parse_failure(f"{kind}: each claim must be a string, got {type(item).__name__}", reply)
        if only_copies(item):
            raise parse_failure(f"{kind}: a claim in the reply is the format's placeholder, not a claim", reply)
        if item.strip():
            claims.append(" ".join(item.split()))
    claims = list(dict.fromkeys(claims))  # how many may be ruled on is --judge-max-items' to say, at the next step
    reasoning = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, 1)) or "(no claims)"
    return RubricParse(1.0, None, None, None, reasoning, "json-claims", {"claims": claims})


class ClaimRubric(Rulings):
    """Two steps: the claims of the case's `source` text, then a yes/no ruling on each against `against`
    (`batch` claims per call, default 16; `batch=1`: one call per claim)."""

    steps = ("claims", "verdicts")
    source: ClassVar[str] = "output"
    against: ClassVar[str] = "context"
    what: ClassVar[str] = "factual claims"
    which: ClassVar[str] = "Leave out questions, greetings, opinions and instructions."
    question: ClassVar[str] = ""
    no_claims: ClassVar[float] = 1.0
    needs: ClassVar[Mapping[str, str]] = {}
    rejected: ClassVar[str] = "unsupported"  # what a claim ruled "no" is called in the details and the failure

    def prompts(self, case: Case) -> list[Prompt]:
        require(case, type(self).__name__, **self.needs)
        where = {"output": "output", "expected": "reference answer"}[self.source]
        system = system_prompt(case, CLAIMS_INSTRUCTIONS.format(what=self.what, where=where, which=self.which))
        user = labelled(case, self.source)
        # It lists the claims, and rules on none: the rulings on them count against --judge-max-items.
        schema = (f"{self.name}_claims", CLAIMS_SCHEMA)
        return [Prompt(chat(system, user), name="claims", schema=schema, items=0)]

    def next_prompts(self, case: Case, earlier: Sequence[tuple[Prompt, ParsedVerdict]]) -> list[Prompt]:
        if len(earlier) != 1:  # the rulings are in: no step is left
            return []
        basis = render_context(case.context or (), case.nonce) if self.against == "context" else labelled(case, "input")
        # A claim is the judge's reply, which may quote the prompt's tags: it loses the nonce, not to close its fence.
        nonce = case.nonce
        claims = [claim.replace(nonce, "-") for claim in details_of(earlier[0][1])["claims"]]
        if self.batch != 1:
            return self.batched(case, self.question, basis, claims, f"{self.name}_rulings")
        system = system_prompt(case, RULING_INSTRUCTIONS.format(question=self.question))
        schema = (f"{self.name}_verdict", RULING_SCHEMA)
        return [
            Prompt(
                chat(system, f"{basis}\n\nClaim to check:\n{fence('claim', claim, nonce)}"),
                name=f"claim {i}",
                schema=schema,
            )
            for i, claim in enumerate(claims, 1)
        ]

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        if prompt.name == "claims":
            asked = self.asked(prompt)  # the claims restate the text they come from: copies are their answer
            return claims_of(
                reply,
                type(self).__name__,
                Asked(asked.prompt, verdict=asked.verdict, fields=asked.fields, restates=True),
            )
        return self.read_rulings(prompt, reply)

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        (_, extracted), *calls = results
        claims = details_of(extracted)["claims"]
        rulings = [ruled for _, parsed in calls for ruled in rulings_in(parsed)]
        checked = [
            {"claim": claim, "verdict": ruled["verdict"], "reasoning": ruled["reasoning"]}
            for claim, ruled in zip(claims, rulings, strict=True)
        ]
        rejected = [c["claim"] for c in checked if c["verdict"] != "yes"]
        if not checked:
            score, reasoning = self.no_claims, f"the {self.source} makes no claims to check"
        else:
            score = (len(checked) - len(rejected)) / len(checked)
            reasoning = "\n".join(f"[{c['verdict']}] {c['claim']}: {c['reasoning']}" for c in checked)
        details = {"claims": checked, self.rejected: rejected, "total": len(checked)}
        return Outcome(round(score, 6), reasoning, details=details)

    def failure_details(self, outcome: Outcome) -> list[str]:
        checked = outcome.details.get("claims", ())
        rejected = [(c["claim"], c["reasoning"]) for c in checked if c["verdict"] != "yes"]
        return listing(f"{self.rejected} claims ({len(rejected)} of {len(checked)}):", rejected) if rejected else []


@register_rubric
class Faithfulness(ClaimRubric):
    """The share of the output's claims the retrieved context supports (needs `context=`; no claims: 1.0)."""

    name = "faithfulness"
    question = (
        "Decide whether the retrieved context supports the claim: it states the claim or clearly implies it. "
        "A claim the context contradicts, or says nothing about, is not supported, however true it may be."
    )
    needs: ClassVar[Mapping[str, str]] = {"context": "the retrieved passages the output's claims are checked against"}


@register_rubric
class AnswerRelevancy(ClaimRubric):
    """The share of the output's statements that address the input (needs `input=`; no statements: 0.0)."""

    name = "answer_relevancy"
    noun = "statement"
    against = "input"
    what = "statements"
    which = "Include every statement, whether or not it is a fact; leave out only greetings and filler."
    question = (
        "Decide whether the statement addresses the input: it answers the request, or gives information the "
        "request needs. A statement on another subject, or one that evades the request, does not."
    )
    no_claims = 0.0
    needs: ClassVar[Mapping[str, str]] = {"input": "the request the output's statements must address"}
    rejected = "irrelevant"


@register_rubric
class ContextRecall(ClaimRubric):
    """The share of the reference answer's claims the retrieved context supports (needs `expected=` and
    `context=`): whether retrieval found what a correct answer needs.  A reference with no claims scores 1.0.
    """

    name = "context_recall"
    source = "expected"
    question = (
        "Decide whether the claim can be attributed to the retrieved context: the context states it or "
        "clearly implies it."
    )
    needs: ClassVar[Mapping[str, str]] = {
        "expected": "the reference answer whose claims the context must hold",
        "context": "the retrieved passages",
    }
    rejected = "unattributed"


PRECISION_QUESTION = (
    "Decide whether the passage is relevant to the input: it holds information useful for answering "
    "it (where a reference answer is given, information that the reference answer uses). A passage on the "
    "subject that does not help answer it is not relevant."
)
PRECISION_INSTRUCTIONS = RULING_INSTRUCTIONS.format(question=PRECISION_QUESTION)


@register_rubric
class ContextPrecision(Rulings):
    """Whether the relevant passages of the context are ranked first (needs `input=` and `context=`;
    `expected=` sharpens what relevant means): a yes/no ruling per passage (`batch` passages per call,
    default 16; `batch=1`: one call per passage), scored as average precision (no relevant passage scores 0.0)."""

    name = "context_precision"
    noun = "passage"

    def prompts(self, case: Case) -> list[Prompt]:
        ranked = "the retrieved passages, in rank order"
        require(case, "ContextPrecision", input="the request the passages were retrieved for", context=ranked)
        nonce = case.nonce
        asked = labelled(case, "input") + ("" if case.expected is None else "\n\n" + labelled(case, "expected"))
        passages = case.context or ()
        if self.batch != 1:
            return self.batched(case, PRECISION_QUESTION, asked, passages, None)
        system = system_prompt(case, PRECISION_INSTRUCTIONS)
        return [
            Prompt(
                chat(system, f"{asked}\n\nPassage {k} of {len(passages)}:\n" + fence("passage", p, nonce)),
                name=f"passage {k}",
            )
            for k, p in enumerate(passages, 1)
        ]

    def reply_schema(self) -> dict[str, Any]:
        return dict(RULING_SCHEMA) if self.batch == 1 else self.numbered.schema()

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        return self.read_rulings(prompt, reply)

    @classmethod
    def from_stored(cls, entry: Mapping[str, Any]) -> list[Rubric]:
        """The default batched form, and the per-item form (its only step is the rulings, which differ)."""
        return [cls(), cls(batch=1)]

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        rulings = [ruled for _, parsed in results for ruled in rulings_in(parsed)]
        ranked = [
            {"rank": k, "relevant": ruled["verdict"] == "yes", "reasoning": ruled["reasoning"]}
            for k, ruled in enumerate(rulings, 1)
        ]
        found, total = 0, 0.0
        for k, passage in enumerate(ranked, 1):
            if passage["relevant"]:
                found += 1
                total += found / k  # precision@k at each relevant rank k
        score = total / found if found else 0.0
        irrelevant = [p["rank"] for p in ranked if not p["relevant"]]
        reasoning = "\n".join(
            f"[{'relevant' if p['relevant'] else 'irrelevant'}] passage {p['rank']}: {p['reasoning']}" for p in ranked
        )
        return Outcome(round(score, 6), reasoning, details={"passages": ranked, "irrelevant": irrelevant})

    def failure_details(self, outcome: Outcome) -> list[str]:
        passages = outcome.details.get("passages", ())
        shown = [(f"passage {p['rank']}", p["reasoning"]) for p in passages if not p["relevant"]]
        return listing(f"irrelevant passages ({len(shown)} of {len(passages)}, by rank):", shown) if shown else []
