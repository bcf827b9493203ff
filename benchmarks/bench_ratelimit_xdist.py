"""Rate limits across xdist workers: `pytest -n 4` records 200 judgments against a judge that allows 10 requests/s.

    python benchmarks/bench_ratelimit_xdist.py [--judgments 200] [--workers 4] [--rate 10] [--latency 0.05] [--rounds 1]

The single-process benchmark (bench_ratelimit.py) sends every judgment from one runtime, whose one
limiter learns the judge's limit.  Here each judgment is its own test, recorded by `pytest -n 4` in a
fresh subprocess on a generated suite (`--judge-mode=auto`, default retries and timeout), so four
workers share the limit, each with its own runtime.  The judge is the test suite's local
OpenAI-compatible server (tests/helpers/openai_server.py) in this process, with the rate-limited
responder of tests/helpers/rate_limit.py: at most `--rate` requests in any sliding second, HTTP 429
beyond with `Retry-After` and `retry-after-ms`.

Prints, per round and as medians: failed tests (target 0), requests sent per judgment (target
<= 1.2), and the time from the first request to the last against the ideal judgments/rate = 20 s
(target within 1.2x).  The workers' start-up (LiteLLM's import) comes before the first request and
is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

SUITE = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("i", range({judgments}))
def test_answer(i):
    assert_judged(f"Answer {{i}}", "Is an answer", threshold=0.5)
"""


def run_once(base_url: str, judgments: int, workers: int) -> dict[str, Any]:
    """One recording run of the generated suite under xdist; its failures and exit status."""
    with tempfile.TemporaryDirectory() as root:
        Path(root, "test_answers.py").write_text(SUITE.format(judgments=judgments))
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("LLMJUDGE_", "PYTEST_"))}
        environ.pop("CI", None)
        environ.update(LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_API_KEY="sk-local-benchmark")
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            str(workers),
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--judge-mode=auto",
            "--judge-model=openai/judge-test",
            f"--judge-api-base={base_url}",
            f"--judge-cache-dir={Path(root) / 'cache'}",
            root,
        ]
        done = subprocess.run(command, cwd=root, env=environ, capture_output=True, text=True, check=False)
        stored = sum(1 for _ in Path(root).glob("judge_verdicts/*/*.json"))
    tail = done.stdout.strip().splitlines()[-1:] or [done.stderr[-300:]]
    return {"exit": done.returncode, "failures": judgments - stored, "last_line": tail[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judgments", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rate", type=int, default=10, help="requests per second the judge allows")
    parser.add_argument("--latency", type=float, default=0.05, help="server latency per reply, seconds")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()

    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
    from helpers.openai_server import OpenAIServer
    from helpers.rate_limit import SlidingWindow

    runs: list[dict[str, Any]] = []
    with OpenAIServer(latency_s=args.latency) as server:
        for _ in range(args.rounds):
            server.reset()
            window = SlidingWindow(args.rate)
            times: list[float] = []  # list.append is atomic: the server's threads need no lock

            def responder(request: dict[str, Any], window: Any = window, times: list[float] = times) -> Any:
                times.append(time.monotonic())
                return window(request)

            server.set_responder(responder)
            time.sleep(1.1)  # an empty window for each run
            outcome = run_once(server.base_url, args.judgments, args.workers)
            outcome["requests_per_judgment"] = len(times) / args.judgments
            outcome["span_s"] = (times[-1] - times[0]) if len(times) > 1 else 0.0
            outcome["limited"] = window.limited
            runs.append(outcome)
            print(
                f"  failures {outcome['failures']:.0f} (exit {outcome['exit']:.0f}: {outcome['last_line']})  "
                f"requests/judgment {outcome['requests_per_judgment']:.2f} ({window.limited} refused)  "
                f"requests over {outcome['span_s']:.1f} s",
                flush=True,
            )

    ideal = args.judgments / args.rate
    failures = statistics.median(r["failures"] for r in runs)
    per = statistics.median(r["requests_per_judgment"] for r in runs)
    span = statistics.median(r["span_s"] for r in runs)
    print(
        f"\n{args.judgments} judgments recorded by pytest -n {args.workers}, {args.rate} req/s allowed, "
        f"latency {args.latency:g} s; medians of {args.rounds}"
    )
    print(
        f"failures {failures:.0f}, {per:.2f} requests/judgment, requests over {span:.1f} s "
        f"(x{span / ideal:.2f} of the ideal {ideal:g} s)"
    )
    print("targets: failures 0, requests/judgment <= 1.2, within 1.2x of the ideal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
