"""PerTurn: each assistant turn of a conversation judged with the turns before it, one call per turn."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import Any

from ..case import Case
from ..conversation import transcript
from ..errors import JudgeError
from ..parsing.funnel import ParsedVerdict
from .base import Outcome, Prompt, Reply, Rubric, RubricError, one_of, register_rubric, resolve_rubric

PER_TURN_AGGREGATES = ("min", "mean")
# What each turn's criteria add: the judge sees one turn as the output, the turns before it as the input.
TURN_NOTE = (
    "\n\n(The output is one assistant turn of a conversation; the input is the conversation before it. "
    "Judge this turn alone, in the light of what came before: an earlier turn's merit does not count.)"
)
_QUOTE = 240  # characters of a turn a failure quotes


@register_rubric
class PerTurn(Rubric):
    """Each assistant turn judged by `rubric` (default: `Score`) with the turns before it as its input.

    One recorded call per turn (more where `rubric` asks more than one); the turns' scores combine by
    `aggregate`: "min" (the worst turn decides) or "mean".  A failure names the lowest turn by its
    index in the conversation and quotes it.
    """

    name = "per_turn"

    def __init__(self, rubric: Any = None, aggregate: str = "min") -> None:
        inner = resolve_rubric(rubric)
        if isinstance(inner, PerTurn):
            raise RubricError("PerTurn(rubric=...) cannot be another PerTurn")
        one_of("PerTurn(aggregate=...)", aggregate, PER_TURN_AGGREGATES)
        self.rubric, self.aggregate = inner, aggregate

    def parameters(self) -> dict[str, Any]:
        return {"rubric": self.rubric.describe(), "aggregate": self.aggregate}

    def turns(self, case: Case) -> Iterator[tuple[int, Case]]:
        """Each assistant turn's index in the conversation and the case it is judged as, one by one (each
        holds the turns before it: a long conversation's are made only as far as they are judged)."""
        messages = case.messages
        if messages is None:
            raise JudgeError("PerTurn judges a conversation: pass a list of chat messages as the output")
        if not any(message.role == "assistant" for message in messages):
            raise JudgeError("PerTurn: the conversation has no assistant turn to judge")
        for index, message in enumerate(messages):
            if message.role != "assistant":
                continue
            history = transcript(messages[:index]) if index else "(the conversation starts with this turn)"
            turn = Case(
                output=transcript(messages[index : index + 1]),
                criteria=case.criteria + TURN_NOTE,
                input=history,
                expected=case.expected,
            )
            yield index, turn

    def prompts(self, case: Case) -> Iterator[Prompt]:
        for index, turn in self.turns(case):
            for prompt in self.rubric.prompts(turn):
                yield dataclasses.replace(prompt, name=_turn_name(index, prompt.name))

    def reply_schema(self) -> dict[str, Any] | None:
        return self.rubric.reply_schema()

    def item_name(self, case: Case, prompt: Prompt) -> str:
        """`turn 33, output[65]`: the turn as a reader counts them (the 33rd assistant turn), and where it
        is in the list passed (a prompt's name holds only the latter)."""
        index = _turn_of(prompt)
        counted = sum(1 for message in (case.messages or ())[: index + 1] if message.role == "assistant")
        inner = _inner(prompt).name
        return f"turn {counted}, output[{index}]" + (f" ({inner})" if inner else "")

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        return self.rubric.parse(_inner(prompt), reply)

    def stored_logprobs(self, prompt: Prompt, reply: Reply) -> Any:
        return self.rubric.stored_logprobs(_inner(prompt), reply)

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        judged: list[dict[str, Any]] = []
        for index, turn in self.turns(case):
            mine = [(_inner(p), parsed) for p, parsed in results if _turn_of(p) == index]
            outcome = self.rubric.combine(turn, mine)
            judged.append({"turn": index, "score": outcome.score, "reasoning": outcome.reasoning, "text": turn.output})
        scores = [t["score"] for t in judged]
        score = min(scores) if self.aggregate == "min" else math.fsum(scores) / len(scores)
        worst = min(judged, key=lambda t: t["score"])
        reasoning = f"lowest turn, output[{worst['turn']}] ({worst['score']:.2f}): {worst['reasoning']}"
        details = {"turns": judged, "lowest_turn": worst["turn"]}
        return Outcome(round(score, 6), reasoning, details=details)

    def failure_details(self, outcome: Outcome) -> list[str]:
        turns = outcome.details.get("turns", ())
        if not turns:
            return []
        worst = min(turns, key=lambda t: t["score"])
        text = worst["text"] if len(worst["text"]) <= _QUOTE else worst["text"][: _QUOTE - 3] + "..."
        lines = [f"lowest turn: output[{worst['turn']}], scored {worst['score']:.2f}:"]
        lines.extend(f"  > {line}" for line in text.splitlines())
        scores = ", ".join(f"output[{t['turn']}] {t['score']:.2f}" for t in turns)
        return [*lines, f"turn scores: {scores}"]


def _turn_name(index: int, name: str) -> str:
    return f"turn{index}" + (f"/{name}" if name else "")


def _turn_of(prompt: Prompt) -> int:
    return int(prompt.name.split("/", 1)[0].removeprefix("turn"))


def _inner(prompt: Prompt) -> Prompt:
    """The prompt as the inner rubric made it (its own name back)."""
    _, _, name = prompt.name.partition("/")
    return dataclasses.replace(prompt, name=name)
