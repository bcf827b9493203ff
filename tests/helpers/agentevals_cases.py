"""agentevals' own trajectory-match cases, ported as someone moving from agentevals would write them.

Copied from langchain-ai/agentevals (MIT, Copyright (c) 2025 LangChain, Inc.), file
python/tests/test_trajectory.py at commit 946ad15b9f2ce9bc9843edd2bb773bd07d78ca7e (version 0.0.9):
every test of that file, each of its parametrized modes one case, the messages copied as they are.
Its `ChatCompletionMessage` is a TypedDict (a plain dict); its LangChain messages are written here
as the dicts `model_dump()` gives (the agentevals suite's own run builds the LangChain objects).

Each case keeps agentevals' names: `trajectory_match_mode`, `tool_args_match_mode`,
`tool_args_match_overrides`, and the score its test asserts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

ChatCompletionMessage = dict  # agentevals.types.ChatCompletionMessage: a TypedDict


def _langchain(kind: str) -> Callable[..., dict[str, Any]]:
    """A LangChain message class, as the dict its `model_dump()` gives (type and fields)."""
    return lambda **fields: {"type": kind, **fields}


HumanMessage, AIMessage, ToolMessage = _langchain("human"), _langchain("ai"), _langchain("tool")


class Case(NamedTuple):
    """One agentevals case: the two trajectories, its evaluator's settings, and the score it asserts."""

    name: str
    outputs: Any
    reference_outputs: Any
    trajectory_match_mode: str
    tool_args_match_mode: str
    tool_args_match_overrides: dict[str, Any] | None
    score: bool


TRAJECTORY_MATCH_OUTPUTS = [
    ChatCompletionMessage(role="user", content="What is the weather in SF?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "San Francisco"}),
                }
            }
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in SF."),
    ChatCompletionMessage(role="assistant", content="The weather in SF is 80 degrees and sunny."),
]

TRAJECTORY_MATCH_REFERENCE = [
    ChatCompletionMessage(role="user", content="What is the weather in SF?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "San Francisco"}),
                }
            }
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in San Francisco."),
    ChatCompletionMessage(role="assistant", content="The weather in SF is 80˚ and sunny."),
]

TRAJECTORY_WITH_DIFFERENT_TOOL_MESSAGE_ORDER_OUTPUTS = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF"}),
                }
            },
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "London"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in SF."),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in SF is 80 degrees and sunny. In London, it's 90 degrees and rainy.",
    ),
]

TRAJECTORY_WITH_DIFFERENT_TOOL_MESSAGE_ORDER_REFERENCE = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "London"}),
                }
            },
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in SF."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in London is 90˚ and rainy. In SF, it's 80˚ and sunny.",
    ),
]

TRAJECTORY_WITH_DIFFERENT_MESSAGE_COUNT_OUTPUTS = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in SF."),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "London"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in SF is 80 degrees and sunny. In London, it's 90 degrees and rainy.",
    ),
]

TRAJECTORY_WITH_DIFFERENT_MESSAGE_COUNT_REFERENCE = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "London"}),
                }
            },
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in SF."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in London is 90˚ and rainy. In SF, it's 80˚ and sunny.",
    ),
]

TRAJECTORY_SUBSET_TOOL_CALL_OUTPUTS = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in SF."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in SF is 80 degrees and sunny. In London, it's 9000 degrees and hallucinating.",
    ),
]

TRAJECTORY_SUBSET_TOOL_CALL_REFERENCE = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "London"}),
                }
            },
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in London is 90˚ and rainy. In SF, it's 80˚ and sunny.",
    ),
]

EXACT_MATCHER_WITH_DIFFERENT_CALLED_TOOLS_OUTPUTS = [
    ChatCompletionMessage(role="user", content="What is the weather in SF?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF"}),
                }
            }
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in SF."),
    ChatCompletionMessage(role="assistant", content="The weather in SF is 80 degrees and sunny."),
]

EXACT_MATCHER_WITH_DIFFERENT_CALLED_TOOLS_REFERENCE = [
    ChatCompletionMessage(role="user", content="What is the weather in SF?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "accuweather_forecast",
                    "arguments": json.dumps({"city": "San Francisco"}),
                }
            }
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in San Francisco."),
    ChatCompletionMessage(role="assistant", content="The weather in SF is 80˚ and sunny."),
]

TRAJECTORY_WITH_EXTRA_TOOL_CALLS_AND_OVERRIDE_OUTPUTS = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "San Francisco"}),
                }
            },
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "London"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in San Francisco."),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in SF is 80˚ and sunny. In London, it's 90˚ and rainy.",
    ),
]

TRAJECTORY_WITH_EXTRA_TOOL_CALLS_AND_OVERRIDE_REFERENCE = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF and London"}),
                }
            }
        ],
    ),
    ChatCompletionMessage(
        role="tool",
        content="It's 80 degrees and sunny in SF, and 90 degrees and rainy in London.",
    ),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in SF is 80 degrees and sunny. In London, it's 90 degrees and rainy.",
    ),
]

TRAJECTORY_WITH_SUBSET_TOOL_CALLS_AND_OVERRIDE_OUTPUTS = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "SF and London"}),
                }
            }
        ],
    ),
    ChatCompletionMessage(
        role="tool",
        content="It's 80 degrees and sunny in SF, and 90 degrees and rainy in London.",
    ),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in SF is 80 degrees and sunny. In London, it's 90 degrees and rainy.",
    ),
]

TRAJECTORY_WITH_SUBSET_TOOL_CALLS_AND_OVERRIDE_REFERENCE = [
    ChatCompletionMessage(role="user", content="What is the weather in SF and London?"),
    ChatCompletionMessage(
        role="assistant",
        tool_calls=[
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "San Francisco"}),
                }
            },
            {
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "London"}),
                }
            },
        ],
    ),
    ChatCompletionMessage(role="tool", content="It's 80 degrees and sunny in San Francisco."),
    ChatCompletionMessage(role="tool", content="It's 90 degrees and rainy in London."),
    ChatCompletionMessage(
        role="assistant",
        content="The weather in SF is 80˚ and sunny. In London, it's 90˚ and rainy.",
    ),
]

TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_AND_OVERRIDE_OUTPUTS = [
    HumanMessage(content="What is the weather in SF?"),
    AIMessage(
        content="",
        tool_calls=[
            {
                "id": "1234",
                "name": "get_weather",
                "args": {"city": "SF"},
            }
        ],
    ),
    ToolMessage(tool_call_id="1234", content="It's 80 degrees and sunny in SF."),
    AIMessage(content="The weather in SF is 80 degrees and sunny."),
]

TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_AND_OVERRIDE_REFERENCE = [
    HumanMessage(content="What is the weather in SF?"),
    AIMessage(
        content="Let me check that for you!",
        tool_calls=[
            {
                "id": "4321",
                "name": "get_weather",
                "args": {"city": "San Francisco"},
            }
        ],
    ),
    ToolMessage(tool_call_id="4321", content="It's 80 degrees and sunny in San Francisco."),
    AIMessage(content="The weather in SF is 80˚ and sunny."),
]

TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_FAILURE_OUTPUTS = [
    HumanMessage(content="What is the weather in SF?"),
    AIMessage(
        content="",
        tool_calls=[
            {
                "id": "1234",
                "name": "get_weather",
                "args": {"city": "SF"},
            }
        ],
    ),
    ToolMessage(tool_call_id="1234", content="It's 80 degrees and sunny in SF."),
    AIMessage(content="The weather in SF is 80 degrees and sunny."),
]

TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_FAILURE_REFERENCE = [
    HumanMessage(content="What is the weather in SF?"),
    AIMessage(
        content="Let me check that for you!",
        tool_calls=[
            {
                "id": "4321",
                "name": "accuweather_forecast",
                "args": {"city": "San Francisco"},
            }
        ],
    ),
    ToolMessage(tool_call_id="4321", content="It's 80 degrees and sunny in San Francisco."),
    AIMessage(content="The weather in SF is 80˚ and sunny."),
]

TRAJECTORY_MATCH_WITH_OVERRIDES_OUTPUTS = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
                "function": {
                    "name": "fetch_user_flight_information",
                    "arguments": "{}",
                },
            }
        ],
        "content": "",
    },
    {
        "role": "tool",
        "name": "fetch_user_flight_information",
        "tool_call_id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
        "content": json.dumps(
            [
                {
                    "ticket_no": "7240005432906569",
                    "book_ref": "C46E9F",
                    "flight_id": 19250,
                    "flight_no": "LX0112",
                    "departure_airport": "CDG",
                    "arrival_airport": "BSL",
                    "scheduled_departure": "2025-03-22T18:34:40Z",
                    "scheduled_arrival": "2025-03-22T20:34:40Z",
                    "seat_no": "18E",
                    "fare_conditions": "Economy",
                }
            ]
        ),
    },
    {
        "role": "assistant",
        "content": "Your flight LX0112 from CDG to BSL is scheduled to depart in an hour and arrive in two hours.",
    },
    {
        "role": "user",
        "content": "Update it to the next flight after that and bump me to first class if there is availability.",
    },
    {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "id": "f6ff5419-c03f-4543-b67d-72693c94b2ca",
                "function": {
                    "name": "search_flights",
                    "arguments": json.dumps(
                        {
                            "start_time": "2025-03-22T18:34:40Z",
                            "departure_airport": "CDG",
                            "arrival_airport": "BSL",
                        }
                    ),
                },
            }
        ],
        "content": "",
    },
    {
        "role": "tool",
        "name": "search_flights",
        "tool_call_id": "f6ff5419-c03f-4543-b67d-72693c94b2ca",
        "content": json.dumps(
            [
                {
                    "flight_id": 19229,
                    "flight_no": "LX0112",
                    "scheduled_departure": "2025-03-22T19:34:40Z",
                    "scheduled_arrival": "2025-03-22T21:34:40Z",
                    "departure_airport": "CDG",
                    "arrival_airport": "BSL",
                    "status": "Scheduled",
                    "aircraft_code": "SU9",
                },
                {
                    "flight_id": 19232,
                    "flight_no": "LX0112",
                    "scheduled_departure": "2025-03-22T20:34:40Z",
                    "scheduled_arrival": "2025-03-22T22:34:40Z",
                    "departure_airport": "CDG",
                    "arrival_airport": "BSL",
                    "status": "Scheduled",
                    "aircraft_code": "SU9",
                },
            ]
        ),
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "4a286aff-199a-4152-99b1-df1ca07c920e",
                "function": {
                    "name": "lookup_policy",
                    "arguments": json.dumps({"query": "flight upgrades"}),
                },
            },
            {
                "type": "function",
                "id": "00000000-0000-0000-0000-000000000000",
                "function": {
                    "name": "lookup_policy",
                    "arguments": json.dumps({"query": "first class"}),
                },
            },
        ],
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "4a286aff-199a-4152-99b1-df1ca07c920e",
        "content": "Upgrades to first class are not currently available as they are being saved for VIPs.",
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "00000000-0000-0000-0000-000000000000",
        "content": "Upgrades to first class are not currently available as they are being saved for VIPs.",
    },
    {
        "role": "assistant",
        "content": "The next flight after that is LX0112 from CDG to BSL is in 4 hours. However, we do not currently allow upgrades to first class. Confirming that I should book it for you anyway?",
    },
]

TRAJECTORY_MATCH_WITH_OVERRIDES_REFERENCE = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
                "function": {
                    "name": "fetch_user_flight_information",
                    "arguments": "{}",
                },
            }
        ],
        "content": "",
    },
    {
        "role": "tool",
        "name": "fetch_user_flight_information",
        "tool_call_id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
        "content": '[{"ticket_no": "7240005432906569", "book_ref": "C46E9F", "flight_id": 19250, "flight_no": "LX0112", "departure_airport": "CDG", "arrival_airport": "BSL", "scheduled_departure": "2025-03-20T15:00:00-07:00", "scheduled_arrival": "2025-03-20T16:00:00-07:00", "seat_no": "18E", "fare_conditions": "Economy"}]',
    },
    {
        "role": "assistant",
        "content": "Your flight LX0112 from CDG to BSL is scheduled to depart in an hour and arrive in two hours.",
    },
    {
        "role": "user",
        "content": "Update it to the next flight after that and bump me to first class if there is availability.",
    },
    {
        "role": "assistant",
        "name": "flight_agent",
        "tool_calls": [
            {
                "type": "function",
                "id": "cb2f81d3-382a-46ce-8fa0-a7ece7a75de1",
                "function": {
                    "name": "lookup_policy",
                    "arguments": '{"query": "upgrade to first class"}',
                },
            },
            {
                "type": "function",
                "id": "00000000-0000-0000-0000-000000000000",
                "function": {
                    "name": "lookup_policy",
                    "arguments": json.dumps({"query": "foo"}),
                },
            },
        ],
        "content": "",
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "cb2f81d3-382a-46ce-8fa0-a7ece7a75de1",
        "content": "...",
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "00000000-0000-0000-0000-000000000000",
        "content": "...",
    },
    {
        "role": "assistant",
        "name": "flight_agent",
        "content": "Ok, it looks like upgrades to first class are possible. What date would you like to change your flight to?",
    },
]

TRAJECTORY_MATCH_WITH_NESTED_FIELD_OVERRIDES_OUTPUTS = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
                "function": {
                    "name": "fetch_user_flight_information",
                    "arguments": json.dumps({"user_id": "123"}),
                },
            }
        ],
        "content": "",
    },
    {
        "role": "tool",
        "name": "fetch_user_flight_information",
        "tool_call_id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
        "content": json.dumps(
            [
                {
                    "ticket_no": "7240005432906569",
                    "book_ref": "C46E9F",
                    "flight_id": 19250,
                    "flight_no": "LX0112",
                    "departure_airport": "CDG",
                    "arrival_airport": "BSL",
                    "scheduled_departure": "2025-03-22T18:34:40Z",
                    "scheduled_arrival": "2025-03-22T20:34:40Z",
                    "seat_no": "18E",
                    "fare_conditions": "Economy",
                }
            ]
        ),
    },
    {
        "role": "assistant",
        "content": "Your flight LX0112 from CDG to BSL is scheduled to depart in an hour and arrive in two hours.",
    },
    {
        "role": "user",
        "content": "Update it to the next flight after that and bump me to first class if there is availability.",
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "4a286aff-199a-4152-99b1-df1ca07c920e",
                "function": {
                    "name": "lookup_policy",
                    "arguments": json.dumps(
                        {
                            "query": "flight upgrades",
                            "time": {
                                "start": "2025-03-22T18:34:40Z",
                                "end": "2025-03-22T20:34:40Z",
                            },
                        }
                    ),
                },
            },
            {
                "type": "function",
                "id": "00000000-0000-0000-0000-000000000000",
                "function": {
                    "name": "lookup_policy",
                    "arguments": json.dumps(
                        {
                            "query": "first class",
                            "time": {
                                "start": "2025-03-22T18:34:40Z",
                                "end": "2025-03-22T20:34:40Z",
                            },
                        }
                    ),
                },
            },
        ],
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "4a286aff-199a-4152-99b1-df1ca07c920e",
        "content": "Upgrades to first class are not currently available as they are being saved for VIPs.",
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "00000000-0000-0000-0000-000000000000",
        "content": "Upgrades to first class are not currently available as they are being saved for VIPs.",
    },
    {
        "role": "assistant",
        "content": "The next flight after that is LX0112 from CDG to BSL is in 4 hours. However, we do not currently allow upgrades to first class. Confirming that I should book it for you anyway?",
    },
]

TRAJECTORY_MATCH_WITH_NESTED_FIELD_OVERRIDES_REFERENCE = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
                "function": {
                    "name": "fetch_user_flight_information",
                    "arguments": json.dumps({"user_id": "123"}),
                },
            },
        ],
        "content": "",
    },
    {
        "role": "tool",
        "name": "fetch_user_flight_information",
        "tool_call_id": "d3b6d04c-87b5-4e94-a11f-d8bc7c033188",
        "content": '[{"ticket_no": "7240005432906569", "book_ref": "C46E9F", "flight_id": 19250, "flight_no": "LX0112", "departure_airport": "CDG", "arrival_airport": "BSL", "scheduled_departure": "2025-03-20T15:00:00-07:00", "scheduled_arrival": "2025-03-20T16:00:00-07:00", "seat_no": "18E", "fare_conditions": "Economy"}]',
    },
    {
        "role": "assistant",
        "content": "Your flight LX0112 from CDG to BSL is scheduled to depart in an hour and arrive in two hours.",
    },
    {
        "role": "user",
        "content": "Update it to the next flight after that and bump me to first class if there is availability.",
    },
    {
        "role": "assistant",
        "name": "flight_agent",
        "tool_calls": [
            {
                "type": "function",
                "id": "cb2f81d3-382a-46ce-8fa0-a7ece7a75de1",
                "function": {
                    "name": "lookup_policy",
                    "arguments": '{"query": "foo", "time": {"start": "2025-03-22T18:34:40Z", "end": "baz"}}',
                },
            },
            {
                "type": "function",
                "id": "00000000-0000-0000-0000-000000000000",
                "function": {
                    "name": "lookup_policy",
                    "arguments": json.dumps(
                        {
                            "query": "bar",
                            "time": {"start": "2025-03-22T18:34:40Z", "end": "baz"},
                        }
                    ),
                },
            },
        ],
        "content": "",
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "cb2f81d3-382a-46ce-8fa0-a7ece7a75de1",
        "content": "...",
    },
    {
        "role": "tool",
        "name": "lookup_policy",
        "tool_call_id": "00000000-0000-0000-0000-000000000000",
        "content": "...",
    },
    {
        "role": "assistant",
        "name": "flight_agent",
        "content": "Ok, it looks like upgrades to first class are possible. What date would you like to change your flight to?",
    },
]

TOOL_ARGS_MATCH_MODE_SUPERSET_OUTPUTS = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "123",
                "function": {
                    "name": "get_flight_info",
                    "arguments": json.dumps({"is_cool": True, "flight_no": "LX0112"}),
                },
            }
        ],
    },
    {"role": "assistant", "content": "Your flight is at 10:00 AM."},
]

TOOL_ARGS_MATCH_MODE_SUPERSET_REFERENCE = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "321",
                "function": {
                    "name": "get_flight_info",
                    "arguments": json.dumps({"flight_no": "LX0112"}),
                },
            }
        ],
    },
    {"role": "assistant", "content": "Your flight is at 10:00 AM."},
]

TOOL_ARGS_MATCH_MODE_SUBSET_OUTPUTS = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "123",
                "function": {
                    "name": "get_flight_info",
                    "arguments": json.dumps({"flight_no": "LX0112"}),
                },
            }
        ],
    },
    {"role": "assistant", "content": "Your flight is at 10:00 AM."},
]

TOOL_ARGS_MATCH_MODE_SUBSET_REFERENCE = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "321",
                "function": {
                    "name": "get_flight_info",
                    "arguments": json.dumps({"flight_no": "LX0112", "foo": "bar"}),
                },
            }
        ],
    },
    {"role": "assistant", "content": "Your flight is at 10:00 AM."},
]

TOOL_ARGS_MATCH_MODE_EXACT_OUTPUTS = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "123",
                "function": {
                    "name": "get_flight_info",
                    "arguments": json.dumps({"flight_no": "LX0112"}),
                },
            }
        ],
    },
    {"role": "assistant", "content": "Your flight is at 10:00 AM."},
]

TOOL_ARGS_MATCH_MODE_EXACT_REFERENCE = [
    {"role": "user", "content": "Hi there, what time is my flight?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "321",
                "function": {
                    "name": "get_flight_info",
                    "arguments": json.dumps({"flight_no": "LX0112"}),
                },
            }
        ],
    },
    {"role": "assistant", "content": "Your flight is at 10:00 AM."},
]


# -- the evaluators' settings and the scores agentevals' tests assert, test by test --------------

MODES = ("unordered", "superset", "subset", "strict")


def _get_weather_sf(x: dict, y: dict) -> bool:  # test_trajectory_match_with_langchain_messages_and_override's lambda
    return (x["city"] == "SF" or x["city"] == "San Francisco") and (y["city"] == "SF" or y["city"] == "San Francisco")


def lookup_policy_query_matcher(tool_args: dict, reference_tool_args: dict):  # as test_trajectory_match_with_overrides
    if reference_tool_args.get("query", {}) and "upgrade" in reference_tool_args.get("query", {}):
        return "upgrade" in tool_args.get("query", {})
    # Ignore for other policy query matches
    return True


def _by_mode(
    test: str, outputs: Any, reference: Any, scores: dict[str, bool], overrides: dict[str, Any] | None = None
) -> list[Case]:
    return [Case(f"{test}[{mode}]", outputs, reference, mode, "exact", overrides, scores[mode]) for mode in MODES]


def _by_args_mode(test: str, outputs: Any, reference: Any, scores: dict[str, bool]) -> list[Case]:
    return [Case(f"{test}[{args}]", outputs, reference, "strict", args, None, score) for args, score in scores.items()]


ALL_TRUE = dict.fromkeys(MODES, True)
ALL_FALSE = dict.fromkeys(MODES, False)

CASES: list[Case] = [
    *_by_mode("test_trajectory_match", TRAJECTORY_MATCH_OUTPUTS, TRAJECTORY_MATCH_REFERENCE, ALL_TRUE),
    *_by_mode(
        "test_trajectory_with_different_tool_message_order",
        TRAJECTORY_WITH_DIFFERENT_TOOL_MESSAGE_ORDER_OUTPUTS,
        TRAJECTORY_WITH_DIFFERENT_TOOL_MESSAGE_ORDER_REFERENCE,
        ALL_TRUE,
    ),
    *_by_mode(
        "test_trajectory_with_different_message_count",
        TRAJECTORY_WITH_DIFFERENT_MESSAGE_COUNT_OUTPUTS,
        TRAJECTORY_WITH_DIFFERENT_MESSAGE_COUNT_REFERENCE,
        {"unordered": True, "superset": True, "subset": True, "strict": False},
    ),
    *_by_mode(
        "test_trajectory_subset_tool_call",
        TRAJECTORY_SUBSET_TOOL_CALL_OUTPUTS,
        TRAJECTORY_SUBSET_TOOL_CALL_REFERENCE,
        {"unordered": False, "superset": False, "subset": True, "strict": False},
    ),
    *_by_mode(
        "test_exact_matcher_with_different_called_tools",
        EXACT_MATCHER_WITH_DIFFERENT_CALLED_TOOLS_OUTPUTS,
        EXACT_MATCHER_WITH_DIFFERENT_CALLED_TOOLS_REFERENCE,
        ALL_FALSE,
    ),
    *_by_mode(
        "test_trajectory_with_extra_tool_calls_and_override",
        TRAJECTORY_WITH_EXTRA_TOOL_CALLS_AND_OVERRIDE_OUTPUTS,
        TRAJECTORY_WITH_EXTRA_TOOL_CALLS_AND_OVERRIDE_REFERENCE,
        {"unordered": False, "superset": True, "subset": False, "strict": False},
        {"get_weather": "ignore"},
    ),
    *_by_mode(
        "test_trajectory_with_subset_tool_calls_and_override",
        TRAJECTORY_WITH_SUBSET_TOOL_CALLS_AND_OVERRIDE_OUTPUTS,
        TRAJECTORY_WITH_SUBSET_TOOL_CALLS_AND_OVERRIDE_REFERENCE,
        {"unordered": False, "superset": False, "subset": True, "strict": False},
        {"get_weather": "ignore"},
    ),
    *_by_mode(
        "test_trajectory_match_with_langchain_messages_and_override",
        TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_AND_OVERRIDE_OUTPUTS,
        TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_AND_OVERRIDE_REFERENCE,
        ALL_TRUE,
        {"get_weather": _get_weather_sf},
    ),
    *_by_mode(
        "test_trajectory_match_with_langchain_messages_failure",
        TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_FAILURE_OUTPUTS,
        TRAJECTORY_MATCH_WITH_LANGCHAIN_MESSAGES_FAILURE_REFERENCE,
        ALL_FALSE,
    ),
    # Each of these two tests asserts twice: without the overrides (no match), then with them.
    *_by_mode(
        "test_trajectory_match_with_overrides(no overrides)",
        TRAJECTORY_MATCH_WITH_OVERRIDES_OUTPUTS,
        TRAJECTORY_MATCH_WITH_OVERRIDES_REFERENCE,
        ALL_FALSE,
    ),
    *_by_mode(
        "test_trajectory_match_with_overrides",
        TRAJECTORY_MATCH_WITH_OVERRIDES_OUTPUTS,
        TRAJECTORY_MATCH_WITH_OVERRIDES_REFERENCE,
        {"unordered": False, "superset": True, "subset": False, "strict": False},
        {"lookup_policy": lookup_policy_query_matcher},
    ),
    *_by_mode(
        "test_trajectory_match_with_nested_field_overrides(no overrides)",
        TRAJECTORY_MATCH_WITH_NESTED_FIELD_OVERRIDES_OUTPUTS,
        TRAJECTORY_MATCH_WITH_NESTED_FIELD_OVERRIDES_REFERENCE,
        ALL_FALSE,
    ),
    *_by_mode(
        "test_trajectory_match_with_nested_field_overrides",
        TRAJECTORY_MATCH_WITH_NESTED_FIELD_OVERRIDES_OUTPUTS,
        TRAJECTORY_MATCH_WITH_NESTED_FIELD_OVERRIDES_REFERENCE,
        ALL_TRUE,
        {"lookup_policy": ["time.start"]},
    ),
    *_by_args_mode(
        "test_tool_args_match_mode_superset",
        TOOL_ARGS_MATCH_MODE_SUPERSET_OUTPUTS,
        TOOL_ARGS_MATCH_MODE_SUPERSET_REFERENCE,
        {"exact": False, "ignore": True, "subset": False, "superset": True},
    ),
    *_by_args_mode(
        "test_tool_args_match_mode_subset",
        TOOL_ARGS_MATCH_MODE_SUBSET_OUTPUTS,
        TOOL_ARGS_MATCH_MODE_SUBSET_REFERENCE,
        {"exact": False, "ignore": True, "subset": True, "superset": False},
    ),
    *_by_args_mode(
        "test_tool_args_match_mode_exact",
        TOOL_ARGS_MATCH_MODE_EXACT_OUTPUTS,
        TOOL_ARGS_MATCH_MODE_EXACT_REFERENCE,
        dict.fromkeys(("exact", "ignore", "subset", "superset"), True),
    ),
]
