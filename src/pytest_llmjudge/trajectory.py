"""An agent's trajectory: the tools it called, in order, and `assert_trajectory`, which matches two of them.

Matching is deterministic (no model call), with agentevals' trajectory match modes and argument
modes (the agents page of the docs says each, and where this differs).  The calls one assistant
message makes together have no order among them (parallel calls come back in any order); across
messages, order holds.  Unlike agentevals, it finds the largest pairing of calls, so that a loose
argument rule cannot make a match fail that another pairing would pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .conversation import Message, ToolCall, as_mapping, call_text, messages_of
from .errors import JudgeError, Redacted

ORDERS = ("strict", "unordered", "subset", "superset")
ARGS_MODES = ("exact", "ignore", "subset", "superset")
ArgsMatch = Callable[[str, Any, Any], bool]  # `args=`: (tool name, actual arguments, expected arguments)
ToolArgsMatch = Callable[[Any, Any], bool]  # an `args_by_tool` callable: (actual arguments, expected arguments)
ToolArgsRule = str | Sequence[str] | ToolArgsMatch  # a mode, the (dotted) keys to compare, or a callable


class TrajectoryMismatch(Redacted, AssertionError):
    """The trajectories differ under the modes asked for; the message shows both, side by side."""


TrajectoryMismatch.__module__ = "pytest_llmjudge"


@dataclass(frozen=True)
class Step:
    """One step of a trajectory: a tool call, the tool's result where the trajectory holds it, and the
    index of the assistant message that made it (None: a plain list of calls, which says only their order)."""

    call: ToolCall
    result: str | None = None
    message: int | None = None


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
    steps = steps_from(messages)
    if _plain_calls(value):  # read as one message, but nothing says the calls were made together
        return tuple(dataclasses.replace(step, message=None) for step in steps)
    return steps


def _plain_calls(value: object) -> bool:
    """`[{"name": ..., "arguments": ...}, ...]`: calls with no message, role or item type around them."""
    if not isinstance(value, (list, tuple)):
        return False
    items = [as_mapping(v) for v in value]
    return all(item is not None and not {"role", "type", "raw_item"} & item.keys() for item in items)


def steps_from(messages: Sequence[Message]) -> tuple[Step, ...]:
    """The tool calls of these messages in order, each with the tool result that answers it, if any."""
    steps: list[Step] = []
    latest: range = range(0)  # the steps of the last message that made calls
    for index, message in enumerate(messages):
        if message.tool_calls:
            latest = range(len(steps), len(steps) + len(message.tool_calls))
            steps.extend(Step(call, None, index) for call in message.tool_calls)
        if message.role in ("tool", "function"):
            answered = _answered(message, steps, latest)
            if answered is not None:
                steps[answered] = dataclasses.replace(steps[answered], result=message.content)
    return tuple(steps)


def _answered(result: Message, steps: Sequence[Step], latest: range) -> int | None:
    """The step a tool result answers: the call it names by id; else (no id, as hand-written traces and
    LangChain's older messages have) the first unanswered call of the last message that made calls, of
    the tool it names where it names one.  Results come after the calls they answer, in their order."""
    if result.tool_call_id:
        return next((i for i, s in enumerate(steps) if s.result is None and s.call.id == result.tool_call_id), None)
    pending = [i for i in latest if steps[i].result is None]
    if result.name:
        pending = [i for i in pending if steps[i].call.name == result.name]
    return pending[0] if pending else None


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


def assert_trajectory(
    actual: Any,
    expected: Any,
    *,
    order: str = "strict",
    args: str | ArgsMatch = "exact",
    args_by_tool: Mapping[str, ToolArgsRule] | None = None,
) -> None:
    """Assert that the tool calls of `actual` match those of `expected` (the docs' agents page says each mode).

    `order`: strict, unordered, subset, superset (of actual relative to expected).  `args`: when two
    calls of a tool match (arguments compare as JSON values: `1` is not `true`, `100` is `100.0`):
    exact, ignore, subset (actual's arguments all appear in expected's),
    superset (actual's include all of expected's), or a callable (name, actual, expected).
    `args_by_tool`: the rule for the tools it names (a mode, a list of dotted keys to compare, or a
    callable (actual, expected)); `args` stays the rule for the others.

    Raises `TrajectoryMismatch` (an AssertionError) naming the first step that differs, with both
    trajectories side by side; `JudgeError` for a mode outside the lists, or a value that is no trajectory.
    """
    __tracebackhide__ = True
    if order not in ORDERS:
        raise JudgeError(f"assert_trajectory(order=...) must be one of {', '.join(ORDERS)}; got {order!r}")
    matches = _matcher(args, args_by_tool)
    got, wanted = steps_of(actual, "actual"), steps_of(expected, "expected")
    problem = _problem(got, wanted, order, matches)
    if problem is None:
        return
    how = f"order={order!r}, args={_named(args)}"
    if args_by_tool:
        how += ", args_by_tool={" + ", ".join(f"{k!r}: {_named(v)}" for k, v in args_by_tool.items()) + "}"
    text = f"trajectory does not match ({how}): {problem[0]}\n{_side_by_side(got, wanted, problem[1])}"
    raise TrajectoryMismatch(text + _subset_hint(got, wanted, order, args, args_by_tool))


def _named(rule: object) -> str:
    return repr(rule) if isinstance(rule, (str, list, tuple)) else getattr(rule, "__name__", "callable")


def _subset_hint(
    got: Sequence[Step], wanted: Sequence[Step], order: str, args: Any, by_tool: Mapping[str, Any] | None
) -> str:
    """Where "subset" fails but "superset" would pass: the argument modes changed direction, say so."""
    if args != "subset" and "subset" not in (by_tool or {}).values():
        return ""
    flipped = {k: "superset" if v == "subset" else v for k, v in (by_tool or {}).items()}
    if _problem(got, wanted, order, _matcher("superset" if args == "subset" else args, flipped)) is not None:
        return ""
    return (
        "\n  (args 'subset' means every argument of the actual call appears in the expected one, as agentevals' "
        "tool_args_match_mode does; expected's arguments within actual's is 'superset', under which this matches)"
    )


# -- when two calls of a tool match ------------------------------------------------------------------


def _matcher(args: str | ArgsMatch, by_tool: Mapping[str, ToolArgsRule] | None) -> ArgsMatch:
    """One rule (name, actual, expected) -> bool from `args` and the per-tool rules of `args_by_tool`."""
    if callable(args):
        default = args
    elif args in ARGS_MODES:
        default = _ignoring_name(_MODES[args])
    else:
        raise JudgeError(
            f"assert_trajectory(args=...) must be one of {', '.join(ARGS_MODES)} or a callable (name, actual, "
            f"expected); got {args!r}"
        )
    if by_tool is None:
        return default
    if not isinstance(by_tool, Mapping):
        raise JudgeError(
            f"assert_trajectory(args_by_tool=...) must be a dict of tool name -> rule; got {type(by_tool).__name__}"
        )
    rules = {name: _tool_rule(name, rule) for name, rule in by_tool.items()}

    def matches(name: str, actual: Any, expected: Any) -> bool:
        rule = rules.get(name)
        return default(name, actual, expected) if rule is None else rule(actual, expected)

    return matches


def _ignoring_name(rule: ToolArgsMatch) -> ArgsMatch:
    return lambda name, actual, expected: rule(actual, expected)


def _tool_rule(name: str, rule: object) -> ToolArgsMatch:
    if isinstance(rule, str) and rule in _MODES:
        return _MODES[rule]
    if callable(rule):
        return lambda actual, expected: bool(rule(actual, expected))
    if isinstance(rule, (list, tuple)) and rule and all(isinstance(k, str) and k for k in rule):
        keys = [key.split(".") for key in rule]
        return lambda actual, expected: all(json_equal(_at(actual, path), _at(expected, path)) for path in keys)
    raise JudgeError(
        f"assert_trajectory(args_by_tool={{{name!r}: ...}}) must be one of {', '.join(ARGS_MODES)}, a list of the "
        f'argument keys to compare (dotted for nested ones: ["time.start"]), or a callable (actual, expected); '
        f"got {rule!r}"
    )


def _at(arguments: Any, path: Sequence[str]) -> Any:
    """The value at a dotted key path, or None where the path leads nowhere (as in agentevals)."""
    for part in path:
        if not isinstance(arguments, Mapping):
            return None
        arguments = arguments.get(part)
    return arguments


def json_equal(a: Any, b: Any) -> bool:
    """Whether two argument values are the same JSON value: the same type, and equal (objects key by key,
    arrays item by item).  Python's `==` says `1 == True` and `0 == False`; JSON does not, nor does a
    tool that checks its schema.  Numbers are JSON's one number type: `100` and `100.0` are the same
    number (as JSON Schema's `const` and every JSON parser that reads both as a double have it)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return (
            isinstance(a, Mapping)
            and isinstance(b, Mapping)
            and a.keys() == b.keys()
            and all(json_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (
            isinstance(a, (list, tuple))
            and isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(a == b)  # strings, None (arguments are plain JSON data: see `conversation._call`)


def _within(inner: Any, outer: Any) -> bool:
    """Every argument of `inner` is among those of `outer`, with the same JSON value (non-objects: equal)."""
    if isinstance(inner, Mapping) and isinstance(outer, Mapping):
        return all(k in outer and json_equal(outer[k], v) for k, v in inner.items())
    return json_equal(inner, outer)


_MODES: dict[str, ToolArgsMatch] = {
    "exact": json_equal,
    "ignore": lambda actual, expected: True,
    "subset": _within,
    "superset": lambda actual, expected: _within(expected, actual),
}


# -- which calls must match --------------------------------------------------------------------------

Marks = set[tuple[str, int]]  # the steps to mark: ("actual" or "expected", index)


def _same(a: ToolCall, e: ToolCall, matches: ArgsMatch) -> bool:
    return a.name == e.name and matches(a.name, a.arguments, e.arguments)


def _problem(got: Sequence[Step], wanted: Sequence[Step], order: str, matches: ArgsMatch) -> tuple[str, Marks] | None:
    """What differs, and the steps to mark; None when they match."""
    a, e = [s.call for s in got], [s.call for s in wanted]
    if order == "strict":
        return _strict(got, wanted, matches)
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


def _strict(got: Sequence[Step], wanted: Sequence[Step], matches: ArgsMatch) -> tuple[str, Marks] | None:
    """Message by message, in order, each message's calls in any order.  A plain list of calls says
    nothing of messages: it is cut as the other side's messages are (one call each where both are plain)."""
    a, e = [s.call for s in got], [s.call for s in wanted]
    ga, ge = _groups(got), _groups(wanted)
    if ga is None:
        ga = _cut(len(a), ge)
    if ge is None:
        ge = _cut(len(e), ga)
    for k in range(max(len(ga), len(ge))):
        if k >= len(ga):
            j = ge[k][0]
            return f"step {j + 1}: expected {call_text(e[j])}, but actual has no step {j + 1}", _marked(
                "expected", ge[k]
            )
        if k >= len(ge):
            i = ga[k][0]
            return f"step {i + 1}: actual has {call_text(a[i])}, but expected ends at step {i}", _marked(
                "actual", ga[k]
            )
        pairs = _pairing([a[i] for i in ga[k]], [e[j] for j in ge[k]], matches)
        lone_a = [ga[k][x] for x in range(len(ga[k])) if x not in pairs]
        lone_e = [ge[k][y] for y in range(len(ge[k])) if y not in pairs.values()]
        marks = _marked("actual", lone_a) | _marked("expected", lone_e)
        together = " (the calls of one message match in any order)" if max(len(ga[k]), len(ge[k])) > 1 else ""
        if lone_a and lone_e:
            i, j = lone_a[0], lone_e[0]
            return f"step {i + 1}: actual {call_text(a[i])}, expected {call_text(e[j])}{together}", marks
        if lone_e:
            j = lone_e[0]
            where = f"expected makes {_steps(ge[k])} in one message, actual {_steps(ga[k])}"
            return f"{where}: expected step {j + 1} {call_text(e[j])} has no matching call there", marks
        if lone_a:
            i = lone_a[0]
            where = f"actual makes {_steps(ga[k])} in one message, expected {_steps(ge[k])}"
            return f"{where}: actual step {i + 1} {call_text(a[i])} has no matching call there", marks
    return None


def _groups(steps: Sequence[Step]) -> list[list[int]] | None:
    """The steps' indexes, message by message; None for a plain list of calls."""
    if any(s.message is None for s in steps):
        return None
    groups: list[list[int]] = []
    for i, step in enumerate(steps):
        if groups and steps[groups[-1][0]].message == step.message:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _cut(n: int, like: list[list[int]] | None) -> list[list[int]]:
    """`n` plain steps cut into groups the sizes of `like`'s (one step each past them, or with no `like`)."""
    groups, start = [], 0
    for size in [len(g) for g in like or ()]:
        if start >= n:
            break
        groups.append(list(range(start, min(start + size, n))))
        start += size
    return groups + [[i] for i in range(start, n)]


def _marked(side: str, indexes: Sequence[int]) -> Marks:
    return {(side, i) for i in indexes}


def _steps(indexes: Sequence[int]) -> str:
    return f"step {indexes[0] + 1}" if len(indexes) == 1 else f"steps {indexes[0] + 1}-{indexes[-1] + 1}"


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


def _side_by_side(got: Sequence[Step], wanted: Sequence[Step], marks: Marks) -> str:
    width = 48
    a, e = [s.call for s in got], [s.call for s in wanted]

    def together(steps: Sequence[Step], i: int) -> bool:  # made in one message with the step above
        return i > 0 and steps[i].message is not None and steps[i].message == steps[i - 1].message

    def cell(steps: Sequence[Step], calls: list[ToolCall], i: int, side: str) -> str:
        if i >= len(calls):
            return "-"
        text = ("+ " if together(steps, i) else "") + call_text(calls[i])
        text = text if len(text) <= width else text[: width - 3] + "..."
        return ("* " if (side, i) in marks else "  ") + text

    rows = [f"  {'#':>3}  {'actual':<{width + 2}}  expected"]
    for i in range(max(len(a), len(e), 1)):
        left, right = cell(got, a, i, "actual"), cell(wanted, e, i, "expected")
        rows.append(f"  {i + 1:>3}  {left:<{width + 2}}  {right}")
    legend = "* marks the steps that differ"
    if any(together(got, i) for i in range(len(got))) or any(together(wanted, i) for i in range(len(wanted))):
        legend += "; + a call made in one message with the step above"
    rows.append(f"  ({legend})")
    return "\n".join(rows)
