"""What an output is judged as: SDK responses by their answer, the same text in every process."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from pytest_llmjudge.errors import JudgeError
from pytest_llmjudge.outputs import judged_text


class Shown:
    def __str__(self) -> str:
        return "shown by its own __str__"


@pytest.mark.parametrize(
    "value",
    [
        "plain text",
        "unicode: déjà vu, 日本語, emoji 🙂",
        {"answer": "yes", "nested": {"list": [1, 2.5, None, True]}, "z": 1, "a": 2},
        [1, "two", {"three": 3}],
        ("a", "tuple"),
        {"not_a_number": math.nan},
        42,
        3.5,
        Shown(),
    ],
)
def test_values_without_sets_are_judged_as_before(value):
    """The text of everything but sets and SDK responses is what it always was (keys unchanged)."""
    if isinstance(value, (dict, list, tuple)):
        before = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    else:
        before = value if isinstance(value, str) else str(value)
    assert judged_text(value, "output") == before


def test_a_lone_surrogate_becomes_one_replacement_character():
    assert judged_text("a\ud800b", "output") == "a\ufffdb"


@pytest.mark.parametrize("value, message", [(None, "is None"), (b"raw", "is bytes"), (bytearray(b"x"), "bytearray")])
def test_values_with_no_text_are_errors(value, message):
    with pytest.raises(JudgeError, match=message):
        judged_text(value, "output")


def test_an_object_shown_by_its_memory_address_is_refused():
    class Opaque:
        pass

    with pytest.raises(JudgeError, match="memory address.*differs in every run"):
        judged_text(Opaque(), "output")
    with pytest.raises(JudgeError, match="memory address"):
        judged_text({"inner": Opaque()}, "output")


def test_sets_are_sorted():
    text = judged_text({"tags": {"b", "c", "a"}, "ids": frozenset({3, 1, 2}), "mixed": {1, "1"}}, "output")
    assert json.loads(text) == {
        "tags": ["a", "b", "c"],
        "ids": [1, 2, 3],
        "mixed": ["1", 1],
    }  # by JSON text: '"1"' < '1'


def test_a_set_gives_the_same_text_whatever_the_hash_seed():
    code = (
        "from pytest_llmjudge.outputs import judged_text; "
        "print(judged_text({'tags': {'refund', 'shoes', 'policy', 'days', 'q', 'z', 'k'}}, 'output'))"
    )
    texts = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        texts.add(done.stdout)
    assert len(texts) == 1, texts


# -- SDK responses, built from the real SDK classes --------------------------------------------------

CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Returns are accepted within 30 days."},
        }
    ],
}

TOOL_CHAT = {
    **CHAT,
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "refund", "arguments": '{"order": "A-17", "amount": 40}'},
                    }
                ],
            },
        }
    ],
}


def test_an_openai_chat_completion_is_judged_by_its_text():
    openai = pytest.importorskip("openai")
    completion = openai.types.chat.ChatCompletion.model_validate(CHAT)
    assert judged_text(completion, "output") == "Returns are accepted within 30 days."
    assert judged_text(completion.choices[0].message, "output") == "Returns are accepted within 30 days."
    assert judged_text(CHAT, "output") == "Returns are accepted within 30 days.", "the dict form too"


def test_tool_calls_are_judged_as_json():
    openai = pytest.importorskip("openai")
    completion = openai.types.chat.ChatCompletion.model_validate(TOOL_CHAT)
    assert json.loads(judged_text(completion, "output")) == {
        "tool_calls": [{"name": "refund", "arguments": {"order": "A-17", "amount": 40}}]
    }


def test_a_litellm_model_response_is_judged_by_its_text():
    litellm = pytest.importorskip("litellm")
    response = litellm.ModelResponse(**{k: v for k, v in CHAT.items() if k != "object"})
    assert judged_text(response, "output") == "Returns are accepted within 30 days."


def test_an_openai_responses_api_response_is_judged_by_its_output_text():
    openai = pytest.importorskip("openai")
    response = openai.types.responses.Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "gpt-4o-mini",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking..."}]},
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Within 30 days.", "annotations": []}],
                },
            ],
        }
    )
    assert judged_text(response, "output") == "Within 30 days."


ANTHROPIC = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-3-5-haiku-latest",
    "stop_reason": "end_turn",
    "content": [
        {"type": "thinking", "thinking": "The policy says 30 days.", "signature": "sig"},
        {"type": "text", "text": "Returns are accepted within 30 days."},
        {"type": "tool_use", "id": "tu_1", "name": "refund", "input": {"order": "A-17"}},
    ],
}


def test_an_anthropic_message_is_judged_by_its_text_and_tool_use_not_its_thinking():
    text = judged_text(ANTHROPIC, "output")
    assert text.startswith("Returns are accepted within 30 days.\n\n")
    assert "The policy says" not in text, "thinking is not the answer"
    assert json.loads(text.split("\n\n", 1)[1]) == {"tool_calls": [{"name": "refund", "arguments": {"order": "A-17"}}]}


def test_a_response_with_nothing_to_judge_says_what_it_found():
    empty = {
        **CHAT,
        "choices": [{"index": 0, "finish_reason": "content_filter", "message": {"role": "assistant", "content": None}}],
    }
    with pytest.raises(JudgeError, match="chat completion with no text and no tool calls.*content_filter"):
        judged_text(empty, "output")
    with pytest.raises(JudgeError, match="Anthropic message with no text.*max_tokens"):
        judged_text({**ANTHROPIC, "stop_reason": "max_tokens", "content": []}, "output")


def test_several_choices_must_be_judged_one_by_one():
    several = {**CHAT, "choices": CHAT["choices"] * 2}
    with pytest.raises(JudgeError, match="2 choices: judge each one"):
        judged_text(several, "output")


def test_an_ordinary_dict_is_not_mistaken_for_a_response():
    value = {"type": "message", "text": "hello"}
    assert judged_text(value, "output") == json.dumps(value, indent=2, ensure_ascii=False)
