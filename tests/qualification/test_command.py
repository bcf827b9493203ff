"""`llmjudge qualify` against judges of known behaviour, served on 127.0.0.1 through the real LiteLLM client, then
replayed offline with CI=true, no judge configured and no call: the same figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import CANARY_KEY, MODEL
from helpers.openai_server import Reply
from helpers.qualify_judges import always_better, always_first, always_longer, know, responses, unreadable_when_first
from pytest_llmjudge.cli import main
from pytest_llmjudge.qualification.pairs import bundled_subsets, load_pairs, quick
from pytest_llmjudge.store.verdict_file import VerdictDocument


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (its own rootdir), the working directory of the commands run."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def qualify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["qualify", *args])
    out, err = capsys.readouterr()
    return code, out, err


def report(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def figures_of(document: dict) -> dict:
    """The report without how this run had its answers (live or replayed) and how long it took."""
    return {k: v for k, v in document.items() if k != "run"}


@pytest.mark.slow
def test_a_judge_that_picks_the_labelled_better_output_qualifies_and_replays_offline(
    project, openai_server, live_args, capsys, monkeypatch
):
    openai_server.set_responder(always_better)
    code, out, err = qualify(capsys, *live_args, "--json", "live.json")
    assert code == 0, err
    assert openai_server.request_count == 770, "385 pairs, each in both orders"
    live = report(project / "live.json")
    assert live["qualified"] is True and live["shortfalls"] == []
    assert {name: (s["accuracy"], s["n"]) for name, s in live["subsets"].items()} == {
        "GPTInst": (1.0, 92),
        "GPTOut": (1.0, 47),
        "Manual": (1.0, 46),
        "MT-Bench": (1.0, 200),
    }
    assert live["position_consistency"]["value"] == 1.0 and live["position_consistency"]["n"] == 385
    assert live["first_slot_rate"]["value"] == 0.5, "the better output is shown first in half the answers"
    assert live["length_bias"]["gap"]["value"] == 0.0 and live["kappa"]["value"] == 1.0
    assert live["unreadable"]["count"] == 0 and live["run"]["answers"] == {"live": 770}
    assert live["judge"]["model"] == MODEL and live["anchors"]["GPT-4"]["accuracy"] == 0.8182
    assert "qualified: every figure meets its bar" in out and "GPTInst" in out
    stored = sorted(p.name for p in (project / "judge_verdicts" / "qualification").glob("*.json"))
    assert stored == ["GPTInst.json", "GPTOut.json", "MT-Bench.json", "Manual.json"]
    assert CANARY_KEY not in "".join(p.read_text() for p in (project / "judge_verdicts").rglob("*.json"))

    # CI: replay mode, no judge configured (no model, no api base), the server never asked.
    monkeypatch.setenv("CI", "true")
    code, out, err = qualify(capsys, "--json", "replayed.json")
    assert code == 0, err
    assert openai_server.request_count == 770, "a replay makes no call"
    replayed = report(project / "replayed.json")
    assert figures_of(replayed) == figures_of(live)
    assert replayed["run"]["answers"] == {"replayed": 770}


def test_a_judge_that_always_picks_the_first_shown_is_not_qualified(project, openai_server, live_args, capsys):
    openai_server.set_responder(always_first)
    code, out, _ = qualify(capsys, *live_args, "--quick", "--json", "-")
    document = json.loads(out)
    assert (document["run"]["answers"], openai_server.request_count) == ({"live": 80}, 80), "each answer asked"
    assert code == 1
    assert document["qualified"] is False
    assert document["position_consistency"]["value"] == 0.0 and document["first_slot_rate"]["value"] == 1.0
    assert all(s["accuracy"] == 0.5 for s in document["subsets"].values()), "right in exactly one order of each pair"
    assert document["shortfalls"] == [
        "accuracy 50.0% < min_accuracy 75.0%",
        "position consistency 0.0% < min_position_consistency 80.0%",
    ]
    assert document["run"]["quick"] is True and document["overall"]["n"] == 40


def test_a_judge_that_always_picks_the_longer_output_is_not_qualified(project, openai_server, live_args, capsys):
    openai_server.set_responder(always_longer)
    code, out, _ = qualify(capsys, *live_args, "--quick", "--json", "quick.json")
    document = report(project / "quick.json")
    assert (document["run"]["answers"], openai_server.request_count) == ({"live": 80}, 80), "each answer asked"
    assert code == 1
    accuracy = {name: s["accuracy"] for name, s in document["subsets"].items()}
    # In most adversarial pairs the worse output is the longer: 2, 3 and 1 of the 10 quick pairs are otherwise.
    assert accuracy == {"GPTInst": 0.2, "GPTOut": 0.3, "Manual": 0.1, "MT-Bench": 0.6}
    bias = document["length_bias"]
    assert bias["better_longer"]["value"] == 1.0 and bias["better_shorter"]["value"] == 0.0
    assert bias["gap"]["value"] == 1.0 and bias["gap"]["interval"][0] > 0.5
    assert document["position_consistency"]["value"] == 1.0, "consistent: length does not change with order"
    assert "length gap 100.0 points > max_length_gap 20.0 points" in document["shortfalls"]
    assert "NOT QUALIFIED: accuracy 30.0% < min_accuracy 75.0%; length gap 100.0 points" in out


def test_unreadable_answers_are_counted_recorded_and_replayed(project, openai_server, live_args, capsys, monkeypatch):
    gptinst, gptout = (quick(s).pairs[0] for s in bundled_subsets()[:2])
    # One order of a GPTInst pair and both orders of a GPTOut pair hold no verdict, asked again too.
    openai_server.set_responder(unreadable_when_first(gptinst.output_1, gptout.output_1, gptout.output_2))
    code, _, err = qualify(capsys, *live_args, "--quick", "--json", "live.json")
    assert code == 0, err
    assert openai_server.request_count == 80 + 3, "each unreadable reply is asked for the format once more"
    live = report(project / "live.json")
    assert live["unreadable"]["count"] == 3 and live["unreadable"]["value"] == pytest.approx(3 / 80)
    assert (live["subsets"]["GPTInst"]["unreadable"], live["subsets"]["GPTOut"]["unreadable"]) == (1, 2)
    assert live["overall"]["accuracy"] == 1.0, "an unreadable answer is neither right nor wrong"
    assert live["position_consistency"]["n"] == 38, "the two pairs with an unreadable answer are not counted"
    kept = {
        name: VerdictDocument.read(project / "judge_verdicts" / "qualification" / f"{name}.json").unreadable
        for name in ("GPTInst", "GPTOut")
    }
    assert [len(v) for v in kept.values()] == [1, 2]
    assert "hard to say" in next(iter(kept["GPTInst"].values()))["reply"]

    monkeypatch.setenv("CI", "true")
    code, _, err = qualify(capsys, "--json", "replayed.json", "--quick", "--max-unreadable", "0.01")
    assert code == 1
    assert openai_server.request_count == 83
    replayed = report(project / "replayed.json")
    assert replayed["unreadable"] == live["unreadable"]
    assert replayed["shortfalls"] == ["unreadable 3.8% > max_unreadable 1.0%"]

    # Asked again (refresh), the judge answers: its verdicts replace the unreadable replies on record.
    monkeypatch.delenv("CI")
    openai_server.set_responder(always_better)
    code, _, err = qualify(capsys, *live_args, "--quick", "--judge-mode=refresh", "--json", "refreshed.json")
    assert code == 0, err
    assert report(project / "refreshed.json")["unreadable"]["count"] == 0
    for name in ("GPTInst", "GPTOut"):
        assert VerdictDocument.read(project / "judge_verdicts" / "qualification" / f"{name}.json").unreadable == {}


def test_a_reply_cut_off_at_the_token_cap_stays_unreadable_in_a_replay(
    project, openai_server, live_args, capsys, monkeypatch
):
    # A reply that runs on to max_tokens is unreadable live, whatever it says before the cut (the same cap
    # would cut it again); its replay must count it so too, not read the half it holds ("The answer is A").
    gptinst = quick(bundled_subsets()[0]).pairs[0]

    def respond(request: dict) -> Reply | str:
        if responses(request)[0] == gptinst.output_1:
            return Reply(
                content='{"reasoning": "The answer is A. The answer is A. The answer is', finish_reason="length"
            )
        return always_better(request)

    openai_server.set_responder(respond)
    code, _, err = qualify(capsys, *live_args, "--quick", "--json", "live.json")
    assert code == 0, err
    live = report(project / "live.json")
    assert live["unreadable"]["count"] == 1
    monkeypatch.setenv("CI", "true")
    code, _, err = qualify(capsys, "--quick", "--json", "replayed.json")
    assert code == 0, err
    assert figures_of(report(project / "replayed.json")) == figures_of(live)
    assert report(project / "replayed.json")["unreadable"]["count"] == 1


def test_more_pairs_from_a_file_of_the_same_shape(project, openai_server, live_args, capsys):
    pairs = [
        {"input": "Name a prime.", "output_1": "9", "output_2": "7", "label": 2},
        {"input": "Say hi.", "output_1": "Hi!", "output_2": "Bye.", "label": 1},
    ]
    (project / "mine.json").write_text(json.dumps(pairs))
    know(load_pairs(project / "mine.json").pairs)
    openai_server.set_responder(always_better)
    code, out, err = qualify(capsys, *live_args, "--quick", "--data", "mine.json", "--json", "-")
    assert code == 0, err
    document = json.loads(out)
    mine = document["subsets"]["mine"]
    assert (mine["n"], mine["accuracy"], mine["source"], mine["anchors"]) == (2, 1.0, "mine.json", {})
    assert document["run"]["data"] == ["mine.json"] and document["overall"]["n"] == 42
    assert (project / "judge_verdicts" / "qualification" / "mine.json").is_file()


def test_your_own_template_is_the_judgment_and_a_changed_prompt_is_a_miss_naming_it(
    project, openai_server, live_args, capsys, monkeypatch
):
    template = project / "compare.txt"
    template.write_text(
        "Criteria: {criteria}\n\nInstruction:\n{input}\n\nResponse A:\n{response_a}\n\nResponse B:\n{response_b}\n\n"
        'Which is better? Answer with JSON: {{"reasoning": "...", "winner": "A" or "B"}}'
    )
    openai_server.set_responder(always_better)
    code, out, err = qualify(capsys, *live_args, "--quick", "--template", str(template), "--json", "-")
    assert code == 0, err
    assert json.loads(out)["judge"]["prompt"] == "Pairwise with your template (answer: labels)"
    assert "{response_a}" not in openai_server.requests[0]["messages"][-1]["content"]

    monkeypatch.setenv("CI", "true")
    code, _, err = qualify(capsys, "--quick", "--template", str(template))
    assert code == 0, err
    code, _, err = qualify(capsys, "--quick")  # the default prompt: never recorded
    assert code == 2
    assert err.startswith("llmjudge qualify: error: GPTInst pair 0 (output 1 shown first): no stored verdict")
    assert "; nearest stored: key " in err and "which differs in" in err, "the miss says what changed"
    assert "record it with a reachable judge: llmjudge qualify --judge-mode=auto" in err
    code, _, err = qualify(capsys, "--quick", "--template", str(template), "--judge-temperature=0.5")
    assert code == 2 and "which differs in temperature (--judge-temperature)" in err, "a changed judge setting is named"
    assert openai_server.request_count == 80


def test_a_replay_with_nothing_recorded_exits_2_with_a_hint(project, capsys, monkeypatch):
    monkeypatch.setenv("CI", "true")
    code, out, err = qualify(capsys, "--quick", f"--judge-model={MODEL}")
    assert code == 2 and out == ""
    assert "GPTInst pair 0 (output 1 shown first): no stored verdict" in err
    assert err.count("\n") == 1, "one line"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--min-accuracy", "2"], "--min-accuracy must be a number in [0, 1], got 2.0"),
        (["--max-length-gap", "wide"], "--max-length-gap takes a number (or off), got 'wide'"),
        (["--data", "missing.json"], "missing.json: cannot read the pairs file"),
        (["--answer", "scores"], "--answer describes your template: pass --template FILE with it"),
        (["--template", "missing.txt"], "missing.txt: cannot read the template"),
        ([f"--judge-model={MODEL}", "--judge-samples=2"], "--judge-samples is 2: pass --judge-samples=1"),
        (["--judge-model=openai/a,openai/b"], "a qualification judges with one model, and --judge-model names 2"),
        (["--criteria", " "], "the criteria are empty"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_it(project, capsys, args, message):
    code, out, err = qualify(capsys, "--quick", *args)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1, err


def test_a_bad_pairs_file_names_the_pair_and_counts_the_others(project, capsys):
    (project / "bad.json").write_text(json.dumps([{"input": "x", "output_1": "a", "output_2": "b", "label": 0}] * 3))
    code, _, err = qualify(capsys, "--data", "bad.json")
    assert code == 2
    assert "bad.json: pair 0: 'label' must be 1 or 2 (the better output), got 0 (and 2 more problems)" in err


def test_thresholds_can_be_set_and_dropped(project, openai_server, live_args, capsys):
    openai_server.set_responder(always_first)
    code, out, _ = qualify(
        capsys, *live_args, "--quick", "--min-accuracy", "0.5", "--min-position-consistency", "off", "--json", "-"
    )
    assert code == 0
    document = json.loads(out)
    assert document["thresholds"]["min_position_consistency"] is None
    assert document["thresholds"]["min_accuracy"] == 0.5


def test_the_console_script_exits_1_and_draws_no_progress_bar_in_a_pipe(project, openai_server, live_args):
    openai_server.set_responder(always_first)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LLMJUDGE_")}
    environ.update(OPENAI_API_KEY=CANARY_KEY, LITELLM_LOCAL_MODEL_COST_MAP="True")
    done = subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge", "qualify", "--quick", *live_args],
        cwd=project,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "NOT QUALIFIED" in done.stdout and done.stderr == "", "no bar, no traceback"


def test_each_order_is_timed_as_its_own_judgment(project, openai_server, live_args, capsys):
    # One call in flight at a time: every answer waits for the ones before it.  Each order's deadline counts its
    # own call only, not the other order's call nor the queue it waited in.
    openai_server.set_responder(always_better)
    openai_server.latency_s = 0.2
    code, _, err = qualify(capsys, *live_args, "--quick", "--judge-concurrency=1", "--judge-timeout=1.5")
    assert code == 0, err
    assert openai_server.request_count == 80 and openai_server.max_in_flight == 1


def test_the_answers_are_in_flight_together_within_judge_concurrency(project, openai_server, live_args, capsys):
    openai_server.set_responder(always_better)
    openai_server.latency_s = 0.1
    code, _, err = qualify(capsys, *live_args, "--quick", "--judge-concurrency=4")
    assert code == 0, err
    assert openai_server.request_count == 80 and openai_server.max_in_flight == 4
