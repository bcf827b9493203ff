"""The rubric contract: the `Rubric` ABC, what flows through it, and the registry of kinds by name.

A rubric turns a `Case` into one or more `Prompt`s (one judge call each), and turns the parsed
replies back into an `Outcome`.  Every prompt is its own call with its own key, so each is stored
and replayed on its own.  A rubric may ask in steps: `next_prompts` builds a later step's
prompts from the parsed replies of the earlier ones (extract the claims, then verify each), and
the pipeline looks up, calls and parses one step before it asks for the next.  A rubric's
`describe()` (name, version and every parameter) is part of each key: changing a weight, a
constraint or a question re-judges, nothing else does.
"""

from __future__ import annotations

import importlib
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

from ..case import Case, data_rules, render_case
from ..errors import JudgeError, VerdictParseError
from ..parsing.answers import Answer, answer_of
from ..parsing.funnel import Asked, ParsedVerdict, parse_verdict

Message = Mapping[str, str]


class RubricError(JudgeError, ValueError):
    """A rubric was defined with bad parameters (raised at definition, not at judging time)."""


RubricError.__module__ = "pytest_llmjudge"


@dataclass(frozen=True)
class Prompt:
    """One judge call a rubric asks for."""

    messages: tuple[Message, ...]
    scale: tuple[float, float] = (0.0, 1.0)
    name: str = ""  # which part of the rubric this call is ("" for single-call rubrics)
    params: Mapping[str, Any] = field(default_factory=dict)  # extra call parameters (logprobs, ...)
    # (name, JSON schema) of this call's reply, where a step asks for another shape than `reply_schema()`
    schema: tuple[str, Mapping[str, Any]] | None = None
    # How many items (claims, passages, turns, questions, constraints, dimensions) this call rules on: the
    # per-judgment cap (--judge-max-items) counts them, so a batched call of 40 claims counts as 40, not as
    # 1; a call that only lists what later calls rule on (the claims of an answer) counts 0.
    items: int = 1


@dataclass(frozen=True)
class Reply:
    """What the judge said for one prompt (live or replayed)."""

    text: str
    logprobs: Any = None


@dataclass(frozen=True)
class Outcome:
    """What a rubric makes of its replies: one score in [0, 1] and why."""

    score: float
    reasoning: str
    verdict: str | None = None
    confidence: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


def details_of(parsed: ParsedVerdict) -> Mapping[str, Any]:
    """What a structured rubric read from a reply beyond the score (a `RubricParse`'s details; else empty)."""
    details: Mapping[str, Any] | None = getattr(parsed, "details", None)
    return details if details is not None else {}


class Rubric(ABC):
    """A kind of judgment: its prompts, how one reply is parsed, and how the parsed replies combine.

    By default one reply is parsed by the tolerant parser on the prompt's scale and is the outcome.
    """

    name: ClassVar[str] = "rubric"
    # What a template of the user's own declares its answers look like (see `declaration`): read first.
    declared: Answer | None = None
    version: ClassVar[int] = 1  # bump when the prompt text changes meaning: it is part of every key
    # The names of the steps of a kind that asks in several (see `next_prompts`): stored calls name theirs.
    steps: ClassVar[tuple[str, ...]] = ()

    def describe(self) -> dict[str, Any]:
        """JSON-safe identity of this rubric (name, version, parameters): part of the key."""
        return {"name": self.name, "version": self.version, **self.parameters()}

    def parameters(self) -> dict[str, Any]:
        """The rubric's parameters, JSON-safe (kinds with parameters override this)."""
        return {}

    @abstractmethod
    def prompts(self, case: Case) -> Iterable[Prompt]:
        """The judge calls this case needs, each with its messages (the case's texts fenced as data).

        A list, or yielded one by one: the planner takes them until their `items` pass --judge-max-items,
        so a kind with a call per item (a turn, a passage) builds no more of them than it may send."""

    def next_prompts(self, case: Case, earlier: Sequence[tuple[Prompt, ParsedVerdict]]) -> Iterable[Prompt]:
        """The next step's prompts, built from every earlier step's prompts and parsed replies; [] when
        no step is left (the default: `prompts` is the only step).  What a step took from the earlier
        replies is in its messages, so in its key: a step is stored and replayed like any call."""
        return []

    def reply_schema(self) -> dict[str, Any] | None:
        """The JSON schema of one reply as the prompt asks for it, or None (no structured output).

        Sent as `response_format` under `--judge-structured` (and then part of every key); the reply is
        parsed all the same.  A kind of your own declares one to get structured output.
        """
        return None

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        """Read one reply; raise `VerdictParseError` (see `parse_failure`) if it holds no answer."""
        return parse_verdict(reply.text, scale=prompt.scale, asked=self.asked(prompt))

    def asked(self, prompt: Prompt) -> Asked:
        """What `prompt` asks the judge for, as the parser needs it: the texts sent (a copy of them in
        the reply is never the verdict), and from the reply schema (the prompt's own, where it has one)
        its field names and whether a verdict was asked (a `verdict` field) or a score; no schema: open.
        """
        schema = self.reply_schema() if prompt.schema is None else prompt.schema[1]
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        fields = tuple(properties) if isinstance(properties, Mapping) else ()
        verdict = None if schema is None else "verdict" in fields
        return Asked(
            [m.get("content", "") for m in prompt.messages], verdict=verdict, fields=fields, answer=self.declared
        )

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        """One outcome from the parsed replies of every prompt, in the order `prompts` gave them."""
        ((_, parsed),) = results
        return Outcome(parsed.score, parsed.reasoning, parsed.verdict, parsed.confidence, dict(details_of(parsed)))

    def stored_logprobs(self, prompt: Prompt, reply: Reply) -> Any:
        """What of the reply's token log-probabilities the verdict file keeps: all by default, or what
        `parse` needs of them (parsing the stored reply must give the same verdict)."""
        return reply.logprobs

    def recorded_forms(self) -> list[Rubric]:
        """Earlier forms of this rubric (same meaning, asked another way) whose stored verdicts stand for
        its own where none of its own is stored: a kind that changes how it asks keeps its recordings
        replaying.  Tried in order after the rubric itself; by default none."""
        return []

    @classmethod
    def from_stored(cls, entry: Mapping[str, Any]) -> list[Rubric]:
        """Rubrics of this kind that may have judged a stored entry (by default: its default arguments)."""
        return [cls()]

    def failure_details(self, outcome: Outcome) -> list[str]:
        """Extra lines for a failure message (failed constraints, weak dimensions, ...)."""
        return []

    def item_name(self, case: Case, prompt: Prompt) -> str:
        """How an error names the call `prompt` asks, in the user's terms (by default its name)."""
        return prompt.name or f"a prompt of {type(self).__name__}"

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items())
        return f"{type(self).__name__}({params})"


# -- the registry of kinds ---------------------------------------------------------------------

DEFAULT_KIND = "score"
_KINDS: dict[str, type[Rubric]] = {}
R = TypeVar("R", bound=type[Rubric])

# Built-in kind name -> the module that defines it, imported on first need: a suite judging with the
# default kind does not pay to load every other kind.
_BUILT_IN = {
    "checklist": "checklist",
    "dimensions": "dimensions",
    "likert": "likert",
    "pairwise": "pairwise",
    "pass_fail": "passfail",
    "questions": "questions",
    "score": "score",
    "template": "template",
    # agents and conversations
    "per_turn": "per_turn",
    "trajectory": "trajectory",
    "answer_relevancy": "rag",
    "context_precision": "rag",
    "context_recall": "rag",
    "faithfulness": "rag",
    "logic_consistency": "logic",
    "reasoning_validity": "logic",
}


def _load_built_in(name: str) -> None:
    module = importlib.import_module(f"{__package__}.{_BUILT_IN[name]}")
    if name not in _KINDS:
        # The module was loaded against another copy of this one (pytest's in-process runs drop the
        # modules they imported, and this registry can be imported anew while the kind's module is
        # not): its class is registered here from the module itself.
        for value in vars(module).values():
            if isinstance(value, type) and getattr(value, "name", None) == name and value.__module__ == module.__name__:
                _KINDS[name] = value
                break


def register_rubric(cls: R) -> R:
    """Class decorator: make a rubric kind findable by its `name` (its `version` and parameters stay in keys)."""
    module = _BUILT_IN.get(cls.name)
    built_in = module is not None and cls.__module__ == f"{__package__}.{module}"
    if module is not None and not built_in and cls.name not in _KINDS:
        _load_built_in(cls.name)  # a built-in name is taken even before its module is loaded
    known = _KINDS.get(cls.name)
    # A built-in kind's module run again (dropped from sys.modules, as pytest's in-process test runs
    # do, then imported anew) registers its new class in place of the old one.
    if known is not None and known is not cls and not built_in:
        raise RubricError(f"rubric name {cls.name!r} is taken by {known.__qualname__}")
    _KINDS[cls.name] = cls
    return cls


def kind_named(name: str) -> type[Rubric] | None:
    """The rubric kind registered as `name` (a built-in kind is loaded on first need), or None."""
    kind = _KINDS.get(name)
    if kind is None and name in _BUILT_IN:
        _load_built_in(name)
        kind = _KINDS.get(name)
    return kind


def rubric_kinds() -> Mapping[str, type[Rubric]]:
    """Every registered rubric kind by name (read-only): what a stored verdict's `rubric` field names."""
    for name in _BUILT_IN:
        kind_named(name)
    return MappingProxyType(_KINDS)


def resolve_rubric(value: Any) -> Rubric:
    """A Rubric instance from what a user passed (None for the default kind, a Rubric, or a Rubric class)."""
    if value is None:
        default = kind_named(DEFAULT_KIND)
        assert default is not None  # a built-in kind
        return default()
    if isinstance(value, Rubric):
        return value
    if isinstance(value, type) and issubclass(value, Rubric):
        try:
            return value()
        except TypeError as exc:
            name = value.__name__
            raise JudgeError(f"rubric {name} needs arguments ({exc}); pass an instance, e.g. {name}(...)") from None
    raise JudgeError(f"rubric must be a Rubric from pytest_llmjudge.rubrics (e.g. Score()), got {value!r}")


# -- pieces every kind's prompts and parsers share -----------------------------------------------

EVALUATOR = (
    "You are an impartial evaluator of the output of an AI system. Judge the output only against the criteria. {rules}"
)
REASONING: Mapping[str, Any] = MappingProxyType({"type": "string"})
NUMBER: Mapping[str, Any] = MappingProxyType({"type": "number"})


def system_prompt(case: Case, instructions: str) -> str:
    """The evaluator's system message: its role, the rule that fenced text is data, then `instructions`."""
    return EVALUATOR.format(rules=data_rules(case.nonce)) + "\n\n" + instructions


def chat(system: str, user: str) -> tuple[Message, ...]:
    """The messages of one judge call: a system message, then a user message."""
    return ({"role": "system", "content": system}, {"role": "user", "content": user})


def ask(case: Case, instructions: str, user: str | None = None, **fields: Any) -> Prompt:
    """One call: the evaluator told `instructions`, the case rendered (or `user`) as the user message."""
    return Prompt(chat(system_prompt(case, instructions), render_case(case) if user is None else user), **fields)


def reply_object(**properties: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON schema of a reply object with these properties, in this order, all required, no others
    (what OpenAI's strict structured output needs; the reasoning comes before the score)."""
    return {
        "type": "object",
        "properties": {name: dict(schema) for name, schema in properties.items()},
        "required": list(properties),
        "additionalProperties": False,
    }


def score_reply() -> dict[str, Any]:
    """The schema of a reasoning and a score: the reply of `Score` and the kinds that ask as it does."""
    return reply_object(reasoning=REASONING, score=NUMBER)


def require(case: Case, kind: str, **needed: str) -> None:
    """A `JudgeError` naming the first argument in `needed` (name -> what it is for) the case lacks."""
    for name, what in needed.items():
        if getattr(case, name) is None:
            raise JudgeError(f"rubric {kind} needs {name}=... ({what}); pass it to assert_judged or judge.score")


def parse_failure(message: str, reply: Reply) -> VerdictParseError:
    """The error a rubric raises for a reply it cannot read (the reply travels with it)."""
    return VerdictParseError(message, reply.text)


@contextmanager
def reading(kind: str, reply: Reply) -> Iterator[None]:
    """Inside, a `VerdictParseError` raised by the parser's pieces names `kind` and carries the reply."""
    try:
        yield
    except VerdictParseError as exc:
        raise parse_failure(f"{kind}: {exc}", reply) from None


def listing(head: str, rows: Iterable[tuple[str, str]]) -> list[str]:
    """Failure lines: `head`, then `  - what: why` per row (no `: why` where no reason was given)."""
    return [head] + [f"  - {what}" + (f": {why}" if why else "") for what, why in rows]


def unit_score(value: Any) -> float | None:
    """A number in [0, 1] from a JSON value (numbers or numeric strings), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    return None


def text_items(kind: str, values: Any) -> tuple[str, ...]:
    """A rubric parameter that is a list of distinct non-empty strings (constraints, questions), stripped."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise RubricError(f"{kind} takes a list of strings, got {type(values).__name__}")
    items = tuple(values)
    if not items:
        raise RubricError(f"{kind} needs at least one item")
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise RubricError(f"{kind}: every item must be a non-empty string, got {item!r}")
    if len(set(items)) != len(items):
        raise RubricError(f"{kind}: items must be distinct")
    return tuple(i.strip() for i in items)


def declaration(what: str, value: Any, meanings: Mapping[str, str] | None, template: Any) -> Answer:
    """The answers a template of the user's own declares (an `Answer`, or a mapping of words to what they mean),
    or a `RubricError` naming the argument `what`: a declaration describes a template, so one must be given."""
    if template is None:
        raise RubricError(f"{what} describes your own template: pass template=... with it")
    try:
        return answer_of(value, meanings)
    except (TypeError, ValueError) as exc:
        raise RubricError(f"{what}: {exc}") from None


def one_of(what: str, value: Any, choices: Sequence[str]) -> None:
    """A `RubricError` unless `value` is one of `choices`, naming the argument `what` and the choices."""
    if value not in choices:
        raise RubricError(f"{what} must be one of {', '.join(choices)}, got {value!r}")
