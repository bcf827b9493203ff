"""`llmjudge doctor` against the real model, with a cap on the judge's reply.

Without a cap, one doctor probe of SmolLM2 in JSON mode generated 3,252 tokens and ran into the
120 s timeout (2 min 13 s in all).  With `--judge-max-tokens` given on the command line the doctor
must finish well inside its deadline and report: one line per probe family, the probe's cost line,
a closing verdict line, and an exit status of 0 or 1 (never a crash, never 2).  The cap is passed
explicitly, so the test holds whatever the default cap is.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from realmodel.judging import MODEL

pytestmark = pytest.mark.slow

CAP = 96  # tokens: room for a short JSON verdict, not for a runaway
PARSE_RETRIES = 1
PROBES = 6  # a clear pass and a clear fail for each of three rubric families
DEADLINE_S = 600  # the whole doctor run; uncapped it took 133 s on an idle machine


def test_doctor_with_a_token_cap_finishes_and_reports(llama_server, openai_key, observe, tmp_path):
    command = [
        sys.executable, "-m", "pytest_llmjudge", "doctor",
        f"--judge-model={MODEL}", f"--judge-api-base={llama_server.api_base}",
        f"--judge-max-tokens={CAP}", f"--judge-parse-retries={PARSE_RETRIES}",
        "--judge-retries=0", "--judge-timeout=120",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMJUDGE_")}
    started = time.monotonic()
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=DEADLINE_S)
    elapsed = time.monotonic() - started
    report = done.stdout.splitlines()
    observe(f"doctor with --judge-max-tokens={CAP}: exit {done.returncode} in {elapsed:.0f} s")
    for line in report:
        observe(f"    {line}")

    assert done.returncode in (0, 1), f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert report and re.fullmatch(r"llmjudge doctor: (ok|\d+ checks? failed)", report[-1]), done.stdout
    for family in ("score", "pass/fail", "likert"):
        assert any(re.match(rf"(ok|FAIL)\s+probe {re.escape(family)}\b", line) for line in report), (
            f"no line for the {family} probe:\n{done.stdout}"
        )
    (cost,) = [line for line in report if re.match(r"info\s+probe cost", line)]
    judged = int(re.search(r"(\d+) judged\b", cost).group(1))
    tokens = re.search(r"\(([\d,]+) prompt \+ ([\d,]+) completion\)", cost)
    if judged:
        assert tokens, cost
        completion = int(tokens.group(2).replace(",", ""))
        assert completion <= judged * (1 + PARSE_RETRIES) * CAP, f"the cap of {CAP} tokens was not kept: {cost}"
    assert judged <= PROBES
