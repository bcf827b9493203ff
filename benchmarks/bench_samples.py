"""Wall time of one 5-sample judgment against a judge with 200 ms latency: sequential vs concurrent.

    python benchmarks/bench_samples.py [--repeats 5] [--latency 0.2] [--samples 5]

Starts the test suite's fake OpenAI-compatible server (tests/helpers/openai_server.py, loaded by path) in a
subprocess, judges through the real LiteLLM client in `live` mode (nothing stored, every call
sent), once with --judge-concurrency=1 and once with the default (8), and prints the medians.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_server_module():
    spec = importlib.util.spec_from_file_location("openai_server", ROOT / "tests" / "helpers" / "openai_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["openai_server"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def measure(base_url: str, concurrency: int, samples: int, repeats: int) -> list[float]:
    from pytest_llmjudge.judge import Judge
    from pytest_llmjudge.runtime import JudgeRuntime
    from pytest_llmjudge.settings import resolve

    cli = {
        "model": "openai/judge-test",
        "api_base": base_url,
        "mode": "live",
        "retries": "0",
        "concurrency": str(concurrency),
    }
    runtime = JudgeRuntime(resolve(cli, {}, {}), rootdir=ROOT)
    try:
        judge = Judge(runtime=runtime)
        judge.score("SCORE=0.8 warm-up", "warm up the client")  # LiteLLM's first call sets up its client
        times = []
        for i in range(repeats):
            start = time.perf_counter()
            verdict = judge.score(f"SCORE=0.8 run {i}", "anything", samples=samples)
            times.append(time.perf_counter() - start)
            assert len(verdict.samples) == samples
        return times
    finally:
        runtime.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # any value: the fake server ignores it
    server = load_server_module()
    proc, base_url = server.serve_in_subprocess(latency_s=args.latency)
    try:
        results = {}
        for label, concurrency in (("sequential (--judge-concurrency=1)", 1), ("concurrent (default, 8)", 8)):
            times = measure(base_url, concurrency, args.samples, args.repeats)
            results[label] = statistics.median(times)
            print(f"{label:38s} median {results[label]:.3f} s  runs: {', '.join(f'{t:.3f}' for t in times)}")
        sequential, concurrent = results.values()
        print(
            f"{args.samples} samples at {args.latency * 1000:.0f} ms latency: sequential / concurrent = {sequential / concurrent:.2f}x"
        )
    finally:
        server.stop_subprocess(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
