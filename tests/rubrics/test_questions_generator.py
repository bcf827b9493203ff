"""`llmjudge questions` and `generate_questions`: the judge model writes assessment questions from a spec,
through the real LiteLLM client to the local server; the file it writes loads into `Questions.from_file`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import CANARY_KEY, MODEL
from pytest_llmjudge import JudgeError, Questions, RubricError, generate_questions
from pytest_llmjudge.assessment.forms import check_question
from pytest_llmjudge.assessment.generator import QuestionsWarning
from pytest_llmjudge.cli import main

SPEC = """Support bot for an online shoe shop.
- Returns are accepted within 30 days of delivery, with the receipt.
- The bot never invents order numbers, prices or policies.
- It answers politely and signs as "Shoe Shop Support".
"""

GOOD = [
    "Does the reply state the 30-day return window? (Pass = it says 30 days from delivery, Fail = another or no window)",
    "Does the reply avoid inventing order numbers? (Pass = every order number appears in the input, "
    "Fail = it gives any other order number)",
    "Is the reply signed as Shoe Shop Support? (Pass = it ends with that signature, Fail = no or another signature)",
]
BAD = [
    "Is it polite?",  # no criterion
    "Is it polite? Is it short? (Pass = both, Fail = either is not)",  # two questions
    "does the reply state the 30-day return WINDOW? (Pass = yes, Fail = no)",  # a duplicate of GOOD[0]
    {"id": 4},  # not a question
]


def questions_reply(items: list) -> str:
    return json.dumps({"questions": items})


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A spec file in an empty folder, the current directory (no ini file of this repository is found)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "support_spec.md"
    path.write_text(SPEC, encoding="utf-8")
    return path


def run_cli(*args: str) -> int:
    return main(["questions", *args])


# -- the check each question passes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "question"),
    [
        ("binary", GOOD[0]),
        ("binary", "Does it cite (only) the spec? (fail: it cites anything else; pass: it cites only the spec)"),
        ("scaled", "How complete is the summary? (1 = misses every action item, 5 = has all of them)"),
        ("scaled", "How polite is it? (1 = rude, 3 = neutral, 5 = warm and courteous)"),
        ("multiple-choice", "Which tone does the reply take? (A = formal, B = friendly, C = dismissive; Pass = A, B)"),
    ],
)
def test_well_formed_questions_pass_the_check(kind, question):
    assert check_question(question, kind) is None


@pytest.mark.parametrize(
    ("kind", "question", "why"),
    [
        ("binary", "Is it polite?", "form"),
        ("binary", "Is it polite? Is it short? (Pass = both, Fail = either is not)", "more than one question"),
        ("binary", "Is it polite? (Pass = yes)", "Pass = ... and Fail"),
        ("binary", "Is it polite? (Pass = , Fail = no)", "criterion"),
        ("binary", "Polite? (Pass = yes, Fail = no)", "too short"),
        ("binary", "Is it polite? (1 = rude, 5 = polite)", "criterion"),
        ("scaled", "How polite is it? (Pass = polite, Fail = rude)", "criterion"),
        ("scaled", "How polite is it? (1 = rude, 10 = polite)", "from 1"),
        ("scaled", "How polite is it? (5 = polite, 1 = rude)", "from 1"),
        ("multiple-choice", "Which tone does it take? (A = formal, B = friendly; Pass = A, B)", "cannot fail"),
        ("multiple-choice", "Which tone does it take? (A = formal, B = friendly; Pass = D)", "among A, B"),
        ("multiple-choice", "Which tone does it take? (A = formal, C = friendly; Pass = A)", "lettered"),
        ("multiple-choice", "Which tone does it take? (A = formal; Pass = A)", "at least two"),
        ("binary", "Does it " + "really " * 100 + "help? (Pass = yes, Fail = no)", "longer than"),
    ],
)
def test_malformed_questions_fail_the_check_with_a_reason(kind, question, why):
    reason = check_question(question, kind)
    assert reason is not None and why in reason


@pytest.mark.parametrize(
    "reply",
    [
        questions_reply(GOOD),
        "```json\n" + json.dumps(GOOD) + "\n```",
        "Here are the questions:\n" + json.dumps(GOOD) + "\nHope they help.",
        '{"questions": [' + ", ".join(json.dumps(q) for q in GOOD) + ",]}",  # a trailing comma: repaired
        "<think>a list?</think>" + questions_reply(GOOD),
    ],
)
def test_replies_are_read_tolerantly(reply, spec, openai_server):
    openai_server.enqueue(reply)
    assert generate_questions(SPEC, n=3, model=MODEL, api_base=openai_server.base_url, mode="live") == GOOD


def test_a_reply_without_a_list_is_an_error_and_writes_nothing(spec, openai_server):
    openai_server.enqueue("I cannot write questions about that.")
    with pytest.raises(JudgeError, match="the model's reply holds no JSON list of questions"):
        generate_questions(SPEC, n=3, out="q.json", model=MODEL, api_base=openai_server.base_url, mode="live")
    assert not (spec.parent / "q.json").exists()


# -- the command against the local server ---------------------------------------------------------------


def test_questions_writes_a_file_that_questions_from_file_loads(spec, openai_server, capsys):
    openai_server.enqueue(questions_reply(GOOD))
    code = run_cli(
        "--spec",
        str(spec),
        "-n",
        "3",
        "--focus",
        "policies",
        f"--judge-model={MODEL}",
        f"--judge-api-base={openai_server.base_url}",
        "--judge-mode=auto",
    )
    assert code == 0
    assert openai_server.request_count == 1
    asked = openai_server.requests[0]["messages"][-1]["content"]
    assert "Write 3 distinct" in asked and "policies" in asked and "Returns are accepted within 30 days" in asked
    assert "(Pass = " in asked
    path = spec.with_name("support_spec.questions.json")
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["questions"] == GOOD and stored["kind"] == "binary"
    generation = stored["generation"]
    assert generation["model"] == MODEL and generation["reply"] == questions_reply(GOOD)
    assert len(generation["key"]) == 64 and generation["dropped"] == []
    assert CANARY_KEY not in path.read_text(encoding="utf-8")
    assert Questions.from_file(path).questions == tuple(GOOD)
    out = capsys.readouterr().out
    assert f"wrote 3 questions to {path}" in out and GOOD[2] in out


def test_malformed_questions_are_dropped_and_counted(spec, openai_server, capsys):
    openai_server.enqueue(questions_reply([GOOD[0], *BAD, GOOD[1]]))
    out_file = spec.parent / "qs.json"
    assert (
        run_cli(
            "--spec",
            str(spec),
            "-n",
            "5",
            "--out",
            str(out_file),
            f"--judge-model={MODEL}",
            f"--judge-api-base={openai_server.base_url}",
            "--judge-mode=auto",
        )
        == 0
    )
    stored = json.loads(out_file.read_text(encoding="utf-8"))
    assert stored["questions"] == [GOOD[0], GOOD[1]]
    reasons = [d["reason"] for d in stored["generation"]["dropped"]]
    assert len(reasons) == 4
    assert "a duplicate of question 1" in reasons and "more than one question" in reasons
    out = capsys.readouterr().out
    assert "dropped 4 malformed or repeated questions" in out
    assert "the model wrote 2 usable questions of the 5 asked for" in out


def test_rerunning_makes_no_call_and_refresh_calls_again(spec, openai_server, capsys):
    options = ["--spec", str(spec), "-n", "3", f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}"]
    openai_server.enqueue(questions_reply(GOOD))
    assert run_cli(*options, "--judge-mode=auto") == 0
    path = spec.with_name("support_spec.questions.json")
    reviewed = json.loads(path.read_text(encoding="utf-8"))
    reviewed["questions"] = GOOD[:2]  # a reviewer removed a question: the record still matches
    path.write_text(json.dumps(reviewed, indent=2), encoding="utf-8")
    capsys.readouterr()

    assert run_cli(*options, "--judge-mode=auto") == 0
    assert openai_server.request_count == 1, "the same spec and options are answered from the file"
    assert "no call made" in capsys.readouterr().out
    assert json.loads(path.read_text(encoding="utf-8"))["questions"] == GOOD[:2], "the reviewed file stands"

    openai_server.enqueue(questions_reply(list(reversed(GOOD))))
    assert run_cli(*options, "--judge-mode=refresh") == 0
    assert openai_server.request_count == 2
    assert json.loads(path.read_text(encoding="utf-8"))["questions"] == list(reversed(GOOD))

    spec.write_text(SPEC + "- It never promises delivery dates.\n", encoding="utf-8")
    openai_server.enqueue(questions_reply(GOOD))
    assert run_cli(*options, "--judge-mode=auto") == 0
    assert openai_server.request_count == 3, "a changed spec is a new generation"
    assert "the spec or options changed" in capsys.readouterr().out


def test_on_ci_replay_fails_clearly_without_a_record_and_replays_with_one(spec, openai_server, capsys, monkeypatch):
    options = ["--spec", str(spec), "-n", "3", f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}"]
    monkeypatch.setenv("CI", "true")
    assert run_cli(*options) == 2
    err = capsys.readouterr().err
    assert "replay mode (CI detected: CI is set)" in err and "does not exist" in err and "--judge-mode=auto" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert openai_server.request_count == 0

    openai_server.enqueue(questions_reply(GOOD))
    assert run_cli(*options, "--judge-mode=auto") == 0
    assert run_cli(*options) == 0
    assert openai_server.request_count == 1, "replay on CI reads the record"

    assert run_cli(*options, "--focus", "tone") == 2
    assert "differs in: focus" in capsys.readouterr().err
    assert openai_server.request_count == 1


def test_scaled_and_multiple_choice_questions_are_asked_for_in_their_form(spec, openai_server):
    scaled = ["How clearly does it explain returns? (1 = not at all, 5 = step by step)", GOOD[0]]
    openai_server.enqueue(questions_reply(scaled))
    assert (
        run_cli(
            "--spec",
            str(spec),
            "-n",
            "2",
            "--kind",
            "scaled",
            "--out",
            "s.json",
            f"--judge-model={MODEL}",
            f"--judge-api-base={openai_server.base_url}",
            "--judge-mode=auto",
        )
        == 0
    )
    assert "(1 = " in openai_server.requests[-1]["messages"][-1]["content"]
    stored = json.loads(Path("s.json").read_text(encoding="utf-8"))
    assert stored["questions"] == scaled[:1] and stored["kind"] == "scaled"

    choice = "Which tone does the reply take? (A = formal, B = friendly, C = curt; Pass = A, B)"
    openai_server.enqueue(questions_reply([choice]))
    assert (
        run_cli(
            "--spec",
            str(spec),
            "-n",
            "1",
            "--kind",
            "multiple-choice",
            "--out",
            "m.yaml",
            f"--judge-model={MODEL}",
            f"--judge-api-base={openai_server.base_url}",
            "--judge-mode=auto",
        )
        == 0
    )
    assert "Pass = A" in openai_server.requests[-1]["messages"][-1]["content"]
    assert "kind: multiple-choice" in Path("m.yaml").read_text(encoding="utf-8")
    assert Questions.from_file("m.yaml").questions == (choice,)


def test_no_key_reaches_the_file_even_when_the_model_echoes_it(spec, openai_server):
    openai_server.enqueue(questions_reply([GOOD[0], f"Does it leak {CANARY_KEY}? (Pass = no, Fail = yes)"]))
    assert (
        run_cli(
            "--spec",
            str(spec),
            "-n",
            "2",
            f"--judge-model={MODEL}",
            f"--judge-api-base={openai_server.base_url}",
            "--judge-mode=auto",
        )
        == 0
    )
    assert CANARY_KEY not in spec.with_name("support_spec.questions.json").read_text(encoding="utf-8")


def test_help_explains_the_command():
    result = subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge", "questions", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for words in (
        "--spec FILE",
        "--focus",
        "-n N",
        "--kind {binary,scaled,multiple-choice}",
        "--out FILE",
        "(Pass = ..., Fail = ...)",
        "Questions.from_file",
        "--judge-model",
        "no call",
    ):
        assert words in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--spec", "missing.md"], "missing.md: no such specification file"),
        (["-n", "0"], "n must be a whole number from 1 to 100"),
        (["--judge-temperature", "hot"], "--judge-temperature must be a number"),
        ([], "no judge model configured"),
    ],
)
def test_bad_arguments_are_one_line_errors_with_status_2(spec, capsys, args, message):
    if "--spec" not in args:
        args = ["--spec", str(spec), *args]
    assert run_cli(*args, "--judge-mode=auto") == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_bad_kind_is_a_usage_error(spec, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("--spec", str(spec), "--kind", "essay")
    assert exit_info.value.code == 2
    assert "invalid choice: 'essay'" in capsys.readouterr().err


def test_a_reply_with_no_usable_question_writes_nothing(spec, openai_server, capsys):
    openai_server.enqueue(questions_reply(BAD[:2]))
    assert (
        run_cli(
            "--spec",
            str(spec),
            f"--judge-model={MODEL}",
            f"--judge-api-base={openai_server.base_url}",
            "--judge-mode=auto",
        )
        == 2
    )
    assert "none of the 2 questions the model wrote passed the check" in capsys.readouterr().err
    assert not spec.with_name("support_spec.questions.json").exists()


# -- the Python function ------------------------------------------------------------------------------------


def test_generate_questions_records_to_out_and_warns_about_dropped_ones(spec, openai_server):
    openai_server.enqueue(questions_reply([*GOOD, BAD[0]]))
    options = {"model": MODEL, "api_base": openai_server.base_url, "mode": "auto"}
    with pytest.warns(QuestionsWarning, match="1 of the questions the model wrote were dropped"):
        questions = generate_questions(SPEC, n=3, out="q.json", **options)
    assert questions == GOOD
    assert generate_questions(SPEC, n=3, out="q.json", **options) == GOOD
    assert openai_server.request_count == 1
    with pytest.raises(JudgeError, match="unknown judge option"):
        generate_questions(SPEC, n=3, out="q.json", modle=MODEL)


# -- Questions.from_file ---------------------------------------------------------------------------------


def test_from_file_takes_a_plain_list_and_yaml(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps(GOOD), encoding="utf-8")
    assert Questions.from_file(tmp_path / "q.json", aggregate="min").aggregate == "min"
    (tmp_path / "q.yml").write_text("- " + "\n- ".join(json.dumps(q) for q in GOOD) + "\n", encoding="utf-8")
    assert Questions.from_file(tmp_path / "q.yml").questions == tuple(GOOD)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("q.json", "{not json", "not valid JSON (line 1"),
        ("q.json", '{"questions": "Is it polite?"}', "expected a list of questions"),
        ("q.json", '{"kind": "binary"}', 'no "questions" list'),
        ("q.json", '["Is it polite?", 3]', "question 2 is not a non-empty string"),
        ("q.json", '["Is it polite?", "Is it polite?"]', "items must be distinct"),
        ("q.json", "[]", "the questions list is empty"),
        ("q.json", '{"format": 7, "questions": ["Is it polite?"]}', "format 7 is not known"),
        ("q.yaml", "!!python/object/apply:os.system ['touch PWNED']", "not valid YAML"),
        ("q.yaml", "questions: [unclosed", "not valid YAML"),
    ],
)
def test_a_malformed_file_is_a_rubric_error_naming_it(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RubricError) as error:
        Questions.from_file(path)
    assert str(path) in str(error.value) and message in str(error.value)
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()


def test_from_file_names_a_missing_file_and_yaml_without_pyyaml(tmp_path, monkeypatch):
    with pytest.raises(RubricError, match="no such questions file"):
        Questions.from_file(tmp_path / "absent.json")
    (tmp_path / "q.yaml").write_text("- Is it polite?\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(RubricError, match="needs PyYAML"):
        Questions.from_file(tmp_path / "q.yaml")


# -- in a test run: the generated file judges --------------------------------------------------------------

JUDGED_TEST = """
from pathlib import Path
from pytest_llmjudge import Questions, assert_judged

def test_reply_meets_the_spec():
    rubric = Questions.from_file(Path(__file__).parent / "support_spec.questions.json", aggregate="min")
    assert_judged("Returns within 30 days of delivery. Shoe Shop Support. SCORE=0.9", "A support reply", rubric=rubric)
"""


def test_a_test_judges_with_the_generated_questions_then_replays_on_ci(pytester, openai_server, live_args, monkeypatch):
    spec = pytester.path / "support_spec.md"
    spec.write_text(SPEC, encoding="utf-8")
    openai_server.enqueue(questions_reply(GOOD))
    assert run_cli("--spec", str(spec), "-n", "3", *live_args, "--judge-mode=auto") == 0
    pytester.makepyfile(test_support=JUDGED_TEST)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    asked = [r["messages"][-1]["content"] for r in openai_server.requests[1:]]
    assert len(asked) == 3 and all(any(q in text for text in asked) for q in GOOD), "one call per question"

    monkeypatch.setenv("CI", "true")
    assert run_cli("--spec", str(spec), "-n", "3", *live_args) == 0
    result = pytester.runpytest(*live_args)
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 4, "the questions and the verdicts replayed on CI with no call"


def test_an_out_file_that_is_not_a_questions_file_is_never_overwritten(spec, openai_server, capsys):
    notes = spec.parent / "notes.json"
    notes.write_text('{"todo": "keep me"', encoding="utf-8")
    assert (
        run_cli(
            "--spec",
            str(spec),
            "--out",
            str(notes),
            f"--judge-model={MODEL}",
            f"--judge-api-base={openai_server.base_url}",
            "--judge-mode=refresh",
        )
        == 2
    )
    assert f"{notes}: not valid JSON" in capsys.readouterr().err
    assert notes.read_text(encoding="utf-8") == '{"todo": "keep me"' and openai_server.request_count == 0
