"""A repeated test's run is one more field of the test: run 0 keeps every key of today, byte for byte, and
each later run keys (and records) its judgments and generations as its own.

The pinned keys below were computed before runs existed (the same constants pin the pipeline's and the
generations' keys in their own modules' tests).
"""

from __future__ import annotations

import json

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer
from helpers.rag_judge import rag_judge
from helpers.runtime import own_runtime
from helpers.verdicts import verdict_files
from pytest_llmjudge import runtime as judge_runtime
from pytest_llmjudge.pipeline.generations import generation_key
from pytest_llmjudge.pipeline.plan import Options, plan

# planned with LLMJUDGE_MODEL=openai/judge, this output and criteria, input "Can I return shoes?"
PINNED_JUDGMENT_KEY = "a36abda2a2c00c33e6e9e57815e785b9205bb9f2f7a8a6e3aa32d91bb6176ace"
# generate("Hi") of openai/gen-test
PINNED_GENERATION_KEY = "35af3cbfe5c4b81773bc7d9f24ac89726babb95db280d7ec6ba67a1bf86bbd2f"


def keys_in_run(run: int, runs: int = 3) -> tuple[str, ...]:
    runtime = own_runtime(environ={"LLMJUDGE_MODEL": "openai/judge"})
    context = judge_runtime.TestContext(
        "test_x.py::test_x", None, "test_x"
    )  # no module: nothing is stored or looked up
    context.run, context.runs = run, runs
    try:
        planned = plan(
            "Returns are accepted within 30 days.",
            "Says returns are accepted within 30 days",
            Options(input="Can I return shoes?"),
            runtime=runtime,
            context=context,
            backend=None,
            overrides={},
        )
        return tuple(call.key for call in planned.calls)
    finally:
        runtime.close()


def test_run_0_of_a_repeated_test_keeps_todays_judgment_key_and_later_runs_have_their_own():
    assert keys_in_run(0) == (PINNED_JUDGMENT_KEY,)
    later = {keys_in_run(1), keys_in_run(2)}
    assert len(later) == 2 and (PINNED_JUDGMENT_KEY,) not in later
    assert keys_in_run(1) == keys_in_run(1, runs=5), "a run's key names the run, not how many there are"


def test_run_0_keeps_todays_generation_key_and_later_runs_have_their_own():
    messages = [{"role": "user", "content": "Hi"}]
    assert generation_key("openai/gen-test", messages, {}, 0) == PINNED_GENERATION_KEY
    assert generation_key("openai/gen-test", messages, {}, 0, run=0) == PINNED_GENERATION_KEY
    assert generation_key("openai/gen-test", messages, {}, 0, run=1) != PINNED_GENERATION_KEY


MIXED = """
import pytest
from pytest_llmjudge import Faithfulness, assert_judged, generate

def test_app():
    reply = generate("Hi")
    assert_judged(reply, "Answers the greeting", threshold=0.5)
    assert_judged(
        "Returns are accepted within 30 days.", "Is faithful to the policy",
        context=["Returns are accepted within 30 days."], rubric=Faithfulness(), threshold=0.5,
    )
"""


def both(request: dict) -> str:
    """The model under test (gen-test), and a judge that answers every step of a RAG kind."""
    if request.get("model") == "gen-test":
        return "Hello there!"
    return rag_judge(request)


@pytest.mark.slow
def test_judge_runs_never_changes_the_keys_of_run_0(pytester):
    """Given a test that generates and judges (one judgment in two steps), recorded plainly in one
    project and with --judge-runs=3 in another, the repeated one stores every key the plain one
    stores, entry for entry, and the keys of runs 1 and 2 besides, each entry naming its run."""
    with OpenAIServer(both) as server:
        args = [
            f"--judge-model={MODEL}",
            f"--judge-api-base={server.base_url}",
            "--generate-model=openai/gen-test",
            f"--generate-api-base={server.base_url}",
            "--judge-mode=auto",
            "-p",
            "no:cacheprovider",
        ]
        pytester.makepyfile(test_app=MIXED)
        pytester.runpytest(*args).assert_outcomes(passed=1)
        (path,) = verdict_files(pytester.path)
        plain = json.loads(path.read_text())
        path.unlink()
        pytester.runpytest(*args, "--judge-runs=3").assert_outcomes(passed=1)
        repeated = json.loads(path.read_text())
    for section in ("generations", "verdicts"):
        run_0 = {key: entry for key, entry in repeated[section].items() if "run" not in entry}
        assert run_0 == plain[section], section
        later = sorted(entry["run"] for entry in repeated[section].values() if "run" in entry)
        assert later == sorted([1, 2] * len(plain[section])), section
