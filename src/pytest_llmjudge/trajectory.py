"""An agent's trajectory: the tools it called, in order, and `assert_trajectory`, which matches two of them.

Matching is deterministic (no model call), with agentevals' trajectory match modes (the agents page
of the docs says each, and where this differs); unlike agentevals, it finds the largest pairing of
calls, so that a loose `args` cannot make a match fail that another pairing would pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .conversation import Message, ToolCall, call_text, messages_of
from .errors import JudgeError, Redacted

ORDERS = ("strict", "unordered", "subset", "superset")
ARGS_MODES = ("exact", "ignore", "subset")
ArgsMatch = Callable[[str, Any, Any], bool]


class TrajectoryMismatch(Redacted, AssertionError):
    """The trajectories differ under the modes asked for; the message shows both, side by side."""


TrajectoryMismatch.__module__ = "pytest_llmjudge"


@dataclass(frozen=True)
class Step:
    """One step of a trajectory: a tool call, and the tool's result where the trajectory holds it."""

    call: ToolCall
    result: str | None = None


def steps_of(value: object, what: str) -> tuple[Step, ...]:
    """The tool calls of a trajectory in order, each with its result where one answers it."""
    if isinstance(value, (list, tuple)) and not value:
        return ()
    messages = messages_of(value, what)
    if messages is None:
        raise JudgeError(
            f"{what} is not a trajectory: pass chat messages with tool_calls, a Responses API output, Anthropic "
            f'messages with tool_use blocks, a LiteLLM response, or a list of {{"name": ..., "arguments": ...}}; '
            f"got {type(value).__name__}"
        )
    return steps_from(messages)


def steps_from(messages: Sequence[Message]) -> tuple[Step, ...]:
    """The tool calls of these messages in order, each with the tool result that answers it, if any."""
    calls: list[ToolCall] = []
    results: list[str | None] = []
    for message in messages:
        calls.extend(message.tool_calls)
        results.extend(None for _ in message.tool_calls)
        if message.role == "tool":
            # The call it answers by id, else (a result without one) the earliest call still unanswered.
            pending = [i for i, r in enumerate(results) if r is None]
            by_id = [i for i in pending if message.tool_call_id and calls[i].id == message.tool_call_id]
            answered = by_id or ([] if message.tool_call_id else pending)
            if answered:
                results[answered[0]] = message.content
    steps = [Step(call, result) for call, result in zip(calls, results, strict=True)]
    return tuple(steps)


def steps_text(steps: Sequence[Step]) -> str:
    """Numbered steps, each a tool call with its arguments, and its result where there is one."""
    if not steps:
        return "(no tool calls)"
    lines = []
    for number, step in enumerate(steps, 1):
        lines.append(f"{number}. {call_text(step.call)}")
        if step.result is not None:
            lines.append("   result: " + step.result.strip().replace("\n", "\n   "))
    return "\n".join(lines)


def assert_trajectory(actual: Any, expected: Any, *, order: str = "strict", args: str | ArgsMatch = "exact") -> None:
    """Assert that the tool calls of `actual` match those of `expected` (see the module for the modes).

    Raises `TrajectoryMismatch` (an AssertionError) naming the first step that differs, with both
    trajectories side by side; `JudgeError` for an `order` or `args` outside the lists, or a value
    that is no trajectory.
    """
    __tracebackhide__ = True
    if order not in ORDERS:
        raise JudgeError(f"assert_trajectory(order=...) must be one of {', '.join(ORDERS)}; got {order!r}")
    matches = _args_match(args)
    got, wanted = steps_of(actual, "actual"), steps_of(expected, "expected")
    a, e = [s.call for s in got], [s.call for s in wanted]
    problem = _problem(a, e, order, matches)
    if problem is not None:
        how = f"order={order!r}, args={args if isinstance(args, str) else getattr(args, '__name__', 'callable')!r}"
        raise TrajectoryMismatch(f"trajectory does not match ({how}): {problem[0]}\n{_side_by_side(a, e, problem[1])}")


def _args_match(args: str | ArgsMatch) -> ArgsMatch:
    if callable(args):
        return args
    if args == "exact":
        return lambda name, actual, expected: bool(actual == expected)
    if args == "ignore":
        return lambda name, actual, expected: True
    if args == "subset":
        return lambda name, actual, expected: _contains(actual, expected)
    choices = ", ".join(ARGS_MODES)
    raise JudgeError(
        f"assert_trajectory(args=...) must be one of {choices} or a callable (name, actual, expected); got {args!r}"
    )


def _contains(actual: Any, expected: Any) -> bool:
    """Every expected argument is among the actual ones, with the same value (non-objects: equal)."""
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        return all(k in actual and actual[k] == v for k, v in expected.items())
    return bool(actual == expected)


def _same(a: ToolCall, e: ToolCall, matches: ArgsMatch) -> bool:
    return a.name == e.name and matches(a.name, a.arguments, e.arguments)


def _problem(
    a: list[ToolCall], e: list[ToolCall], order: str, matches: ArgsMatch
) -> tuple[str, set[tuple[str, int]]] | None:
    """What differs, and the steps to mark ("actual" or "expected", index); None when they match."""
    if order == "strict":
        for i in range(max(len(a), len(e))):
            if i >= len(a):
                return f"step {i + 1}: expected {call_text(e[i])}, but actual has no step {i + 1}", {("expected", i)}
            if i >= len(e):
                return f"step {i + 1}: actual has {call_text(a[i])}, but expected ends at step {i}", {("actual", i)}
            if not _same(a[i], e[i], matches):
                both = {("actual", i), ("expected", i)}
                return f"step {i + 1}: actual {call_text(a[i])}, expected {call_text(e[i])}", both
        return None
    pairs = _pairing(a, e, matches)
    lone_a = [i for i in range(len(a)) if i not in pairs]
    lone_e = sorted(set(range(len(e))) - set(pairs.values()))
    marks = {("actual", i) for i in lone_a} | {("expected", j) for j in lone_e}
    if order in ("unordered", "superset") and lone_e:
        j = lone_e[0]
        return f"expected step {j + 1} {call_text(e[j])} has no matching call in actual", marks
    if order in ("unordered", "subset") and lone_a:
        i = lone_a[0]
        return f"actual step {i + 1} {call_text(a[i])} has no matching call in expected", marks
    return None


def _pairing(a: list[ToolCall], e: list[ToolCall], matches: ArgsMatch) -> dict[int, int]:
    """The largest pairing of actual to expected calls that match, each used once (augmenting paths)."""
    fits = [[j for j in range(len(e)) if _same(call, e[j], matches)] for call in a]
    owner: dict[int, int] = {}  # expected index -> actual index

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(a)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def _side_by_side(a: list[ToolCall], e: list[ToolCall], marks: set[tuple[str, int]]) -> str:
    width = 48

    def cell(calls: list[ToolCall], i: int, side: str) -> str:
        if i >= len(calls):
            return "-"
        text = call_text(calls[i])
        text = text if len(text) <= width else text[: width - 3] + "..."
        return ("* " if (side, i) in marks else "  ") + text

    rows = [f"  {'#':>3}  {'actual':<{width + 2}}  expected"]
    for i in range(max(len(a), len(e), 1)):
        rows.append(f"  {i + 1:>3}  {cell(a, i, 'actual'):<{width + 2}}  {cell(e, i, 'expected')}")
    rows.append("  (* marks the steps that differ)")
    return "\n".join(rows)
