"""Conversations and agent runs as plain messages, whatever framework produced them.

`messages_of` reads OpenAI chat messages (with `tool_calls` and `tool` results), Responses API items
(`*_call` / `*_output`; an OpenAI Agents SDK run item's `raw_item`), Anthropic messages (`text`,
`tool_use` and `tool_result` blocks), LangChain / LangGraph messages (objects, `model_dump()`s or
the serialized `constructor` form) and plain tool calls into `Message`s, by shape (no SDK is
imported), leaving out reasoning and thinking items.

`transcript` is how a conversation is judged: one role-labelled line per message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .canonical import dumps, plain
from .errors import JudgeError

# The roles a chat message may have (OpenAI's, and Anthropic's two); anything else is not a chat message.
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
# LangChain message types -> roles: a message's `model_dump()` `type`, or its class name when serialized
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "function"}
_LANGCHAIN_ROLES |= {
    f"{cls}Message{chunk}": role
    for cls, role in (("Human", "user"), ("AI", "assistant"), ("System", "system"), ("Tool", "tool"))
    for chunk in ("", "Chunk")
}


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool: its name, its arguments (the object they encode, where they are JSON) and id."""

    name: str
    arguments: Any
    id: str | None = None


@dataclass(frozen=True)
class Message:
    """One message: who said it, its text, the tools it called, and which call a tool result answers."""

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    name: str | None = None
    tool_call_id: str | None = None


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """`value` as a mapping: itself, or a pydantic model's `model_dump()` (the SDKs' objects); else None."""
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)  # pydantic models: the OpenAI and Anthropic SDKs, LiteLLM, LangChain
    if callable(dump):
        try:
            dumped = dump()
        except Exception:  # noqa: BLE001 - not an SDK object after all: judged as it is
            return None
        return dumped if isinstance(dumped, Mapping) else None
    return None


def parsed_arguments(raw: object) -> object:
    """Tool-call arguments arrive as a JSON string; the object they encode where they parse."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def is_conversation(value: object) -> bool:
    """Whether `value` is a list of chat messages, at least one with a role (tool calls alone stay plain data)."""
    if not isinstance(value, (list, tuple)) or not value:
        return False
    for item in (as_mapping(v) for v in value):
        if item is not None and "raw_item" in item:
            item = as_mapping(item["raw_item"])
        if item is not None and _role(item) is not None:
            return True
    return False


def messages_of(value: object, what: str) -> tuple[Message, ...] | None:
    """The messages of a conversation or agent run, or None when `value` is not one (text, plain data).

    `value` is a list of messages or items, or one response (a chat completion or LiteLLM
    `ModelResponse`, an Anthropic `Message`, a Responses API `Response`, one chat message) or a
    mapping with a `messages` list (a LangGraph state).  Once any item of a list is a message,
    every item must be one: JudgeError names the first that is not.
    """
    if not isinstance(value, (list, tuple)):
        value = _items_of(value)
    if not value:
        return None
    items = [as_mapping(v) for v in value]
    if not any(m is not None and _telling(m) for m in items):
        return None  # plain data: no item is a message, a run item, a tool call or a tool result
    messages: list[Message] = []
    for index, item in enumerate(items):
        where = f"{what}[{index}]"
        if item is None or not _recognized(item):
            role = item.get("role") if item is not None else None
            if role is not None:
                raise JudgeError(
                    f"{where} has the role {str(role)[:40]!r}, which is no chat role: each message's role is one "
                    f"of {', '.join(sorted(ROLES))}"
                )
            raise JudgeError(
                f"{where} is not a chat message: it has no role (each message of a conversation needs one, "
                f'e.g. {{"role": "user", "content": ...}}), and is no tool call or tool result either'
            )
        _add(messages, item, where)
    return _named_results(messages)


def _items_of(value: object) -> Sequence[Any] | None:
    """The items of one response or state: its messages, or None when `value` holds none."""
    data = as_mapping(value)
    if data is None:
        return None
    choices = data.get("choices")
    if isinstance(choices, Sequence) and len(choices) == 1:  # a chat completion, LiteLLM's ModelResponse
        message = as_mapping(choices[0])
        return [message["message"]] if message is not None and "message" in message else None
    if data.get("object") == "response" and isinstance(data.get("output"), list):  # the Responses API
        return list(data["output"])
    if isinstance(data.get("messages"), list):  # a LangGraph state, an agentevals record
        return list(data["messages"])
    return [data] if _role(data) is not None else None  # one message (an Anthropic `Message` among them)


def transcript(messages: Sequence[Message]) -> str:
    """The conversation as the judge reads it: `role: text` per message, tool calls and results labelled."""
    lines = []
    for message in messages:
        if message.role == "tool":
            label = f"tool result ({message.name})" if message.name else "tool result"
            lines.append(f"{label}: {_indented(message.content)}")
            continue
        if message.content.strip() or not message.tool_calls:
            lines.append(f"{message.role}: {_indented(message.content)}")
        for call in message.tool_calls:
            lines.append(f"{message.role} calls {call_text(call)}")
    return "\n".join(lines)


def call_text(call: ToolCall) -> str:
    """`name(arguments as JSON)`: one tool call on one line (the arguments are plain data: see `_call`)."""
    return f"{call.name}({json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)})"


def _indented(text: str) -> str:
    # A message's own newlines must not start what reads as a new message.
    return text.strip().replace("\n", "\n  ")


# -- shapes -------------------------------------------------------------------------------------------


def _role(item: Mapping[str, Any]) -> str | None:
    role = item.get("role")
    if isinstance(role, str) and role in ROLES:
        return role
    kind = item.get("type")
    if kind == "constructor" and isinstance(item.get("id"), list) and item["id"]:
        kind = item["id"][-1]
    if isinstance(kind, str) and kind in _LANGCHAIN_ROLES and ("content" in item or "kwargs" in item):
        return _LANGCHAIN_ROLES[kind]
    return None


def _telling(item: Mapping[str, Any]) -> bool:
    """An item only a conversation or a run holds: a message, a run item, a tool call or result."""
    kind = item.get("type")
    if isinstance(kind, str) and kind.endswith(("_call", "_output")) and "call_id" in item:
        return True
    return _role(item) is not None or "raw_item" in item or kind == "function" or _call_field(item) is not None


def _recognized(item: Mapping[str, Any]) -> bool:
    """A message, a run item, a tool call or a tool result (a typed item of a run counts, as its kind)."""
    if _role(item) is not None:
        return True
    raw = item.get("raw_item")  # an OpenAI Agents SDK run item
    if raw is not None:
        inner = as_mapping(raw)
        return inner is not None and _recognized(inner)
    return isinstance(item.get("type"), str) or _call_field(item) is not None


def _call_field(item: Mapping[str, Any]) -> str | None:
    """Where `{"name": ..., "arguments": ...}` (or `args`, `input`), a tool call on its own, keeps its
    arguments; None when `item` is no such call."""
    if "role" in item or "type" in item:
        return None
    return next((field for field in ("arguments", "args", "input") if field in item), None)


def _plain_call(item: Mapping[str, Any], field: str, where: str) -> ToolCall:
    """The tool call `item` is (see `_call_field`), its name checked."""
    return _call(_name(item, where), item[field], _text_or_none(item.get("id")), where)


def _add(messages: list[Message], item: Mapping[str, Any], where: str) -> None:
    raw = item.get("raw_item")
    if raw is not None and _role(item) is None:
        if item.get("type") != "tool_approval_item":  # an approval asked for a call already listed
            _add(messages, as_mapping(raw) or {}, where)
        return
    if item.get("type") == "constructor":  # a serialized LangChain message: its fields are in `kwargs`
        item = {**(as_mapping(item.get("kwargs")) or {}), "type": item["id"][-1]}
    role = _role(item)
    if role is not None:
        _message(messages, role, item, where)
        return
    kind = item.get("type")
    if kind == "function":  # one of a chat message's `tool_calls`, on its own
        _call_into(messages, _chat_call(item, where))
    elif isinstance(kind, str) and kind.endswith("_call"):
        # A Responses API tool call: a function's, a custom or MCP tool's (named), or a hosted tool's
        # (web search, code interpreter, ...: named by its kind).
        name = _name(item, where) if "name" in item else kind.removesuffix("_call")
        arguments = next((item[k] for k in ("arguments", "input", "action", "code") if k in item), None)
        _call_into(messages, _call(name, arguments, _call_id(item), where))
    elif isinstance(kind, str) and kind.endswith("_output"):
        result = item.get("output", item.get("result"))
        messages.append(Message("tool", _text(result, f"{where}.output"), tool_call_id=_call_id(item)))
    elif kind is None:
        field = _call_field(item)
        assert field is not None  # _recognized said so
        _call_into(messages, _plain_call(item, field, where))
    # any other typed item (reasoning, a compaction, a hosted program) is how the run went, not a step


def _message(messages: list[Message], role: str, item: Mapping[str, Any], where: str) -> None:
    texts: list[str] = []
    calls: list[ToolCall] = []
    content = item.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif content is not None and not isinstance(content, list):  # a number, an object: judged as its JSON
        texts.append(_text(content, f"{where}.content"))
    elif isinstance(content, list):
        for index, part in enumerate(content):
            block, at = as_mapping(part), f"{where}.content[{index}]"
            if block is None:  # a bare part: a string is text, anything else its JSON
                if part is not None:
                    texts.append(_text(part, at))
                continue
            kind = block.get("type")
            if kind in ("tool_use", "server_tool_use"):  # Anthropic: the assistant calls a tool
                calls.append(_call(_name(block, at), block.get("input"), _text_or_none(block.get("id")), at))
            elif kind == "tool_result":  # Anthropic: a tool's result, sent in a user message
                answers = _text_or_none(block.get("tool_use_id"))
                messages.append(Message("tool", _text(block.get("content"), at), tool_call_id=answers))
            elif isinstance(block.get("text"), str) and kind not in ("thinking", "reasoning"):
                texts.append(block["text"])
    calls.extend(
        _chat_call(as_mapping(raw) or {}, f"{where}.tool_calls[{i}]")
        for i, raw in enumerate(item.get("tool_calls") or ())
    )
    text = "\n".join(t for t in texts if t.strip())
    if not text and not calls and any(m.role == "tool" for m in messages[-1:]) and role == "user":
        return  # a user message that only carried tool results
    name = _text_or_none(item.get("name"))
    call_id = _text_or_none(item.get("tool_call_id"))
    messages.append(Message(role, text, tuple(calls), name, call_id))


def _chat_call(call: Mapping[str, Any], where: str) -> ToolCall:
    """One of a chat message's `tool_calls`: OpenAI's `{"id", "function": {"name", "arguments"}}`, or
    LangChain's `{"name", "args", "id"}`."""
    named = as_mapping(call.get("function")) or call
    return _call(_name(named, where), named.get("args", named.get("arguments")), _call_id(call), where)


def _call(name: str, arguments: object, call_id: str | None, where: str) -> ToolCall:
    """A tool call with its arguments parsed (a JSON string gives the object it encodes) and made plain
    data, the same in every run: they are shown, matched and keyed (a set in them is sorted)."""
    return ToolCall(name, plain(parsed_arguments(arguments), f"{where}.arguments"), call_id)


def _named_results(messages: list[Message]) -> tuple[Message, ...]:
    """Each tool result named by the call it answers, where the result does not name its tool itself."""
    names = {c.id: c.name for m in messages for c in m.tool_calls if c.id}
    return tuple(
        Message(m.role, m.content, m.tool_calls, names[m.tool_call_id], m.tool_call_id)
        if m.role == "tool" and m.name is None and m.tool_call_id in names
        else m
        for m in messages
    )


def _call_into(messages: list[Message], call: ToolCall) -> None:
    """A tool call item joins the assistant message before it (one turn), or starts one."""
    last = messages[-1] if messages else None
    if last is not None and last.role == "assistant":
        messages[-1] = Message("assistant", last.content, (*last.tool_calls, call), last.name, last.tool_call_id)
    else:
        messages.append(Message("assistant", "", (call,)))


def _name(item: Mapping[str, Any], where: str) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise JudgeError(f"{where} holds a tool call without a tool name: every step of a trajectory needs one")
    return name


def _call_id(item: Mapping[str, Any]) -> str | None:
    return _text_or_none(item.get("call_id", item.get("id")))


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(value: object, where: str) -> str:
    """A tool result's (or a message's non-text content's) text: a string, text blocks joined, or anything
    else as its canonical JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        blocks = [as_mapping(v) for v in value]
        if blocks and all(b is not None and isinstance(b.get("text"), str) for b in blocks):
            return "\n".join(b["text"] for b in blocks if b is not None)
    return dumps(value, where, sort_keys=True)
