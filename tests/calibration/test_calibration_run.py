"""Calibration end to end: `assert_judge_agrees` in a pytest run and `llmjudge calibrate`, judged live
through the real LiteLLM client against the local server, then replayed offline with identical figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import CANARY_KEY, MODEL
from helpers.openai_server import serve_in_subprocess, stop_subprocess
from helpers.runtime import own_judges
from pytest_llmjudge.calibration.assertion import assert_judge_agrees
from pytest_llmjudge.calibration.examples import CalibrationError, LabelledExample
from pytest_llmjudge.calibration.runner import run_calibration

SRC = Path(__file__).resolve().parents[2] / "src"

# The local server's judge obeys SCORE=x: two rows disagree with their human label ("rude" and "late").
LABELS = [
    {
        "id": "refund",
        "output": "Refunds within 30 days. SCORE=0.9",
        "criteria": "States the refund window",
        "label": "pass",
    },
    {"id": "vague", "output": "Contact us. SCORE=0.2", "criteria": "States the refund window", "label": "fail"},
    {
        "id": "late",
        "output": "Refunds within 90 days. SCORE=0.8",
        "criteria": "States the refund window",
        "label": "fail",
    },
    {"id": "polite", "output": "Thank you for asking! SCORE=0.95", "criteria": "Is polite", "label": "pass"},
    {"id": "rude", "output": "Read the manual. SCORE=0.3", "criteria": "Is polite", "label": "pass"},
    {"output": "Go away. SCORE=0.1", "criteria": "Is polite", "label": "fail"},
]


def write_labels(path: Path, rows: list[dict] = LABELS) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# -- in pytest: assert_judge_agrees ----------------------------------------------------------------

CALIBRATION_TEST = """
import json
from pathlib import Path
from pytest_llmjudge import assert_judge_agrees

def test_calibration():
    result = assert_judge_agrees(Path(__file__).parent / "labels.jsonl", min_kappa={min_kappa}, min_accuracy=0.5)
    (Path(__file__).parent / "figures-{{}}.json".format(result.n)).write_text(json.dumps(result.to_json()))
"""


def test_assert_judge_agrees_live_then_replayed_offline(pytester, openai_server, live_args):
    write_labels(pytester.path / "labels.jsonl")
    pytester.makepyfile(test_calibration=CALIBRATION_TEST.format(min_kappa=0.2))
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == len(LABELS)
    live = json.loads((pytester.path / "figures-6.json").read_text())
    assert live["n"] == 6 and live["confusion"] == {"tp": 2, "fp": 1, "tn": 2, "fn": 1}
    assert live["accuracy"] == pytest.approx(4 / 6) and live["kappa"] == pytest.approx(1 / 3)
    assert [d["id"] for d in live["disagreements"]] == ["late", "rude"]
    verdicts = json.loads((pytester.path / "judge_verdicts/test_calibration/test_calibration.json").read_text())
    assert len(verdicts["verdicts"]) == len(LABELS), "every example is recorded in the test's verdict file"

    (pytester.path / "figures-6.json").unlink()
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == len(LABELS), "replay must not call the judge"
    result.stdout.fnmatch_lines(["llmjudge: 6 judged, 6 replayed, 0 live*"])
    assert json.loads((pytester.path / "figures-6.json").read_text()) == live


def test_assert_judge_agrees_fails_under_the_bar_with_figures_and_reasoning(pytester, openai_server, live_args):
    write_labels(pytester.path / "labels.jsonl")
    pytester.makepyfile(test_calibration=CALIBRATION_TEST.format(min_kappa=0.8))
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*CalibrationFailed: the judge agrees too little with the human labels: kappa 0.33 < min_kappa 0.80",
            "*6 examples (pass/fail labels), threshold 0.50",
            "*Cohen's kappa   0.33  95% CI*",
            "*disagreements (all):",
            "*late: human fail, judge 0.80",
            "*reasoning: fake judge: found SCORE=0.8 in the output",
            "*rude: human pass, judge 0.30",
        ]
    )
    assert "site-packages" not in result.stdout.str() and "calibration/runner.py" not in result.stdout.str()


def test_assert_judge_agrees_replay_miss_names_the_example_and_line(pytester, openai_server, live_args):
    write_labels(pytester.path / "labels.jsonl")
    pytester.makepyfile(test_calibration=CALIBRATION_TEST.format(min_kappa=0.2))
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ExampleError: *labels.jsonl:1: example 'refund': no stored verdict*"])
    assert openai_server.request_count == 0


def test_assert_judge_agrees_needs_a_bar():
    with pytest.raises(CalibrationError, match="needs a bar: pass min_kappa"):
        assert_judge_agrees(LABELS)
    with pytest.raises(CalibrationError, match=r"min_accuracy must be a number in \[0, 1\]"):
        assert_judge_agrees(LABELS, min_accuracy=1.5)


def test_run_calibration_with_a_custom_judge_and_score_labels(tmp_path):
    def backend(messages):
        text = messages[-1]["content"]
        score = float(text.split("SCORE=")[1].split()[0].rstrip("."))
        return json.dumps({"reasoning": "ok", "score": score})

    rows = [
        {"output": f"x SCORE={s}", "criteria": "c", "label": label} for s, label in ((0.2, 0.1), (0.6, 0.7), (0.9, 0.8))
    ]
    # Judges of the test's own, not bound to this test's verdict file: nothing is stored.
    with own_judges(rootdir=tmp_path, mode="live") as judge:
        result = run_calibration(rows, judge=judge(backend, model="m"), threshold=0.5)
        assert result.kind == "score" and result.spearman == pytest.approx(1.0) and result.accuracy == 1.0
        examples = [LabelledExample(output="SCORE=0.9", criteria="c", label=False, kind="pass/fail", line=3)]
        with pytest.raises(CalibrationError, match="<rows>:3: unknown rubric 'nope'"):
            run_calibration([LabelledExample(**{**examples[0].__dict__, "rubric": "nope"})], judge=judge(backend))


# -- the command: llmjudge calibrate -----------------------------------------------------------------


def calibrate(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LLMJUDGE_")}
    environ.update(OPENAI_API_KEY=CANARY_KEY, LITELLM_LOCAL_MODEL_COST_MAP="True", **env)
    environ["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [environ.get("PYTHONPATH")])])
    command = [sys.executable, "-m", "pytest_llmjudge", "calibrate", *args]
    return subprocess.run(command, cwd=cwd, env=environ, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_calibrate_command_live_then_replayed_on_ci_with_the_server_stopped(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\njudge_retries = 0\n")
    write_labels(tmp_path / "labels.jsonl")
    proc, base_url = serve_in_subprocess()
    options = ["labels.jsonl", f"--judge-model={MODEL}", f"--judge-api-base={base_url}", "--json"]
    try:
        live = calibrate(tmp_path, *options)
    finally:
        stop_subprocess(proc)
    assert live.returncode == 0, live.stderr
    assert live.stderr == ""
    figures = json.loads(live.stdout)
    assert figures["n"] == 6 and figures["confusion"] == {"tp": 2, "fp": 1, "tn": 2, "fn": 1}
    assert figures["kappa"] == pytest.approx(1 / 3) and figures["best_threshold"] is not None
    assert (tmp_path / "judge_verdicts" / "calibration" / "labels.json").is_file()

    replayed = calibrate(tmp_path, *options, CI="true")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == figures

    text = calibrate(tmp_path, *options[:-1], "--threshold=0.85", CI="true")
    assert text.returncode == 0, text.stderr
    assert "threshold       0.85: accuracy 0.83" in text.stdout, text.stdout
    assert "disagreements: 1\n\n  rude: human pass, judge 0.30\n" in text.stdout  # at 0.85, "late" agrees
    assert "    reasoning: fake judge: found SCORE=0.3 in the output" in text.stdout
    assert "per criteria:" in text.stdout and "Is polite" in text.stdout

    # A changed row has no stored verdict: one line, naming the file, line and example; exit 2.
    rows = [dict(row) for row in LABELS]
    rows[3]["output"] = "Thanks! SCORE=0.95"
    write_labels(tmp_path / "labels.jsonl", rows)
    missing = calibrate(tmp_path, *options, CI="true")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1, missing.stderr
    assert missing.stderr.startswith("llmjudge calibrate: error: labels.jsonl:4: example 'polite': no stored verdict")
    assert "--judge-mode=auto" in missing.stderr


def test_calibrate_command_bad_row_is_one_line_with_exit_2(tmp_path):
    rows = [dict(row) for row in LABELS]
    rows[2]["label"] = "maybe"
    write_labels(tmp_path / "labels.jsonl", rows)
    result = calibrate(tmp_path, "labels.jsonl", f"--judge-model={MODEL}", "--judge-api-base=http://127.0.0.1:9/v1")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("llmjudge calibrate: error: labels.jsonl:3: unknown label 'maybe'")
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "judge_verdicts").exists()


def test_calibrate_command_bad_option_is_one_line_with_exit_2(tmp_path):
    write_labels(tmp_path / "labels.jsonl")
    result = calibrate(tmp_path, "labels.jsonl", "--threshold=2")
    assert result.returncode == 2
    assert result.stderr.strip() == "llmjudge calibrate: error: --threshold must be between 0 and 1, got '2'"


def test_reports_show_a_calibration_run_with_its_figures_and_disagreements(pytester):
    """Given a test that calibrates the judge against labels, the JSON and HTML reports of the run
    carry the figures, the confusion matrix and each disagreement."""
    from helpers import FAKE_CONFTEST

    pytester.makeconftest(FAKE_CONFTEST)
    rows = [
        {"id": "good", "output": "Within 30 days. SCORE=0.9", "criteria": "Says 30 days", "label": "pass"},
        {"id": "bad", "output": "Never. SCORE=0.1", "criteria": "Says 30 days", "label": "fail"},
        {"id": "missed", "output": "A month. SCORE=0.2", "criteria": "Says 30 days", "label": "pass"},
    ]
    (pytester.path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pytester.makepyfile(
        """
        from pytest_llmjudge import assert_judge_agrees

        def test_calibration():
            assert_judge_agrees("labels.jsonl", min_accuracy=0.5, threshold=0.5)
        """
    )
    result = pytester.runpytest("--judge-mode=auto", "--judge-report=report.json", "--judge-html=report.html")
    result.assert_outcomes(passed=1)
    (run,) = json.loads((pytester.path / "report.json").read_text())["calibrations"]
    assert run["source"] == "labels.jsonl" and run["passed"] is True and run["n"] == 3
    assert run["confusion"] == {"tp": 1, "fp": 0, "tn": 1, "fn": 1}
    assert [d["id"] for d in run["disagreements"]] == ["missed"]
    html = (pytester.path / "report.html").read_text()
    assert "Calibration: labels.jsonl (cleared its bar)" in html and ">missed<" in html
