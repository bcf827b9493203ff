"""simulate(): a simulated user (a model playing a persona) talking to the app under test, each user turn
recorded in the verdict file and replayed offline while the app runs for real.

Each pytester test drives pytest with the real LiteLLM client against the local server, which plays
both the simulated user (the judge model, asked with the user's prompt) and the judge (SCORE=x in the
output it is shown).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer, score_from_prompt

PERSONA = "Ana, whose new shoes (order A-1042) are too small. She wants to return them and get her money back."

# What the simulated user says, turn by turn; `done` ends the conversation on that turn.
USER_LINES = [
    "Hi, the shoes from order A-1042 are too small. Can I return them?",
    "How do I send them back?",
    "And when do I get my money?",
]


def is_user_turn(request: dict) -> bool:
    return request["messages"][0]["content"].startswith("You are role-playing a user of an application")


def playing_the_user(lines: list[str]):
    """A responder: the simulated user's next line (by how many it has said), else the fake judge."""

    def respond(request: dict) -> str:
        if not is_user_turn(request):
            return score_from_prompt(request)
        said = sum(1 for m in request["messages"] if m["role"] == "assistant")  # its own earlier turns
        return lines[said]

    return respond


def user_turns(server: OpenAIServer) -> list[dict]:
    return [r for r in server.requests if is_user_turn(r)]


def record_args(server: OpenAIServer) -> list[str]:
    return [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0", "--judge-mode=auto"]


def generations(root: Path, module: str, test: str) -> dict:
    return json.loads((root / "judge_verdicts" / module / f"{test}.json").read_text())["generations"]


CHAT = f"""
from pytest_llmjudge import PerTurn, assert_judged, simulate

REPLIES = {{replies!r}}
seen = []

def shop_assistant(messages):
    seen.append([m["role"] for m in messages])
    return {{{{"role": "assistant", "content": REPLIES[len(messages) // 2]}}}}  # a chat message, as an SDK gives

def test_chat():
    chat = simulate(shop_assistant, {PERSONA!r}, turns=3)
    assert [m["role"] for m in chat] == ["user", "assistant"] * 3
    assert chat[0]["content"].startswith("Hi, the shoes from order A-1042")
    assert [m["content"] for m in chat[1::2]] == REPLIES
    assert seen == [["user"], ["user", "assistant", "user"], ["user", "assistant"] * 2 + ["user"]]  # it ran
    assert_judged(chat, "Answers the customer's questions", rubric=PerTurn(), threshold=0.7)
"""
REPLIES = [
    "Yes, within 30 days of delivery. SCORE=0.9",
    "Print the return label from your account page and drop the parcel at any post office. SCORE=0.9",
    "Within five days of the parcel reaching us. SCORE=0.9",
]


def test_a_simulated_conversation_records_then_replays_offline(pytester, monkeypatch):
    """Given a 3-turn simulation against the local server, recorded live, when it is replayed with CI=true
    and the server stopped, the user's turns come from the verdict file, the app runs again, and nothing
    is sent."""
    pytester.makepyfile(test_chat=CHAT.format(replies=REPLIES))
    with OpenAIServer(playing_the_user(USER_LINES)) as private:
        pytester.runpytest(*record_args(private), "-p", "no:cacheprovider").assert_outcomes(passed=1)
        asked = user_turns(private)
    assert len(asked) == 3
    first, last = asked[0]["messages"], asked[2]["messages"]
    assert first[0]["content"].startswith("You are role-playing a user") and PERSONA in first[0]["content"]
    assert [m["role"] for m in first] == ["system", "user"]  # the opening: the user speaks first
    # The user's model sees the conversation from the user's side: its own turns as the assistant's.
    assert [m["role"] for m in last[1:]] == ["user", "assistant", "user", "assistant", "user"]
    assert last[-1]["content"] == REPLIES[1] and last[-2]["content"] == USER_LINES[1]

    stored = generations(pytester.path, "test_chat", "test_chat")
    assert len(stored) == 3 and {g["model"] for g in stored.values()} == {MODEL}
    assert sorted(g["reply"] for g in stored.values()) == sorted(USER_LINES)

    monkeypatch.setenv("CI", "true")  # no judge, no api base: the user's turns and the verdicts are in the file
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "1 judged, 1 replayed, 0 live" in result.stdout.str()


def test_a_changed_reply_of_the_app_names_the_turn_in_the_replay(pytester, monkeypatch):
    """Given a recorded 3-turn simulation, when the app's second reply changes and the run replays with
    CI=true, the third user turn misses, and the failure names the app's reply to user turn 2, recorded
    and now."""
    pytester.makepyfile(test_chat=CHAT.format(replies=REPLIES))
    with OpenAIServer(playing_the_user(USER_LINES)) as private:
        pytester.runpytest(*record_args(private), "-p", "no:cacheprovider").assert_outcomes(passed=1)

    changed = [REPLIES[0], "Returns are handled by our partner, see their website. SCORE=0.9", REPLIES[2]]
    pytester.makepyfile(test_chat=CHAT.format(replies=changed))
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "ReplayMiss: simulate(): no recorded user turn 3 for this conversation (mode replay: CI" in out
    assert "the app's reply to user turn 2 differs from the recorded conversation" in out
    assert "recorded: 'Print the return label from your account page" in out
    assert "now:      'Returns are handled by our partner" in out
    assert "record it with a reachable judge: pytest 'test_chat.py::test_chat' --judge-mode=auto" in out
    assert "Traceback" not in out


def test_the_user_ends_the_conversation_with_the_done_signal(pytester, openai_server):
    """Given a user whose second line ends with [DONE], the conversation ends there, the signal stripped
    and the app not asked again; a user who sends [DONE] alone ends it after the app's last reply."""
    openai_server.set_responder(playing_the_user([USER_LINES[0], "Great, that is all I needed.\n[DONE]"]))
    pytester.makepyfile(
        test_done=f"""
        from pytest_llmjudge import simulate

        def test_done():
            replies = []
            def app(messages):
                replies.append(len(messages))
                return "Yes, within 30 days."
            chat = simulate(app, {PERSONA!r}, turns=5)
            assert chat[-1] == {{"role": "user", "content": "Great, that is all I needed."}}
            assert len(chat) == 3 and replies == [1]
        """
    )
    pytester.runpytest(*record_args(openai_server)).assert_outcomes(passed=1)
    assert len(user_turns(openai_server)) == 2

    openai_server.set_responder(playing_the_user([USER_LINES[0], "[done]"]))
    pytester.makepyfile(
        test_alone=f"""
        from pytest_llmjudge import simulate

        def test_alone():
            chat = simulate(lambda messages: "Yes, within 30 days.", {PERSONA!r} + " (2)", turns=5)
            assert [m["role"] for m in chat] == ["user", "assistant"]
        """
    )
    pytester.runpytest(*record_args(openai_server), "test_alone.py").assert_outcomes(passed=1)


def test_stop_and_turns_end_the_conversation(pytester, openai_server):
    """Given stop(messages) true once the app mentions a label, the conversation ends after that reply;
    given turns=2, after the second reply; `stop` sees the conversation so far."""
    openai_server.set_responder(playing_the_user(USER_LINES))
    pytester.makepyfile(
        test_stop=f"""
        from pytest_llmjudge import simulate

        REPLIES = ["Yes.", "Print the label.", "Five days."]

        def app(messages):
            return REPLIES[len(messages) // 2]

        def test_stop():
            looked = []
            def stop(messages):
                looked.append(len(messages))
                return "label" in messages[-1]["content"]
            chat = simulate(app, {PERSONA!r}, turns=3, stop=stop)
            assert [m["content"] for m in chat[1::2]] == ["Yes.", "Print the label."] and looked == [2, 4]

        def test_turns():
            assert len(simulate(app, {PERSONA!r}, turns=2)) == 4
        """
    )
    pytester.runpytest(*record_args(openai_server)).assert_outcomes(passed=2)


def test_the_app_s_reply_is_read_from_an_sdk_response_or_a_list_of_messages(pytester, openai_server):
    """Given apps returning a LiteLLM ModelResponse, an Anthropic message and a LangGraph-style state, the
    conversation holds each reply's text; an async app is awaited by asimulate."""
    openai_server.set_responder(playing_the_user(USER_LINES))
    pytester.makepyfile(
        test_shapes=f"""
        import litellm
        import pytest
        from pytest_llmjudge import asimulate, simulate

        def chat_completion(messages):
            return litellm.ModelResponse(choices=[{{"message": {{"role": "assistant", "content": "From LiteLLM."}}}}])

        def anthropic(messages):
            return {{"type": "message", "role": "assistant", "content": [{{"type": "text", "text": "From Claude."}}]}}

        def graph(messages):  # the whole state back, a tool call on the way
            call = {{"id": "c1", "type": "function", "function": {{"name": "lookup", "arguments": "{{}}"}}}}
            return {{"messages": [*messages, {{"role": "assistant", "content": None, "tool_calls": [call]}},
                                 {{"role": "tool", "tool_call_id": "c1", "content": "found"}},
                                 {{"role": "assistant", "content": "From the graph."}}]}}

        @pytest.mark.parametrize("app", [chat_completion, anthropic, graph])
        def test_shape(app):
            chat = simulate(app, {PERSONA!r}, turns=1)
            assert chat[1]["content"] == "From " + {{"chat_completion": "LiteLLM.", "anthropic": "Claude.", "graph": "the graph."}}[app.__name__]

        @pytest.mark.asyncio
        async def test_async():
            async def app(messages):
                return "Awaited."
            chat = await asimulate(app, {PERSONA!r}, turns=2)
            assert [m["content"] for m in chat[1::2]] == ["Awaited.", "Awaited."]
        """
    )
    pytester.runpytest(*record_args(openai_server), "-p", "no:cacheprovider").assert_outcomes(passed=4)


def test_model_names_another_model_for_the_user(pytester, openai_server):
    """Given model=..., the user's turns ask that model, at the judge's api base, and are keyed by it."""
    openai_server.set_responder(playing_the_user(USER_LINES))
    pytester.makepyfile(
        test_model=f"""
        from pytest_llmjudge import simulate

        def test_model():
            simulate(lambda m: "Yes.", {PERSONA!r}, turns=1, model="openai/user-test")
        """
    )
    pytester.runpytest(*record_args(openai_server)).assert_outcomes(passed=1)
    assert [r["model"] for r in user_turns(openai_server)] == ["user-test"]
    assert [g["model"] for g in generations(pytester.path, "test_model", "test_model").values()] == ["openai/user-test"]


def test_a_judge_backend_of_your_own_plays_the_user(pytester, openai_server):
    """Given a judge_backend fixture and no judge model, the user's turns are asked of that judge, keyed by
    its name, and replayed."""
    pytester.makeconftest(
        """
        import os, pytest

        def judge(messages):
            assert not os.environ.get("CI"), "a replay called the judge"
            return "Hello from the stand-in." if "role-playing a user" in messages[0]["content"] else "{}"

        judge.name = "stand-in"

        @pytest.fixture
        def judge_backend():
            return judge
        """
    )
    pytester.makepyfile(
        test_own=f"""
        from pytest_llmjudge import simulate

        def test_own():
            chat = simulate(lambda m: "Yes.", {PERSONA!r}, turns=2)
            assert [m["content"] for m in chat] == ["Hello from the stand-in.", "Yes."] * 2
        """
    )
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1)
    assert {g["model"] for g in generations(pytester.path, "test_own", "test_own").values()} == {"stand-in"}
    assert openai_server.request_count == 0
    pytester.runpytest("--judge-mode=replay").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("simulate(app, PERSONA, turns=0)", "turns must be a whole number >= 1"),
        ("simulate(app, PERSONA, turns=True)", "turns must be a whole number >= 1"),
        ("simulate(app, '  ', turns=2)", "persona must describe the user and their goal"),
        ("simulate('app', PERSONA, turns=2)", "takes the app as a callable"),
        ("simulate(app, PERSONA, turns=2, stop='done')", "stop must be a callable"),
        ("simulate(app, PERSONA, turns=2, model='')", "model must name a model"),
    ],
)
def test_bad_arguments_are_clear_errors_before_any_call(call, message, openai_server):
    from pytest_llmjudge import JudgeError, simulate

    def app(messages):
        return "Yes."

    with pytest.raises(JudgeError, match=message):
        eval(call, {"simulate": simulate, "app": app, "PERSONA": PERSONA})
    assert openai_server.request_count == 0


def test_an_app_that_gives_no_text_or_an_awaitable_is_a_clear_error(pytester, openai_server):
    openai_server.set_responder(playing_the_user(USER_LINES))
    pytester.makepyfile(
        test_bad_app=f"""
        import pytest
        from pytest_llmjudge import JudgeError, simulate

        def test_no_text():
            with pytest.raises(JudgeError, match=r"the app's reply to user turn 1 is a int: return the reply as text"):
                simulate(lambda m: 42, {PERSONA!r}, turns=1)

        def test_async_app():
            async def app(messages):
                return "Yes."
            with pytest.raises(JudgeError, match=r"an async app needs `await asimulate"):
                simulate(app, {PERSONA!r}, turns=1)
        """
    )
    result = pytester.runpytest(*record_args(openai_server), "-W", "error::RuntimeWarning")
    result.assert_outcomes(passed=2)


def test_an_empty_user_turn_is_a_clear_error(pytester, openai_server):
    """Given a user model that replies with nothing, simulate() fails naming the turn and the model, rather
    than ending the conversation as if the user were done."""
    openai_server.set_responder(playing_the_user([USER_LINES[0], "  "]))
    pytester.makepyfile(
        test_empty=f"from pytest_llmjudge import simulate\ndef test_x():\n    simulate(str, {PERSONA!r}, turns=3)\n"
    )
    result = pytester.runpytest(*record_args(openai_server))
    result.assert_outcomes(failed=1)
    assert f"simulate(): the simulated user's turn 2 is empty (model {MODEL})" in result.stdout.str()


def test_no_model_for_the_user_is_a_clear_error(pytester, openai_server):
    pytester.makepyfile(
        test_none=f"from pytest_llmjudge import simulate\ndef test_x():\n    simulate(str, {PERSONA!r}, turns=1)\n"
    )
    result = pytester.runpytest("--judge-mode=auto")
    result.assert_outcomes(failed=1)
    assert (
        "simulate() has no model for the simulated user: pass model=..., or --judge-model=MODEL" in result.stdout.str()
    )
    assert openai_server.request_count == 0


def test_simulate_keeps_its_public_signature():
    """Code outside the project calls simulate(app, persona, *, turns, stop=None, model=None)."""
    import inspect

    from pytest_llmjudge import asimulate, simulate

    for function in (simulate, asimulate):
        parameters = inspect.signature(function).parameters
        assert list(parameters) == ["app", "persona", "turns", "stop", "model"]
        assert [p.kind.name for p in parameters.values()][:3] == ["POSITIONAL_OR_KEYWORD"] * 2 + ["KEYWORD_ONLY"]
        assert parameters["stop"].default is None and parameters["model"].default is None


LONG_TALK = """
from pytest_llmjudge import simulate

def app(messages):  # a long reply each turn: 10 KB of its own
    turn = len(messages) // 2 + 1
    return f"Reply {{turn}}: " + " ".join(f"w{{turn}}x{{i}}" for i in range(1500))[:10_000]

def test_long():
    chat = simulate(app, "A customer with many questions about one order.", turns={turns})
    assert len(chat) == 2 * {turns} and all(len(m["content"]) > 10_000 for m in chat[1::2])
"""


def _asking(request: dict) -> str:
    """The simulated user: a short question each turn, numbered by how many it asked before."""
    return f"And what about point {sum(m['role'] == 'assistant' for m in request['messages']) + 1}?"


@pytest.mark.slow
def test_a_long_simulated_conversation_takes_room_in_proportion_to_its_turns_and_replays(pytester, monkeypatch):
    """Given a simulation of 200 turns, each app reply 10 KB, recorded live: each turn stores what it adds, so
    every turn's entry takes about the same room and the file about what was said (2 MB, not the
    conversation so far once per turn: 200 MB, past what a verdict file may hold); it replays offline."""
    pytester.makepyfile(test_talk=LONG_TALK.format(turns=200))
    with OpenAIServer(_asking) as server:
        pytester.runpytest(*record_args(server), "-p", "no:cacheprovider").assert_outcomes(passed=1)
        assert len(user_turns(server)) == 200
    path = pytester.path / "judge_verdicts" / "test_talk" / "test_long.json"
    said = 200 * 10_030  # what the app said; the user's short turns add little
    assert said < path.stat().st_size < 1.1 * said, path.stat().st_size
    stored = json.loads(path.read_text())["generations"]
    rooms = sorted(len(json.dumps(entry)) for entry in stored.values())
    assert len(rooms) == 200 and rooms[-1] < 11_000, "the last turns take the room of the first"
    assert sum("messages" in entry for entry in stored.values()) == 1  # the first turn's, whole

    monkeypatch.setenv("CI", "true")  # the turns come from the file, their messages put back together
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=1)


def test_a_file_that_would_outgrow_what_a_reader_accepts_is_never_written(pytester, openai_server, monkeypatch):
    """Given a verdict file limit of 60 KB and a simulation whose turns add 10 KB each: recording fails at the
    turn that would pass the limit, saying the limit and what to do; the file keeps the turns before it, and
    they replay (the test fails where the recording ends, not with an unreadable file)."""
    from pytest_llmjudge.store import verdict_file

    monkeypatch.setattr(verdict_file, "MAX_FILE_BYTES", 60_000)
    openai_server.set_responder(_asking)
    pytester.makepyfile(test_talk=LONG_TALK.format(turns=8))
    result = pytester.runpytest(*record_args(openai_server), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    path = pytester.path / "judge_verdicts" / "test_talk" / "test_long.json"
    result.stdout.fnmatch_lines(
        [
            f"*StoreError: refused to write the verdict file {path}: it would hold * bytes, over the limit of 60000 bytes*"
        ]
    )
    assert "Record less in this test: fewer or shorter simulated turns" in result.stdout.str()
    assert path.stat().st_size <= 60_000 and len(generations(pytester.path, "test_talk", "test_long")) == 6

    monkeypatch.setenv("CI", "true")
    replayed = pytester.runpytest("-p", "no:cacheprovider")
    replayed.assert_outcomes(failed=1)
    assert "no recorded user turn 7 for this conversation" in replayed.stdout.str()


def test_a_conversation_recorded_with_every_turn_whole_still_replays(pytester, monkeypatch):
    """Given a verdict file in the layout of before (each turn's messages whole, no `follows`), the turns replay,
    and a run in auto mode that records nothing leaves the file as it is."""
    pytester.makepyfile(test_chat=CHAT.format(replies=REPLIES))
    with OpenAIServer(playing_the_user(USER_LINES)) as private:
        pytester.runpytest(*record_args(private), "-p", "no:cacheprovider").assert_outcomes(passed=1)
    path = pytester.path / "judge_verdicts" / "test_chat" / "test_chat.json"
    document = json.loads(path.read_text())
    written = document["generations"]
    assert sum("follows" in e for e in written.values()) == 2, "turns 2 and 3 are stored as what they add"

    def messages_of(entry: dict) -> list:
        return entry["messages"] if "messages" in entry else messages_of(written[entry["follows"]]) + entry["added"]

    # each turn's messages put back whole, as they were stored before
    whole = {k: {**{f: v for f, v in e.items() if f not in ("follows", "added")}, "messages": messages_of(e)}
             for k, e in written.items()}  # fmt: skip
    assert sorted(len(e["messages"]) for e in whole.values()) == [2, 4, 6]
    document["generations"] = whole
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    before = path.read_bytes()

    monkeypatch.setenv("CI", "true")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    monkeypatch.delenv("CI")
    with OpenAIServer(playing_the_user(USER_LINES)) as private:
        pytester.runpytest(*record_args(private), "-p", "no:cacheprovider").assert_outcomes(passed=1)
        assert user_turns(private) == [], "every turn replayed from the file"
    assert path.read_bytes() == before
