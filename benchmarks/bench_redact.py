"""What the one redaction costs a replay that reports every judgment: side by side with other checkouts.

    python benchmarks/bench_redact.py                          # this checkout alone
    python benchmarks/bench_redact.py --against ../main        # the same, side by side with another checkout
    python benchmarks/bench_redact.py --judgments 500 --repeats 7 --json out.json

A suite of N judged tests (a `judge_backend` of its own, no LiteLLM), each output a small dict holding
the value of a secret-named variable, is recorded once; then it is replayed with a JSON report, an HTML
report, JUnit and `-rA`, so every judgment's record is built and redacted (its criteria, reasoning and
output), and so is every line shown.  Two environments: the usual secrets (an API key of letters and
digits: one spelling each) and a password with characters writers escape (a backslash, a quote,
non-ASCII, a control character: every spelling of it looked for).  Each checkout replays the same
verdict files (keys are pinned) in turn, under the same load; reported: the median wall and CPU time
of the replay runs, and each checkout's ratio to this one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = """
import json, pytest

@pytest.fixture(scope="session")
def judge_backend():
    def judge(messages):
        return json.dumps({"reasoning": "The output answers the question and keeps the order number.", "score": 0.9})
    judge.name = "bench-judge"
    return judge
"""

TESTS = """
import os
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("i", range(int(os.environ["BENCH_JUDGMENTS"])))
def test_answer(i):
    output = {"order": i, "answer": f"Order {i} can be returned within 30 days.", "login": os.environ["DB_PASSWORD"]}
    assert_judged(output, "Says returns are accepted within 30 days", threshold=0.7)
"""

SECRETS = {
    "usual secrets": "s3cretpassw0rd-4417",
    "escaped secret": 'C:\\vault\\hunter22"\u00dcn\u00ef\x07secret',
}


def environment(src: Path, judgments: int, password: str) -> dict[str, str]:
    """A child's environment: only `src`'s package on the path, no CI or LLMJUDGE_* variable, bytecode on."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLMJUDGE_", "PYTEST_")) and k not in ("CI", "PYTHONDONTWRITEBYTECODE")
    }
    env |= {
        "PYTHONPATH": str(src),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "sk-local-benchmark-0123456789",
        "DB_PASSWORD": password,
        "BENCH_JUDGMENTS": str(judgments),
    }
    return env


def pytest_run(folder: Path, env: dict[str, str], *args: str) -> tuple[float, float, str]:
    """One pytest run: its wall time, its CPU time and its output."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"pytest {' '.join(args)} failed in {folder}:\n" + "\n".join(out.splitlines()[-10:]))
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=500, help="judged tests in the suite")
    parser.add_argument("--repeats", type=int, default=5, help="replay runs per checkout and environment")
    parser.add_argument("--against", type=Path, action="append", default=[], help="another checkout's root")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args(argv)
    checkouts = {"this checkout": ROOT / "src", **{str(p): p.resolve() / "src" for p in args.against}}
    reports = ["--judge-report=report.json", "--judge-html=report.html", "--junitxml=junit.xml", "-rA"]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, password in SECRETS.items():
            folder = Path(tmp) / what.replace(" ", "-")
            folder.mkdir()
            (folder / "conftest.py").write_text(textwrap.dedent(CONFTEST))
            (folder / "test_bench.py").write_text(textwrap.dedent(TESTS))
            mine = environment(checkouts["this checkout"], args.judgments, password)
            pytest_run(folder, mine, "--judge-mode=auto")  # recorded once: every checkout replays these files
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
            for src in checkouts.values():  # each checkout's bytecode written once, before timing
                pytest_run(folder, environment(src, args.judgments, password), "--judge-mode=replay", *reports)
            for _ in range(args.repeats):  # in turn, so drift in the machine's load hits every checkout alike
                for name, src in checkouts.items():
                    env = environment(src, args.judgments, password)
                    wall, cpu, out = pytest_run(folder, env, "--judge-mode=replay", *reports)
                    assert f"{args.judgments} replayed" in out, out[-500:]
                    times[name].append((wall, cpu))
            base = statistics.median(w for w, _ in times["this checkout"])
            for name, runs in times.items():
                wall = statistics.median(w for w, _ in runs)
                cpu = statistics.median(c for _, c in runs)
                rows.append({"secrets": what, "checkout": name, "replay_s": round(wall, 3), "cpu_s": round(cpu, 3),
                             "ratio_to_this": round(wall / base, 3)})  # fmt: skip
                print(f"{what:<15}  {name:<24}  replay {wall:6.2f} s  cpu {cpu:6.2f} s  x{wall / base:.3f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
