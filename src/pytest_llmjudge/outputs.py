"""What an output under test is judged as: the text the judge sees, the same in every process.

Strings are judged as they are, dicts and lists as JSON, other objects as their ``str()``.  Three
kinds of value get more care:

- Responses as the LLM SDKs return them (OpenAI, Anthropic, LiteLLM; objects or dicts, recognized by
  shape) are judged by their answer: the text, and tool calls as JSON; thinking and reasoning are
  how the model got there, not the answer the application shows, and are left out.
- A conversation (a list of chat messages, at least one with a role; see `conversation`) is
  judged as its role-labelled transcript.
- The text is hashed into the verdict key, so it must not depend on the process: data is shown in its
  canonical form (`canonical`: sets sorted; a cycle or a value shown by its memory address refused).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .canonical import dumps, stable_str
from .conversation import as_mapping, is_conversation, messages_of, parsed_arguments, transcript
from .errors import JudgeError

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def judged_text(value: object, what: str) -> str:
    """The text `value` is judged as; JudgeError for a value that has none or no stable one."""
    if value is None:
        raise JudgeError(f"{what} is None: pass the text to judge (did the code under test return nothing?)")
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise JudgeError(f"{what} is {type(value).__name__}: decode it to text before judging it")
    if isinstance(value, str):
        text = value
    else:
        answer = _sdk_answer(value, what)
        if answer is not None:
            text = answer
        elif is_conversation(value):
            text = transcript(messages_of(value, what) or ())
        elif isinstance(value, (dict, list, tuple, set, frozenset)):
            text = dumps(value, what, indent=2)
        else:
            text = stable_str(value, what)
    # Lone surrogates cannot be encoded, stored or sent; each becomes one replacement character.
    return _LONE_SURROGATE.sub("\ufffd", text)


# -- responses as the SDKs return them ------------------------------------------------------------


def _sdk_answer(value: object, what: str) -> str | None:
    """The answer in an SDK response, or None when `value` is not shaped like one."""
    data = as_mapping(value)
    if data is None:
        return None
    choices = data.get("choices")
    if isinstance(choices, Sequence) and choices and all(isinstance(c, Mapping) and "message" in c for c in choices):
        if len(choices) > 1:
            raise JudgeError(
                f"{what} is a chat completion with {len(choices)} choices: judge each one "
                "(e.g. `[c.message for c in response.choices]`), or the one the application shows"
            )
        message = choices[0].get("message")
        if isinstance(message, Mapping):
            return _chat_message(message, what, finish=choices[0].get("finish_reason"))
    if data.get("type") == "message" and data.get("role") == "assistant" and isinstance(data.get("content"), list):
        nothing = f"stop_reason {data.get('stop_reason')!r}"
        return _answer(data["content"], what, "an Anthropic message", nothing)
    if data.get("object") == "response" and isinstance(data.get("output"), list):
        return _answer(data["output"], what, "a Responses API response", "no message or function_call output")
    if data.get("role") == "assistant" and "content" in data and ("tool_calls" in data or "refusal" in data):
        return _chat_message(data, what, finish=None)  # a chat message on its own (`choices[0].message`)
    return None


def _chat_message(message: Mapping[str, Any], what: str, *, finish: object) -> str:
    content = message.get("content")
    parts = content if isinstance(content, list) else [{"text": content}]  # content parts count by their text
    blocks = [{"type": "text", "text": p.get("text")} for p in parts if isinstance(p, Mapping)]
    blocks += [{**call, "type": "function"} for call in message.get("tool_calls") or [] if isinstance(call, Mapping)]
    refusal = message.get("refusal")
    nothing = f"refusal: {refusal!r}" if refusal else f"finish_reason {finish!r}"
    return _answer(blocks, what, "a chat completion", nothing)


def _answer(blocks: list[Any], what: str, kind: str, nothing: str) -> str:
    """The texts of an answer's blocks, then its tool calls as JSON (text: Anthropic's `text`, a Responses
    `message`'s `output_text`; calls: Anthropic's `tool_use`, a Responses `function_call`, a chat `function`)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        kind_of = block.get("type") if isinstance(block, Mapping) else None
        if kind_of == "message":
            pieces = [
                p for p in block.get("content") or [] if isinstance(p, Mapping) and p.get("type") == "output_text"
            ]
            texts.extend(p["text"] for p in pieces if isinstance(p.get("text"), str))
        elif kind_of == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind_of == "tool_use":
            calls.append({"name": block.get("name"), "arguments": block.get("input")})
        elif kind_of == "function_call":
            calls.append({"name": block.get("name"), "arguments": parsed_arguments(block.get("arguments"))})
        elif kind_of == "function" and isinstance(block.get("function"), Mapping):
            function = block["function"]
            calls.append({"name": function.get("name"), "arguments": parsed_arguments(function.get("arguments"))})
    parts = [t for t in texts if t.strip()]
    if calls:
        parts.append(dumps({"tool_calls": calls}, what, indent=2))
    if not parts:
        raise JudgeError(f"{what} is {kind} with no text and no tool calls ({nothing}): there is nothing to judge")
    return "\n\n".join(parts)
