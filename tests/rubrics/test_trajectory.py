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
    # args "subset" / "superset" speak of actual relative to expected, as `order` does.
    (
        "an extra argument, args superset",
        [SEARCH, LOOKUP, call("refund", order_id=1, amount=20, note="x")],
        "superset",
        {"strict", "unordered", "subset", "superset"},
    ),
    (
        "an extra argument, args subset",
        [SEARCH, LOOKUP, call("refund", order_id=1, amount=20, note="x")],
        "subset",
        set(),
    ),
    (
        "a missing argument, args subset",
        [SEARCH, LOOKUP, call("refund", order_id=1)],
        "subset",
        {"strict", "unordered", "subset", "superset"},
    ),
    ("a missing argument, args superset", [SEARCH, LOOKUP, call("refund", order_id=1)], "superset", set()),
    ("another value, args subset", [SEARCH, LOOKUP, call("refund", order_id=2)], "subset", set()),
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


LOOSE_ACTUAL = [call("get", id=1, full=True), call("get", id=1)]
LOOSE_EXPECTED = [call("get", id=1), call("get", id=1, full=True)]


def test_a_loose_args_match_finds_the_pairing_a_greedy_one_misses():
    # With args="superset", the first expected call fits both actual calls; the second fits only the first.
    for order in ("unordered", "subset", "superset"):
        assert_trajectory(LOOSE_ACTUAL, LOOSE_EXPECTED, order=order, args="superset")


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


# -- parallel calls: the calls of one assistant message have no order among them --------------------


def weather(*cities: str, ids: tuple[str, ...] = ()) -> dict:
    """One assistant message calling get_weather once per city (OpenAI chat shape)."""
    calls = [
        {
            "id": ids[i] if ids else f"w{i}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        for i, city in enumerate(cities)
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def test_calls_made_in_one_message_match_in_any_order_under_strict():
    """Parallel calls come back in any order from run to run: strict must not fail on that order."""
    question = {"role": "user", "content": "Weather in SF and London?"}
    assert_trajectory([question, weather("SF", "London")], [question, weather("London", "SF")])
    # Responses API items: parallel calls are consecutive function_call items of one response.
    items = [
        {"type": "function_call", "call_id": f"c{i}", "name": "get_weather", "arguments": json.dumps({"city": c})}
        for i, c in enumerate(["SF", "London"])
    ]
    assert_trajectory(items, items[::-1])
    # A plain list says only the order of the calls: it matches the message's calls in either order.
    plain = [call("get_weather", city="London"), call("get_weather", city="SF")]
    assert_trajectory([question, weather("SF", "London")], plain)
    assert_trajectory(plain[::-1], [question, weather("London", "SF")])


def test_across_messages_the_order_holds_under_strict():
    one_by_one = [weather("SF"), {"role": "tool", "tool_call_id": "w0", "content": "sunny"}, weather("London")]
    reversed_ = [weather("London"), {"role": "tool", "tool_call_id": "w0", "content": "rain"}, weather("SF")]
    with pytest.raises(TrajectoryMismatch, match=r"step 1: actual get_weather\(\{\"city\": \"SF\"\}\)"):
        assert_trajectory(one_by_one, reversed_)
    assert_trajectory(one_by_one, reversed_, order="unordered")
    # The same calls in two messages, or together in one: as in agentevals, strict tells them apart.
    with pytest.raises(TrajectoryMismatch) as raised:
        assert_trajectory(one_by_one, [weather("SF", "London")])
    assert "expected makes steps 1-2 in one message, actual step 1: expected step 2 get_weather(" in str(raised.value)
    assert "+ get_weather" in str(raised.value)  # the side by side shows which calls were made together
    for order in ("unordered", "subset", "superset"):
        assert_trajectory(one_by_one, [weather("SF", "London")], order=order)


def test_a_differing_call_inside_one_message_is_named_with_its_step():
    with pytest.raises(TrajectoryMismatch) as raised:
        assert_trajectory([weather("SF", "Paris")], [weather("London", "SF")])
    message = str(raised.value)
    assert 'step 2: actual get_weather({"city": "Paris"}), expected get_weather({"city": "London"})' in message
    assert "(the calls of one message match in any order)" in message


# -- argument modes: subset and superset speak of actual relative to expected -------------------------


def test_args_subset_and_superset_point_the_way_order_does():
    """agentevals' tool_args_match_mode: "subset" = actual's arguments within expected's; "superset" = the reverse."""
    fewer, more = [call("get_flight", flight_no="LX0112")], [call("get_flight", flight_no="LX0112", foo="bar")]
    assert_trajectory(fewer, more, args="subset")
    assert_trajectory(more, fewer, args="superset")
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory(fewer, more, args="superset")
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory(more, fewer, args="subset")


def test_a_subset_that_only_superset_passes_says_the_meaning_changed():
    more, fewer = [call("refund", order_id=1, amount=20)], [call("refund", order_id=1)]
    with pytest.raises(TrajectoryMismatch) as raised:
        assert_trajectory(more, fewer, args="subset")
    assert "args 'subset' means every argument of the actual call appears in the expected one" in str(raised.value)
    assert "is 'superset', under which this matches" in str(raised.value)
    with pytest.raises(TrajectoryMismatch) as raised:  # a real mismatch either way: no hint
        assert_trajectory([call("refund", order_id=2)], fewer, args="subset")
    assert "'superset'" not in str(raised.value)


# -- arguments compare as JSON values: a type is part of the value ----------------------------------

# (what the agent passed, what the test expects): never equal, though Python's == says they are.
UNEQUAL_JSON = [
    ("1 is not true", 1, True),
    ("0 is not false", 0, False),
    ("1.0 is not true", 1.0, True),
    ("a list of 1 is not a list of true", [1], [True]),
    ("nested", {"flags": {"confirm": 1}}, {"flags": {"confirm": True}}),
    ("a number is not its text", 100, "100"),
]


@pytest.mark.parametrize(("case", "passed", "wanted"), UNEQUAL_JSON, ids=[row[0] for row in UNEQUAL_JSON])
def test_arguments_of_different_json_types_never_match(case, passed, wanted):
    actual, expected = [call("confirm_order", confirm=passed)], [call("confirm_order", confirm=wanted)]
    json_text = [{"name": "confirm_order", "arguments": json.dumps({"confirm": passed})}]  # as an LLM API sends them
    for args in ("exact", "subset", "superset"):
        for given in (actual, json_text):
            with pytest.raises(TrajectoryMismatch, match=r"step 1: actual confirm_order"):
                assert_trajectory(given, expected, args=args)
            with pytest.raises(TrajectoryMismatch):
                assert_trajectory(expected, given, args=args)
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory(actual, expected, args_by_tool={"confirm_order": ["confirm"]})


def test_a_json_number_matches_the_same_number_written_as_a_float():
    """JSON has one number type: 100 and 100.0 are the same number (the docs say why), 100.5 is another."""
    assert_trajectory([call("refund", amount=100)], [call("refund", amount=100.0)])
    assert_trajectory([{"name": "refund", "arguments": '{"amount": 1e2}'}], [call("refund", amount=100)])
    assert_trajectory([call("refund", amount=100, currency="EUR")], [call("refund", amount=100.0)], args="superset")
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory([call("refund", amount=100)], [call("refund", amount=100.5)])


# -- per-tool argument rules -------------------------------------------------------------------------


def test_args_by_tool_sets_the_rule_of_the_tools_it_names():
    actual = [call("search", q="shoes", page=2), call("refund", order_id=1, amount=25, note="late")]
    expected = [call("search", q="shoes"), call("refund", order_id=1, amount=20)]
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory(actual, expected)
    assert_trajectory(actual, expected, args_by_tool={"search": "superset", "refund": "ignore"})
    # the tools not named keep `args`
    with pytest.raises(TrajectoryMismatch, match=r"step 1: actual search"):
        assert_trajectory(actual, expected, args_by_tool={"refund": "ignore"})
    assert_trajectory(actual, expected, args="superset", args_by_tool={"refund": ["order_id"]})


def test_args_by_tool_compares_the_dotted_keys_it_lists():
    actual = [call("lookup_policy", query="upgrades", time={"start": "18:34", "end": "20:34"})]
    expected = [call("lookup_policy", query="foo", time={"start": "18:34", "end": "baz"})]
    assert_trajectory(actual, expected, args_by_tool={"lookup_policy": ["time.start"]})
    with pytest.raises(TrajectoryMismatch):
        assert_trajectory(actual, expected, args_by_tool={"lookup_policy": ["time.start", "time.end"]})


def test_an_args_by_tool_callable_gets_the_actual_arguments_then_the_expected():
    seen = []

    def same_city(actual: dict, expected: dict) -> bool:
        seen.append((actual, expected))
        return actual["city"].lower() == expected["city"].lower()

    assert_trajectory(
        [call("get_weather", city="sf")], [call("get_weather", city="SF")], args_by_tool={"get_weather": same_city}
    )
    assert seen == [({"city": "sf"}, {"city": "SF"})]
    with pytest.raises(TrajectoryMismatch, match=r"args_by_tool=\{'get_weather': same_city\}"):
        assert_trajectory(
            [call("get_weather", city="NY")], [call("get_weather", city="SF")], args_by_tool={"get_weather": same_city}
        )


# -- which call a tool result answers ----------------------------------------------------------------


def judged_steps(trajectory: object) -> str:
    """The numbered steps the Trajectory rubric shows the judge (the fenced output of its prompt)."""
    from pytest_llmjudge import Trajectory
    from pytest_llmjudge.rubrics import Case

    (prompt,) = Trajectory().prompts(Case.build(trajectory, "Looks the order up first"))
    user = prompt.messages[-1]["content"]
    return user.split("<output-", 1)[1].split(">\n", 1)[1].split("\n</output-", 1)[0]


def calling(*tools: str) -> dict:
    """One assistant message calling these tools with no arguments, and no call ids."""
    calls = [{"type": "function", "function": {"name": tool, "arguments": "{}"}} for tool in tools]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def test_a_result_without_an_id_answers_the_latest_message_s_calls_in_order():
    """Hand-written traces and agentevals' own cases send tool results without a tool_call_id."""
    # lookup's result never came (the agent moved on); the two results answer search, then email.
    run = [calling("lookup"), calling("search", "email"), {"role": "tool", "content": "3 results"}]
    run.append({"role": "tool", "content": "sent"})
    assert judged_steps(run) == "1. lookup({})\n2. search({})\n   result: 3 results\n3. email({})\n   result: sent"


def test_a_result_that_names_its_tool_answers_that_tool_s_call():
    both = calling("search", "email")
    run = [
        both,
        {"role": "tool", "name": "email", "content": "sent"},
        {"role": "function", "name": "search", "content": "3 results"},
    ]
    assert judged_steps(run) == "1. search({})\n   result: 3 results\n2. email({})\n   result: sent"
    # A result for a tool the latest message did not call answers nothing.
    assert judged_steps([both, {"role": "tool", "name": "refund", "content": "done"}]) == "1. search({})\n2. email({})"


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
        (
            {"args": "contains"},
            r"args=\.\.\.\) must be one of exact, ignore, subset, superset or a callable.*got 'contains'",
        ),
        ({"args": None}, r"args=\.\.\.\) must be one of"),
        ({"args_by_tool": ["search"]}, r"args_by_tool=\.\.\.\) must be a dict of tool name -> rule; got list"),
        (
            {"args_by_tool": {"search": "contains"}},
            r"args_by_tool=\{'search': \.\.\.\}\) must be one of exact, .*got 'contains'",
        ),
        ({"args_by_tool": {"search": []}}, r"a list of the argument keys to compare .*got \[\]"),
        ({"args_by_tool": {"search": None}}, r"args_by_tool=\{'search': \.\.\.\}\) must be one of"),
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
