"""Recorded generations: `generate` and friends call the model under test, record its replies in the
verdict file, and replay them offline like verdicts.

Each test drives pytest itself (pytester) with the real LiteLLM client against the local server,
which plays both parts: the model under test (`openai/gen-test`) and the judge (`openai/judge-test`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from helpers import CANARY_KEY, MODEL
from helpers.openai_server import OpenAIServer, score_from_prompt
from helpers.verdicts import verdict_files

GEN_MODEL = "openai/gen-test"


def model_reply(request: dict) -> str:
    """The model under test: a reply naming the prompt and temperature, which the judge scores 0.9."""
    prompt = request["messages"][-1]["content"]
    return f"Reply to [{prompt}] at t={request.get('temperature')}. Returns within 30 days. SCORE=0.9"


def both_parts(request: dict) -> str:
    """The model under test for gen-test, the fake judge (SCORE=x in the output) for everything else."""
    if request.get("model") == "gen-test":
        return model_reply(request)
    return score_from_prompt(request)


def generation_requests(server: OpenAIServer) -> list[dict]:
    return [r for r in server.requests if r.get("model") == "gen-test"]


def verdict_file(root: Path, module: str, test: str) -> dict:
    return json.loads((root / "judge_verdicts" / module / f"{test}.json").read_text())


@pytest.fixture
def server(openai_server: OpenAIServer) -> OpenAIServer:
    openai_server.set_responder(both_parts)
    return openai_server


def record_args(server: OpenAIServer) -> list[str]:
    return [
        f"--judge-model={MODEL}",
        f"--judge-api-base={server.base_url}",
        "--judge-retries=0",
        f"--generate-model={GEN_MODEL}",
        f"--generate-api-base={server.base_url}",
        "--judge-mode=auto",
    ]


GENERATE_THEN_JUDGE = f"""
from pytest_llmjudge import assert_judged, generate

def test_bot():
    reply = generate(
        "Can I return shoes after 20 days?", system="You are a shop assistant. Token {CANARY_KEY}.",
        temperature=0.2, api_key="{CANARY_KEY}",
    )
    assert reply.startswith("Reply to [Can I return shoes after 20 days?] at t=0.2.")
    assert_judged(reply, "Says returns are accepted within 30 days", threshold=0.7)
"""


def test_generate_records_then_replays_offline_with_no_call(pytester, monkeypatch):
    """Given a test that generates then judges, recorded live, when it is replayed with CI=true and
    the server stopped, it passes and nothing is sent."""
    pytester.makepyfile(test_bot=GENERATE_THEN_JUDGE)
    with OpenAIServer(both_parts) as private:
        pytester.runpytest(*record_args(private)).assert_outcomes(passed=1)
        sent = generation_requests(private)
        assert len(sent) == 1 and len(private.requests) == 2  # one generation, one judgment
        assert sent[0]["temperature"] == 0.2
        assert sent[0]["messages"][0] == {"role": "system", "content": f"You are a shop assistant. Token {CANARY_KEY}."}
    count = len(private.requests)

    stored = verdict_file(pytester.path, "test_bot", "test_bot")
    assert len(stored["generations"]) == 1 and len(stored["verdicts"]) == 1
    (generation,) = stored["generations"].values()
    assert generation["model"] == GEN_MODEL and generation["params"] == {"temperature": 0.2}
    text = (pytester.path / "judge_verdicts/test_bot/test_bot.json").read_text()
    assert CANARY_KEY not in text and "api_key" not in text

    monkeypatch.setenv("CI", "true")  # no model, no judge, no api base given: all found in the file
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "1 judged, 1 replayed, 0 live" in result.stdout.str()
    assert len(private.requests) == count


BATCH_AND_VARIATIONS = """
from pytest_llmjudge import assert_judged, generate_batch, generate_variations

def test_batch():
    replies = generate_batch("Can I return shoes?", n=3, temperature=(0.2, 0.6))
    assert [r.split(" at t=")[1].split(".")[0:2] for r in replies] == [["0", "2"], ["0", "4"], ["0", "6"]]
    for reply in replies:
        assert_judged(reply, "Says returns are accepted within 30 days")

def test_variations():
    replies = generate_variations("Explain the refund policy.", prompts=["Be brief. {task}", "You are a pirate."])
    assert replies[0].startswith("Reply to [Be brief. Explain the refund policy.]")
    assert replies[1].startswith("Reply to [You are a pirate.\\n\\nExplain the refund policy.]")
    for reply in replies:
        assert_judged(reply, "Says returns are accepted within 30 days")
"""


def test_batch_and_variations_record_every_member_then_replay_offline(pytester, monkeypatch):
    """Given generate_batch (n=3 over a temperature range) and generate_variations (two prompts), when
    recorded and then replayed with CI=true and the server stopped, every reply comes back in order."""
    pytester.makepyfile(test_many=BATCH_AND_VARIATIONS)
    with OpenAIServer(both_parts) as private:
        pytester.runpytest(*record_args(private)).assert_outcomes(passed=2)
        assert sorted(r["temperature"] for r in generation_requests(private) if "temperature" in r) == [0.2, 0.4, 0.6]
        assert len(generation_requests(private)) == 5
    count = len(private.requests)

    batch = verdict_file(pytester.path, "test_many", "test_batch")
    assert sorted(g["index"] for g in batch["generations"].values()) == [0, 1, 2]
    assert len(batch["verdicts"]) == 3
    assert len(verdict_file(pytester.path, "test_many", "test_variations")["generations"]) == 2

    monkeypatch.setenv("CI", "true")
    pytester.runpytest().assert_outcomes(passed=2)
    assert len(private.requests) == count


def test_a_generation_miss_in_replay_names_what_differs(pytester, server):
    """Given recorded generations, when the prompt of one and the temperature of another change, the
    replay fails with a ReplayMiss naming the prompt and the parameters, and calls nothing."""
    module = """
from pytest_llmjudge import generate

def test_prompt():
    generate("{prompt}")

def test_temperature():
    generate("Hello", temperature={temperature})
"""
    pytester.makepyfile(test_gen=module.format(prompt="Can I return shoes?", temperature=0.3))
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=2)
    count = server.request_count

    pytester.makepyfile(test_gen=module.format(prompt="Can I return boots?", temperature=0.7))
    result = pytester.runpytest(f"--generate-model={GEN_MODEL}", "--judge-mode=replay")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "ReplayMiss: no stored generation for this call of generate() (mode replay: --judge-mode)" in out
    assert "which differs in prompt" in out
    assert "which differs in parameters (temperature, ...)" in out
    assert "--judge-mode=auto" in out and "Traceback" not in out
    assert server.request_count == count


def test_a_generation_miss_names_each_field_it_differs_in_and_the_nearest_entry():
    """Given stored generations, a miss names the nearest one and what differs: the system prompt, the
    batch index, other messages, or (nothing else differing) the key scheme."""
    from pytest_llmjudge.pipeline.replay_miss import replay_miss
    from pytest_llmjudge.settings import resolve

    user = {"role": "user", "content": "Hello"}
    wanted = {"model": GEN_MODEL, "messages": [user], "params": {}, "index": 1, "key_version": 2}
    settings = resolve({}, {}, {"LLMJUDGE_MODE": "replay"})

    def differs(*stored: dict) -> str:
        entries = {str(i) * 64: {**entry, "reply": "r"} for i, entry in enumerate(stored)}
        text = str(
            replay_miss(
                "f" * 64, wanted, test="t", stored=entries, verdict_file_path=None, settings=settings, what="generation"
            )
        )
        assert text.startswith("no stored generation for this call of generate() (mode replay:")
        return text.split("which differs in ")[1].splitlines()[0]

    system = {**wanted, "messages": [{"role": "system", "content": "Be brief."}, user]}
    assert differs(system, {**system, "index": 0}) == "system"
    assert differs({**wanted, "index": 0}) == "batch index"
    assert differs({**wanted, "messages": [user, {"role": "assistant", "content": "Hi"}, user]}) == "messages"
    assert differs(wanted) == "key scheme (record it again)"


REFRESHED = """
from pytest_llmjudge import assert_judged, generate

def test_bot():
    reply = generate("Can I return shoes?")
    assert_judged(reply, "Says returns are accepted within 30 days", threshold=0.7)
"""


def new_model(request: dict) -> str:
    """The model under test after a change: another reply to the same prompt."""
    if request.get("model") == "gen-test":
        return model_reply(request).replace("Reply to", "New reply to")
    return score_from_prompt(request)


def test_refresh_regenerates_and_rejudges_the_new_reply(pytester, server, monkeypatch):
    """Given a recorded generation and verdict, when the model answers differently and the run is in
    refresh mode, the generation is replaced and the new reply judged; a replay then needs neither call."""
    pytester.makepyfile(test_bot=REFRESHED)
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=1)
    before = verdict_file(pytester.path, "test_bot", "test_bot")

    server.set_responder(new_model)
    count = server.request_count
    args = [a if a != "--judge-mode=auto" else "--judge-mode=refresh" for a in record_args(server)]
    pytester.runpytest(*args).assert_outcomes(passed=1)
    assert server.request_count == count + 2  # the model asked again, and the judge on its new reply
    after = verdict_file(pytester.path, "test_bot", "test_bot")
    assert after["generations"].keys() == before["generations"].keys()  # the same call, its reply replaced
    (generation,) = after["generations"].values()
    assert generation["reply"].startswith("New reply to")
    assert any(v["output"].startswith("New reply to") for v in after["verdicts"].values())

    monkeypatch.setenv("CI", "true")
    count = server.request_count
    pytester.runpytest().assert_outcomes(passed=1)
    assert server.request_count == count


FIXTURE_AND_ASYNC = """
import pytest
from pytest_llmjudge import agenerate, assert_judged_async

def test_fixture(generate):
    assert generate("Hello").startswith("Reply to [Hello]")
    assert len(generate.batch("Hello", n=2, temperature=0.5)) == 2

@pytest.mark.asyncio
async def test_async():
    reply = await agenerate("Hello async", temperature=0.1)
    await assert_judged_async(reply, "Says returns are accepted within 30 days")
"""


def test_the_fixture_and_agenerate_record_and_replay(pytester, server, monkeypatch):
    """Given the `generate` fixture (and its batch) and `agenerate` in an async test, when recorded and
    replayed with CI=true, the replay sends nothing."""
    pytester.makepyfile(test_forms=FIXTURE_AND_ASYNC)
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=2)
    assert len(generation_requests(server)) == 4  # "Hello" once (same call), the batch's second member, async
    count = server.request_count
    monkeypatch.setenv("CI", "true")
    pytester.runpytest().assert_outcomes(passed=2)
    assert server.request_count == count


def test_no_model_under_test_is_a_clear_error(pytester, server):
    """Given no --generate-model and no model=, generate() fails with the option to set, not a traceback."""
    pytester.makepyfile(test_none="from pytest_llmjudge import generate\ndef test_x():\n    generate('Hi')\n")
    result = pytester.runpytest("--judge-mode=auto")
    result.assert_outcomes(failed=1)
    assert "no model under test: pass model=... to generate(), or --generate-model=MODEL" in result.stdout.str()
    assert server.request_count == 0


@pytest.mark.slow
def test_two_xdist_workers_recording_into_one_file_lose_nothing(pytester, server):
    """Given every test sent to both xdist workers (--dist each), each generating a batch under its own
    model into the same verdict file at the same time, then the file holds every generation of both."""
    pytester.makepyfile(
        test_shared="""
        import os
        from pytest_llmjudge import generate_batch

        def test_shared():
            generate_batch("Hello from " + os.environ["PYTEST_XDIST_WORKER"], n=6, model="openai/gen-test")
        """
    )
    result = pytester.runpytest_subprocess(*record_args(server), "-n", "2", "--dist", "each")
    result.assert_outcomes(passed=2)
    stored = verdict_file(pytester.path, "test_shared", "test_shared")["generations"]
    assert len(stored) == 12
    assert {g["messages"][-1]["content"] for g in stored.values()} == {"Hello from gw0", "Hello from gw1"}


def test_prune_keeps_used_generations_and_removes_unused_ones(pytester, server):
    """Given a test that recorded two generations, when it uses only one of them and the run prunes,
    the used generation (and its verdict) stays and the unused one goes."""
    module = """
from pytest_llmjudge import assert_judged, generate

def test_bot():
    for prompt in {prompts!r}:
        assert_judged(generate(prompt), "Says returns are accepted within 30 days")
"""
    pytester.makepyfile(test_bot=module.format(prompts=["Keep me", "Drop me"]))
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=1)
    assert len(verdict_file(pytester.path, "test_bot", "test_bot")["generations"]) == 2

    pytester.makepyfile(test_bot=module.format(prompts=["Keep me"]))
    pytester.runpytest(*record_args(server), "--judge-prune").assert_outcomes(passed=1)
    stored = verdict_file(pytester.path, "test_bot", "test_bot")
    (kept,) = stored["generations"].values()
    assert kept["messages"][-1]["content"] == "Keep me"
    assert len(stored["verdicts"]) == 1


def _verdict_file(path: Path, generations: dict, verdicts: dict | None = None) -> Path:
    document = {"format": 1, "test": "t.py::test_x", "verdicts": verdicts or {}, "generations": generations}
    path.write_text(json.dumps(document))
    return path


def test_the_merge_driver_merges_generations_by_key(tmp_path):
    """Given two branches that each recorded a generation into the same file, the merge driver keeps
    both; the same key with two different model replies is a conflict that names it."""
    from pytest_llmjudge.cli import main

    a, b = "a" * 64, "b" * 64
    gen = {"model": GEN_MODEL, "messages": [], "params": {}, "index": 0}
    verdict = {"model": MODEL, "reply": '{"score": 1}'}
    base = _verdict_file(tmp_path / "base.json", {})
    ours = _verdict_file(tmp_path / "ours.json", {a: {**gen, "reply": "ours"}}, {"c" * 64: verdict})
    theirs = _verdict_file(tmp_path / "theirs.json", {b: {**gen, "reply": "theirs"}})
    assert main(["merge", str(base), str(ours), str(theirs)]) == 0
    merged = json.loads(ours.read_text())
    assert set(merged["generations"]) == {a, b} and set(merged["verdicts"]) == {"c" * 64}

    ours = _verdict_file(tmp_path / "ours.json", {a: {**gen, "reply": "ours"}})
    theirs = _verdict_file(tmp_path / "theirs.json", {a: {**gen, "reply": "theirs"}})
    assert main(["merge", str(base), str(ours), str(theirs)]) == 1
    assert json.loads(ours.read_text())["generations"][a]["reply"] == "ours"


def test_a_file_without_generations_reads_and_writes_as_before(tmp_path):
    """Given a verdict file from before generations, it reads with none and is rewritten byte for byte;
    writing a verdict into a file keeps its generations."""
    from pytest_llmjudge.store.verdict_file import VerdictDocument, VerdictFile

    path = tmp_path / "old.json"
    old = {"format": 1, "test": "t.py::test_x", "verdicts": {"c" * 64: {"model": MODEL, "reply": "r"}}}
    text = json.dumps(old, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    path.write_text(text)
    document = VerdictDocument.read(path)
    assert document.generations == {}
    document.write()
    assert path.read_text() == text

    verdict_file = VerdictFile(path, "t.py::test_x")
    verdict_file.put(
        "a" * 64, {"model": GEN_MODEL, "messages": [], "params": {}, "index": 0, "reply": "g"}, "generation"
    )
    VerdictFile(path, "t.py::test_x").put("d" * 64, {"model": MODEL, "reply": "r2"})
    document = VerdictDocument.read(path)
    assert set(document.generations) == {"a" * 64} and set(document.entries) == {"c" * 64, "d" * 64}


SPREAD_AND_COMBINE = """
from pytest_llmjudge import generate_batch, generate_variations

def temperatures(replies):
    return [float(r.split(" at t=")[1].split(". Returns")[0]) for r in replies]

def test_spread():
    assert temperatures(generate_batch("Five.", n=5, temperature=(0.5, 0.9))) == [0.5, 0.6, 0.7, 0.8, 0.9]
    assert temperatures(generate_batch("One.", n=1, temperature=(0.5, 0.9))) == [0.5]
    assert temperatures(generate_batch("Three.", n=3, temperature=0.7)) == [0.7, 0.7, 0.7]
    generate_variations("Sum up.", prompts=["Be brief. {task} No {braces} lost.", "You are a pirate."])
"""


def test_batch_temperatures_spread_over_the_range_and_variations_combine_with_the_task(pytester, server):
    """Given batches over a temperature range, of one member, and at one temperature, each member is
    asked at its own temperature, both ends included; a variation takes the task at {task}, or
    after a blank line, and keeps any other braces."""
    pytester.makepyfile(test_spread=SPREAD_AND_COMBINE)
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=1)
    asked: dict[str, list[float | None]] = {}
    for request in generation_requests(server):
        asked.setdefault(request["messages"][-1]["content"], []).append(request.get("temperature"))
    assert {prompt: sorted(t) for prompt, t in asked.items() if prompt in ("Five.", "One.", "Three.")} == {
        "Five.": [0.5, 0.6, 0.7, 0.8, 0.9],
        "One.": [0.5],
        "Three.": [0.7, 0.7, 0.7],
    }
    assert set(asked) - {"Five.", "One.", "Three."} == {
        "Be brief. Sum up. No {braces} lost.",
        "You are a pirate.\n\nSum up.",
    }


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("generate_batch('Hi', n=0)", "n must be a whole number >= 1"),
        ("generate_batch('Hi', temperature=(0.1,))", "temperature must be a number or a (low, high) pair"),
        ("generate('Hi', model='openai/gen-test', stream=True)", "does not take stream=..."),
        ("generate('Hi', model='openai/gen-test', n=3)", "use generate_batch(prompt, n=...)"),
        ("generate_variations('Hi', prompts='one')", "a non-empty list of prompt variations"),
    ],
)
def test_bad_arguments_are_clear_errors_before_any_call(call, message):
    import pytest_llmjudge
    from pytest_llmjudge import JudgeError

    with pytest.raises(JudgeError) as excinfo:
        eval(call, {name: getattr(pytest_llmjudge, name) for name in pytest_llmjudge.__all__})
    assert message in str(excinfo.value)


def test_an_unreachable_model_under_test_is_named_in_the_error(pytester):
    """Given a model under test whose server refuses connections, generate() fails naming the model
    and the options that point at it, with nothing stored."""
    pytester.makepyfile(test_down="from pytest_llmjudge import generate\ndef test_x():\n    generate('Hi')\n")
    result = pytester.runpytest(
        f"--generate-model={GEN_MODEL}",
        "--generate-api-base=http://127.0.0.1:9/v1",
        "--judge-retries=0",
        "--judge-mode=auto",
    )
    result.assert_outcomes(failed=1)
    assert f"generate() could not get a reply from {GEN_MODEL}" in result.stdout.str()
    assert not verdict_files(pytester.path)


def test_generations_stay_out_of_http_cassettes(pytester, server):
    """Given a test under @pytest.mark.vcr that generates, when it records, the generation goes into the
    verdict file and not into the cassette; with no cassette to answer it, a replay still passes."""
    pytest.importorskip("pytest_recording")
    pytester.makepyfile(
        test_vcr="""
        import pytest
        from pytest_llmjudge import generate

        @pytest.mark.vcr
        def test_with_cassette():
            assert generate("Hello").startswith("Reply to [Hello]")
        """
    )
    pytester.runpytest(*record_args(server), "--record-mode=once").assert_outcomes(passed=1)
    assert len(generation_requests(server)) == 1
    for cassette in pytester.path.rglob("cassettes/**/*.yaml"):
        assert "chat/completions" not in cassette.read_text(), "the generation went into the user's cassette"
    assert len(verdict_file(pytester.path, "test_vcr", "test_with_cassette")["generations"]) == 1
    pytester.runpytest(f"--generate-model={GEN_MODEL}", "--judge-mode=replay").assert_outcomes(passed=1)
    assert len(generation_requests(server)) == 1


# -- pinned keys: moving generations onto the judgment pipeline must not re-generate anything ----

PINNED_GENERATIONS = """
from pytest_llmjudge import generate, generate_batch, generate_variations

def test_pinned():
    generate("Hi")
    generate("Can I return shoes?", system="You are a shop assistant.", temperature=0.2, max_tokens=64, api_key="k")
    generate_batch("Name a colour.", n=2, temperature=(0.3, 0.5), seed=7)
    generate_variations("Sum up.", prompts=["Be brief. {task}", "You are a pirate."])
"""

# generation key -> (batch index, params as stored), and a hash of the whole "generations" section as
# stored (messages, params, index, key version, reply): computed before generations joined the pipeline.
PINNED_GENERATION_KEYS = {
    "35af3cbfe5c4b81773bc7d9f24ac89726babb95db280d7ec6ba67a1bf86bbd2f": (0, {}),
    "6897f19d93778383bafe600140279d0844267f5d314db387ead71f4192a54d60": (0, {}),
    "b6d5c409cc934c6522a47b465d85e66b2f10d676e5740bfdfc18d2e20341ef6b": (0, {}),
    "b0e201bfa7f2fab4e2e7ea8c718e295bdac7b2ffd9bbffa3df4f1cba1d159865": (0, {"max_tokens": 64, "temperature": 0.2}),
    "c8c388b1ff4f9a960f36adcc46d6943e98abce866cec8fbc2c53ae770ce81bcf": (0, {"seed": 7, "temperature": 0.3}),
    "1f8640d27e73c4b73bcc43d80797403313ebd2d24196b994010316bb594a46a2": (1, {"seed": 7, "temperature": 0.5}),
}
PINNED_GENERATIONS_SHA256 = "33ee4766bee1ef708fe184ef4ef009d1959dd6b2f7f59b2a88229d008a04e0fa"


def test_generation_keys_and_stored_fields_stay_pinned(pytester, server):
    """Given generations of every form (plain, with a system prompt and parameters, a batch, variations),
    when they are recorded, their keys and stored entries are exactly those recorded before any refactor."""
    pytester.makepyfile(test_pinned=PINNED_GENERATIONS)
    pytester.runpytest(*record_args(server), "-p", "no:cacheprovider").assert_outcomes(passed=1)
    stored = verdict_file(pytester.path, "test_pinned", "test_pinned")["generations"]
    assert {key: (entry["index"], entry["params"]) for key, entry in stored.items()} == PINNED_GENERATION_KEYS
    assert hashlib.sha256(json.dumps(stored, sort_keys=True).encode()).hexdigest() == PINNED_GENERATIONS_SHA256


def test_a_stored_generation_edited_to_another_model_is_refused_not_replayed(pytester, server):
    """Given a recorded generation whose model was edited in the verdict file (so the entry no longer
    belongs under its key), when it is replayed, the test fails naming the file and the mismatch, as a
    tampered verdict does, and nothing is called."""
    pytester.makepyfile(test_bot="from pytest_llmjudge import generate\ndef test_bot():\n    generate('Hello')\n")
    pytester.runpytest(*record_args(server)).assert_outcomes(passed=1)
    path = pytester.path / "judge_verdicts" / "test_bot" / "test_bot.json"
    document = json.loads(path.read_text())
    (entry,) = document["generations"].values()
    entry["model"], entry["reply"] = "openai/other", "a reply the model under test never gave"
    path.write_text(json.dumps(document))
    count = server.request_count

    result = pytester.runpytest(f"--generate-model={GEN_MODEL}", "--judge-mode=replay")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "does not belong under it (it was recorded with model 'openai/other', not 'openai/gen-test')" in out
    assert "Traceback" not in out
    assert server.request_count == count
