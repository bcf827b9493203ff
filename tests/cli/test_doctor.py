"""`llmjudge doctor` and `pytest --judge-doctor`: one line per check, non-zero on a failed one.

Driven through the CLI's `main` and through pytest itself, against the local OpenAI-shaped server and
the OpenAI reasoning-model server (which, like OpenAI, serves only under `/v1`).
"""

from __future__ import annotations

import json
import re

import pytest

from helpers import CANARY_KEY, MODEL
from helpers.openai_server import OpenAIServer
from helpers.providers import ReasoningServer, Turn
from pytest_llmjudge.cli import main


def knowing_judge(request: dict) -> str:
    """A judge that knows the capital of France, and answers in the form each rubric asks for."""
    system = request["messages"][0]["content"]
    right = "Paris" in request["messages"][-1]["content"]
    if "integer scale from" in system:
        return json.dumps({"reasoning": "Checked the capital.", "score": 5 if right else 1})
    if '"verdict": "pass" or "fail"' in system:
        return json.dumps({"reasoning": "Checked.", "verdict": "pass" if right else "fail", "confidence": "high"})
    return json.dumps({"reasoning": "Checked the capital.", "score": 0.95 if right else 0.05})


@pytest.fixture
def judge_server(openai_server: OpenAIServer) -> OpenAIServer:
    openai_server.set_responder(knowing_judge)
    return openai_server


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["doctor", *args])
    return code, capsys.readouterr().out.splitlines()


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch):
    """Run where no ini file of this project is found."""
    monkeypatch.chdir(tmp_path)


def test_a_healthy_judge_passes_every_check(capsys, judge_server, tmp_path):
    code, lines = doctor(capsys, f"--judge-model={MODEL}", f"--judge-api-base={judge_server.base_url}")
    assert code == 0, lines
    assert lines[1] == "ok    model              openai/judge-test: LiteLLM provider openai, model judge-test"
    # What the probe's calls really sent: the default reply cap, and the JSON mode LiteLLM chose for a local model.
    assert (
        lines[2] == "ok    parameters         sent temperature=0.0, max_tokens=2048, response_format=json_object+schema"
    )
    assert lines[3].startswith("ok    credentials        ") and "OPENAI_API_KEY is set" in lines[3]
    assert lines[4].startswith("info  structured output  ")
    assert lines[5].startswith("info  logprobs           sent where asked for")
    assert lines[6:9] == [
        "ok    probe score        parsed and right: clear pass 0.95, clear fail 0.05 (threshold 0.5)",
        "ok    probe pass/fail    parsed and right: clear pass 1.00, clear fail 0.00 (threshold 0.5)",
        "ok    probe likert       parsed and right: clear pass 1.00, clear fail 0.00 (threshold 0.5)",
    ]
    assert re.fullmatch(
        r"info  probe cost         6 judged: the judge's calls took \d+\.\d\d s, the slowest judgment's \d+\.\d\d s "
        r"\(\d+\.\d\d s in all, with planning and parsing\), 180 tokens \(120 prompt \+ 60 completion\), cost unknown "
        r"\(LiteLLM has no price for openai/judge-test; --judge-price gives one\)",
        lines[9],
    ), lines[9]
    assert lines[-1] == "llmjudge doctor: ok"
    assert judge_server.request_count == 6
    assert not any(tmp_path.rglob("*.json")), "the doctor stores nothing"
    assert CANARY_KEY not in "\n".join(lines)


def test_settings_come_from_the_ini_file_and_environment_as_for_pytest(capsys, judge_server, tmp_path, monkeypatch):
    (tmp_path / "pytest.ini").write_text(f"[pytest]\njudge_model = {MODEL}\njudge_threshold = 0.6\n")
    monkeypatch.setenv("LLMJUDGE_API_BASE", judge_server.base_url)
    code, lines = doctor(capsys)
    assert code == 0, lines
    assert lines[0].startswith("info  settings           mode auto (default), threshold 0.6, api base http://127.0")


def test_a_missing_key_fails_naming_the_variable_and_calls_nothing(capsys, judge_server, monkeypatch):
    # A cloud judge needs its key (a local one, at an api base, needs none: see test_local_judge_key.py).
    monkeypatch.delenv("OPENAI_API_KEY")
    code, lines = doctor(capsys, "--judge-model=gpt-4o-mini")
    assert code == 1
    assert (
        "FAIL  credentials        not set: OPENAI_API_KEY (LiteLLM needs it for provider openai); export it before "
        "running the suite" in lines
    )
    assert "skip  probe              no live call without the credentials above" in lines
    assert lines[-1] == "llmjudge doctor: 1 check failed"
    assert judge_server.request_count == 0


def test_a_judge_answering_nonsense_fails_every_probe(capsys, openai_server):
    openai_server.set_responder(lambda request: "I like turtles.")
    code, lines = doctor(capsys, f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}")
    assert code == 1
    probes = [line for line in lines if line.startswith("FAIL  probe")]
    assert len(probes) == 3 and all("VerdictParseError: " in line for line in probes), probes
    assert lines[-1] == "llmjudge doctor: 3 checks failed"


SECRET = "sk-doctor-9f3c1e0b7a4d2c6e"  # a key in the environment, which the judge's reply repeats


def test_a_failed_probe_shows_the_judge_s_raw_reply_bounded_and_redacted(capsys, openai_server, monkeypatch):
    monkeypatch.setenv("DOCTOR_TEST_API_KEY", SECRET)
    rambling = "I like turtles. My key is " + SECRET + "\nThey swim.\n" + "Turtles " * 400
    openai_server.set_responder(lambda request: rambling)
    code, lines = doctor(capsys, f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}")
    assert code == 1
    replies = [line for line in lines if line.startswith("info    judge replied")]
    assert len(replies) == 3, lines  # one under each failed probe
    shown = replies[0].split("judge replied", 1)[1].strip()
    assert shown.startswith("'I like turtles. My key is ") and "\\nThey swim.\\n" in shown
    assert SECRET not in "\n".join(lines) and "sk-doctor" not in "\n".join(lines)
    # The reply is redacted as it arrives: its length is the redacted reply's, the secret's never told.
    arrived = rambling.replace(SECRET, "[redacted]")
    assert shown.endswith(f"... ({len(arrived):,} characters)") and len(shown) < 500


def test_a_probe_that_parses_but_is_wrong_shows_the_reply_it_got_wrong(capsys, openai_server):
    openai_server.set_responder(lambda request: json.dumps({"reasoning": "Looks fine to me.", "score": 0.9}))
    code, lines = doctor(capsys, f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}")
    assert code == 1
    at = lines.index(next(line for line in lines if line.startswith("FAIL  probe score")))
    assert lines[at + 1] == 'info    judge replied    \'{"reasoning": "Looks fine to me.", "score": 0.9}\''


def test_the_probe_s_timing_lines_measure_the_same_and_say_what(capsys, openai_server, monkeypatch):
    """The slowest judgment is named once, the same figure in both lines: the time its judge calls were in
    flight (re-asks included), whether the judgment passed or failed."""
    import time

    from pytest_llmjudge import doctor as doctor_module

    monkeypatch.setattr(doctor_module, "SLOW_PROBE_S", 0.5)

    def slow_and_unreadable_for_pass_fail(request: dict) -> str:
        if '"verdict": "pass" or "fail"' in request["messages"][0]["content"]:
            time.sleep(0.4)  # asked twice (a re-ask for the format): 0.8 s of a failed judgment
            return "I like turtles."
        return knowing_judge(request)

    openai_server.set_responder(slow_and_unreadable_for_pass_fail)
    code, lines = doctor(capsys, f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}")
    assert code == 1
    (cost,) = [line for line in lines if line.startswith("info  probe cost")]
    (advice,) = [line for line in lines if line.startswith("info  max tokens")]
    cost_slowest = re.search(r"the slowest judgment's (\d+\.\d\d) s", cost)
    advice_slowest = re.search(r"the slowest probe judgment's calls took (\d+\.\d\d) s", advice)
    assert cost_slowest and advice_slowest, (cost, advice)
    assert cost_slowest[1] == advice_slowest[1] and float(cost_slowest[1]) >= 0.8
    assert "4 judged, 1 failed: the judge's calls took " in cost  # a family stops at its first failure


def test_a_judge_that_gets_it_wrong_fails(capsys, openai_server):
    openai_server.set_responder(lambda request: json.dumps({"reasoning": "Fine.", "score": 0.9}))
    code, lines = doctor(capsys, f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}")
    assert code == 1
    assert (
        "FAIL  probe score        parsed, but the clear fail passed: clear pass 0.90, clear fail 0.90 (threshold 0.5)"
        in lines
    )


def test_an_api_base_without_v1_fails_at_the_first_probe(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)
    with ReasoningServer(key=CANARY_KEY) as server:
        code, lines = doctor(capsys, "--judge-model=openai/o3-mini", f"--judge-api-base={server.base_url}")
    assert code == 1
    (failed,) = [line for line in lines if line.startswith("FAIL")]
    assert failed.startswith("FAIL  probe score        BackendError: ") and "HTTP 404" in failed, failed
    assert "The api base has no /v1" in failed
    assert "skip  probe              the remaining probes: the judge did not answer (see above)" in lines


def test_a_reasoning_model_healthy_through_its_provider_server(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)
    answers = [0.95, 0.05, '"pass"', '"fail"', 5, 1]
    with ReasoningServer(key=CANARY_KEY) as server:
        for answer in answers:
            field = "verdict" if isinstance(answer, str) else "score"
            server.enqueue(Turn(text=f'{{"reasoning": "Checked.", "{field}": {answer}, "confidence": "high"}}'))
        code, lines = doctor(capsys, "--judge-model=openai/o3-mini", f"--judge-api-base={server.api_base}")
        assert len(server.received) == 6
        assert all("temperature" not in r.body for r in server.received)
    assert code == 0, lines
    assert lines[2].startswith("ok    parameters         sent ") and "temperature not sent: o3-mini" in lines[2]


def test_help_explains_the_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["doctor", "--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Check the configured judge before a suite pays" in text and "--judge-model MODEL" in text
    assert "Exit status: 0 when every check passed, 1 when one failed" in text


def test_a_bad_option_is_exit_status_2(capsys):
    assert main(["doctor", "--judge-model=x", "--judge-threshold=7"]) == 2
    assert "llmjudge doctor: error: --judge-threshold must be between 0 and 1" in capsys.readouterr().err


def test_no_model_fails(capsys):
    code, lines = doctor(capsys)
    assert code == 1 and lines[0].startswith("FAIL  model              no judge model configured: pass --judge-model")


# -- pytest --judge-doctor ------------------------------------------------------------------------------------

FAILING_TEST = "def test_never_run():\n    assert False\n"


def test_pytest_judge_doctor_runs_the_doctor_instead_of_the_tests(pytester, judge_server):
    pytester.makepyfile(test_x=FAILING_TEST)
    pytester.makeini(f"[pytest]\njudge_model = {MODEL}\n")
    result = pytester.runpytest("--judge-doctor", f"--judge-api-base={judge_server.base_url}")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "ok    model              openai/judge-test: LiteLLM provider openai, model judge-test",
            "ok    probe likert       parsed and right: *",
            "llmjudge doctor: ok",
        ]
    )
    result.stdout.no_fnmatch_line("*test_never_run*")
    assert judge_server.request_count == 6


def test_pytest_judge_doctor_exits_non_zero_on_a_failed_check(pytester, judge_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    pytester.makepyfile(test_x=FAILING_TEST)
    result = pytester.runpytest("--judge-doctor", "--judge-model=gpt-4o-mini")  # a cloud judge, with no key
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["FAIL  credentials        not set: OPENAI_API_KEY*", "llmjudge doctor: 1 check failed"]
    )


def test_pytest_judge_doctor_with_a_bad_option_is_a_usage_error(pytester):
    result = pytester.runpytest("--judge-doctor", "--judge-model=x", "--judge-samples=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--judge-samples must be a whole number >= 1*"])
