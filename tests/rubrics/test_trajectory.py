"""assert_trajectory: each order and args mode on a table of cases, every shape of trajectory, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import litellm
import pytest

from pytest_llmjudge import JudgeError, TrajectoryMismatch, assert_trajectory

DATA = Path(__file__).resolve().parents[1] / "data"
ORDERS = ("strict", "unordered", "subset", "superset")


def call(name: str, **arguments: object) -> dict:
    return {"name": name, "arguments": arguments}


SEARCH = call("search", q="shoes")
LOOKUP = call("lookup", order_id=1)
REFUND = call("refund", order_id=1, amount=20)
EMAIL = call("email", to="ana@example.com")
EXPECTED = [SEARCH, LOOKUP, REFUND]

# (case, actual, args, the modes under which actual matches EXPECTED)
TABLE = [
    ("the same calls", [SEARCH, LOOKUP, REFUND], "exact", {"strict", "unordered", "subset", "superset"}),
    ("reordered steps", [LOOKUP, SEARCH, REFUND], "exact", {"unordered", "subset", "superset"}),
    ("a missing step", [SEARCH, LOOKUP], "exact", {"subset"}),
    ("an extra step", [SEARCH, LOOKUP, EMAIL, REFUND], "exact", {"superset"}),
    ("a repeated step", [SEARCH, SEARCH, LOOKUP, REFUND], "exact", {"superset"}),
    ("an argument differs", [SEARCH, LOOKUP, call("refund", order_id=1, amount=25)], "exact", set()),
    (
        "an argument differs, args ignored",
        [SEARCH, LOOKUP, call("refund", order_id=1, amount=25)],
        "ignore",
        {"strict", "unordered", "subset", "superset"},
    ),
    (
        "a tool differs, args ignored",
        [SEARCH, LOOKUP, call("cancel", order_id=1, amount=20)],
        "ignore",
        set(),
    ),
    ("an extra argument", [SEARCH, LOOKUP, call("refund", order_id=1, amount=20, note="x")], "exact", set()),
    (
        "an extra argument, args subset",
        [SEARCH, LOOKUP, call("refund", order_id=1, amount=20, note="x")],
        "subset",
        {"strict", "unordered", "subset", "superset"},
    ),
    ("a missing argument, args subset", [SEARCH, LOOKUP, call("refund", order_id=1)], "subset", set()),
    (
        "JSON-string arguments against dicts",
        [{"name": c["name"], "arguments": json.dumps(c["arguments"])} for c in EXPECTED],
        "exact",
        {"strict", "unordered", "subset", "superset"},
    ),
    (
        "JSON-string arguments reordered, whitespace aside",
        [SEARCH, LOOKUP, {"name": "refund", "arguments": '{ "amount": 20,\n "order_id": 1 }'}],
        "exact",
        {"strict", "unordered", "subset", "superset"},
    ),
    ("no calls at all", [], "exact", {"subset"}),
]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("case", "actual", "args", "passes"), TABLE, ids=[row[0] for row in TABLE])
def test_each_mode_passes_and_fails_exactly_as_defined(case, actual, args, passes, order):
    if order in passes:
        assert_trajectory(actual, EXPECTED, order=order, args=args)
    else:
        with pytest.raises(TrajectoryMismatch):
            assert_trajectory(actual, EXPECTED, order=order, args=args)


def test_a_callable_decides_the_arguments_per_tool():
    seen = []

    def same_order(name, actual, expected):
        seen.append(name)
        return name != "refund" or actual["order_id"] == expected["order_id"]

    assert_trajectory([SEARCH, LOOKUP, call("refund", order_id=1, amount=99)], EXPECTED, args=same_order)
    assert seen == ["search", "lookup", "refund"]
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory([SEARCH, LOOKUP, call("refund", order_id=2, amount=20)], EXPECTED, args=same_order)


def test_a_loose_args_match_finds_the_pairing_a_greedy_one_misses():
    # With args="subset", the first expected call fits both actual calls; the second fits only the first.
    actual = [call("get", id=1, full=True), call("get", id=1)]
    expected = [call("get", id=1), call("get", id=1, full=True)]
    for order in ("unordered", "subset", "superset"):
        assert_trajectory(actual, expected, order=order, args="subset")


def test_a_mismatch_names_the_first_differing_step_and_shows_both_side_by_side():
    actual = [SEARCH, LOOKUP, call("refund", order_id=1, amount=25)]
    with pytest.raises(TrajectoryMismatch) as raised:
        assert_trajectory(actual, EXPECTED)
    message = str(raised.value)
    assert isinstance(raised.value, AssertionError)
    assert message.startswith("trajectory does not match (order='strict', args='exact'): step 3:")
    assert 'actual refund({"amount": 25, "order_id": 1}), expected refund({"amount": 20, "order_id": 1})' in message
    lines = message.splitlines()
    assert lines[1].split() == ["#", "actual", "expected"]
    assert lines[2].split() == ["1", 'search({"q":', '"shoes"})', 'search({"q":', '"shoes"})']
    assert lines[4].split()[:2] == ["3", "*"] and lines[4].count("* refund") == 2


def test_a_missing_step_under_superset_is_named():
    with pytest.raises(TrajectoryMismatch, match=r"expected step 3 refund\(.*\) has no matching call in actual"):
        assert_trajectory([SEARCH, LOOKUP, EMAIL], EXPECTED, order="superset")


def test_the_mismatch_reads_as_one_failure_in_pytest(pytester):
    pytester.makepyfile(
        """
        from pytest_llmjudge import assert_trajectory

        def test_agent():
            assert_trajectory([{"name": "search", "arguments": {}}], [{"name": "lookup", "arguments": {}}])
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*TrajectoryMismatch: trajectory does not match*step 1: actual search({}), expected lookup({})"]
    )
    result.stdout.no_fnmatch_line("*trajectory.py*")  # the plugin's own frames are hidden


# -- the shapes a trajectory comes in ----------------------------------------------------------------

OPENAI_CHAT = [
    {"role": "user", "content": "Refund order 1"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "shoes"}'}},
            {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": '{"order_id": 1}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "3 results"},
    {"role": "tool", "tool_call_id": "c2", "content": "order 1: shoes, 20 EUR"},
    {
        "role": "assistant",
        "content": "Refunding.",
        "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "refund", "arguments": '{"order_id":1,"amount":20}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c3", "content": "done"},
    {"role": "assistant", "content": "Your refund of 20 EUR is on its way."},
]
RESPONSES_OUTPUT = [
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "call_id": "c1", "name": "search", "arguments": '{"q": "shoes"}'},
    {"type": "function_call", "call_id": "c2", "name": "lookup", "arguments": '{"order_id": 1}'},
    {"type": "function_call_output", "call_id": "c1", "output": "3 results"},
    {"type": "function_call", "call_id": "c3", "name": "refund", "arguments": '{"amount": 20, "order_id": 1}'},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Refunded."}]},
]
ANTHROPIC = [
    {"role": "user", "content": "Refund order 1"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "search first", "signature": "x"},
            {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "shoes"}},
            {"type": "tool_use", "id": "t2", "name": "lookup", "input": {"order_id": 1}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "3 results"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t3", "name": "refund", "input": REFUND["arguments"]}],
    },
]
LANGCHAIN = [  # LangChain / LangGraph messages as `model_dump()` gives them
    {"type": "human", "content": "Refund order 1"},
    {
        "type": "ai",
        "content": "",
        "tool_calls": [
            {"name": "search", "args": {"q": "shoes"}, "id": "c1", "type": "tool_call"},
            {"name": "lookup", "args": {"order_id": 1}, "id": "c2", "type": "tool_call"},
        ],
    },
    {"type": "tool", "content": "3 results", "tool_call_id": "c1"},
    {"type": "ai", "content": "", "tool_calls": [{"name": "refund", "args": REFUND["arguments"], "id": "c3"}]},
]


@pytest.mark.parametrize(
    "shape",
    [
        OPENAI_CHAT,
        RESPONSES_OUTPUT,
        ANTHROPIC,
        LANGCHAIN,
        {"messages": LANGCHAIN},
        {"object": "response", "output": RESPONSES_OUTPUT},
    ],
    ids=["openai-chat", "responses-output", "anthropic", "langchain", "langgraph-state", "responses-response"],
)
def test_every_shape_reads_as_the_same_trajectory(shape):
    assert_trajectory(shape, EXPECTED)
    assert_trajectory(EXPECTED, shape)
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory(shape, [SEARCH, REFUND])


def test_a_litellm_response_object_is_read_by_its_shape():
    response = litellm.ModelResponse(
        choices=[
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "shoes"}'}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    )
    assert_trajectory(response, [SEARCH])
    assert_trajectory(response, [SEARCH, LOOKUP], order="subset")
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory(response, [LOOKUP])


# -- real traces, copied from public repositories (see tests/data/README.md) ------------------------


def load(name: str) -> object:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_an_openai_agents_sdk_run_s_items_are_its_trajectory():
    state = load("openai_agents_v1_13_pending_tool_approval.json")
    # The run lists the call, then the approval it waits for: one call, not two.
    assert_trajectory(state["generated_items"], [call("historical_approval", account_id="account-1")])
    assert_trajectory(state["model_responses"][0]["output"], state["generated_items"])
    custom = load("openai_agents_v1_9_custom_tool_call_and_tool_origin.json")
    assert_trajectory(custom["generated_items"], [{"name": "custom_lookup", "arguments": "account-1"}])
    program = load("openai_agents_v1_13_programmatic_tool_calling.json")
    assert_trajectory(program["generated_items"], [call("lookup")])


def test_an_anthropic_tool_runner_exchange_is_its_trajectory():
    exchange = load("anthropic_tool_runner_weather.json")
    second = exchange[1]
    messages = [*second["request"]["body"]["messages"], second["response"]["body"]]
    weather = [call("get_weather", location=city, units="c") for city in ("San Francisco, CA", "New York, NY")]
    assert_trajectory(messages, weather, order="superset")  # and the server-side code_execution call
    assert_trajectory(messages, [call("code_execution"), *weather], args="ignore")
    assert_trajectory(exchange[0]["response"]["body"], weather[:1], order="superset")


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"order": "exact"}, r"order=\.\.\.\) must be one of strict, unordered, subset, superset; got 'exact'"),
        ({"args": "superset"}, r"args=\.\.\.\) must be one of exact, ignore, subset or a callable.*got 'superset'"),
        ({"args": None}, r"args=\.\.\.\) must be one of"),
    ],
)
def test_a_bad_mode_is_an_error_naming_the_argument(kwargs, message):
    with pytest.raises(JudgeError, match=message):
        assert_trajectory(EXPECTED, EXPECTED, **kwargs)


@pytest.mark.parametrize(
    ("actual", "message"),
    [
        ([{"arguments": {"q": "shoes"}}], r"actual\[0\] holds a tool call without a tool name"),
        ([SEARCH, {"name": "", "arguments": {}}], r"actual\[1\] holds a tool call without a tool name"),
        (
            [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"arguments": "{}"}}]}],
            r"actual\[0\]\.tool_calls\[0\] holds a tool call without a tool name",
        ),
        (
            [{"role": "user", "content": "hi"}, {"content": "no role"}],
            r"actual\[1\] is not a chat message: it has no role",
        ),
        ("search, then refund", r"actual is not a trajectory: .*got str"),
        ([1, 2], r"actual is not a trajectory"),
    ],
)
def test_a_step_without_a_tool_name_or_a_value_that_is_no_trajectory_is_an_error(actual, message):
    with pytest.raises(JudgeError, match=message):
        assert_trajectory(actual, EXPECTED)
