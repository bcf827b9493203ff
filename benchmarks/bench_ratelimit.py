"""Rate limits as a speed limit: 200 judgments against a judge that allows 10 requests per second.

    python benchmarks/bench_ratelimit.py [--judgments 200] [--rounds 3] [--rate 10] [--latency 0.05] [--hint ms|seconds]

The test suite's local OpenAI-compatible server (tests/helpers/openai_server.py) runs in this
process with the rate-limited responder of tests/helpers/rate_limit.py: at most `--rate` requests
in any sliding second, HTTP 429 beyond, with `Retry-After` in whole seconds (rounded up), plus
`retry-after-ms` with the exact wait (`--hint ms`, the default, as Azure OpenAI and OpenAI-compatible
gateways send it) or without it (`--hint seconds`).

The judgments go through the plugin's own pipeline, as `judge.score_many` sends them: planned, looked
up, their live calls all at once on the runtime's background loop under `--judge-concurrency` (8)
and the runtime's adaptive limiter, with the default retries (3) and timeout (120 s).  Prints, per
round and as medians: failed judgments (target 0), wall time against the ideal judgments/rate = 20 s
(target within 1.3x), requests sent per judgment (target <= 1.3), and the most requests any one
judgment needed.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_once(base_url: str, judgments: int, rate: int) -> dict[str, float]:
    from pytest_llmjudge import pipeline
    from pytest_llmjudge.runtime import JudgeRuntime
    from pytest_llmjudge.settings import resolve

    settings = resolve({"model": "openai/judge-test", "api_base": base_url, "mode": "live"}, {}, {})
    with tempfile.TemporaryDirectory() as root:
        runtime = JudgeRuntime(settings, rootdir=Path(root))
        try:
            started = time.monotonic()
            plans = [
                pipeline.plan(
                    f"Answer {i}",
                    "Is an answer",
                    pipeline.Options(),
                    runtime=runtime,
                    context=None,
                    backend=None,
                    overrides={},
                )
                for i in range(judgments)
            ]
            failures = 0
            pending = []
            for each in plans:
                _, missing = pipeline.lookup(each, runtime)
                pending.append(pipeline.call_live(each, runtime, missing))

            async def all_live() -> list[Any]:
                import asyncio

                return await asyncio.gather(*pending, return_exceptions=True)

            for outcome in runtime.loop.run(all_live()):
                failures += isinstance(outcome, BaseException)
            wall = time.monotonic() - started
            limiter = runtime.limiter("openai/judge-test", base_url)
            return {"failures": failures, "wall_s": wall, "limit": limiter.limit, "decreases": limiter.decreases}
        finally:
            runtime.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judgments", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=int, default=10, help="requests per second the judge allows")
    parser.add_argument("--latency", type=float, default=0.05, help="server latency per reply, seconds")
    parser.add_argument("--hint", choices=("ms", "seconds"), default="ms")
    args = parser.parse_args()

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-local-benchmark")
    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
    from helpers.openai_server import OpenAIServer
    from helpers.rate_limit import SlidingWindow

    runs: list[dict[str, float]] = []
    with OpenAIServer(latency_s=args.latency) as server:
        run_once(server.base_url, 8, args.rate)  # warm up: LiteLLM's import and first client are not measured
        for _ in range(args.rounds):
            server.reset()
            window = SlidingWindow(args.rate, hint=args.hint)
            per_output: collections.Counter[str] = collections.Counter()

            def responder(request: dict[str, Any], window: Any = window, counts: Any = per_output) -> Any:
                counts[request["messages"][-1]["content"]] += 1
                return window(request)

            server.set_responder(responder)
            time.sleep(1.1)  # an empty window for each run
            outcome = run_once(server.base_url, args.judgments, args.rate)
            outcome["requests_per_judgment"] = server.request_count / args.judgments
            outcome["most"] = max(per_output.values())
            runs.append(outcome)
            print(
                f"  failures {outcome['failures']:.0f}  wall {outcome['wall_s']:.1f} s  "
                f"requests/judgment {outcome['requests_per_judgment']:.2f}  most for one {outcome['most']:.0f}  "
                f"limiter: {outcome['decreases']:.0f} decreases, ends at {outcome['limit']:.1f}",
                flush=True,
            )

    ideal = args.judgments / args.rate
    print(
        f"\n{args.judgments} judgments through the pipeline, {args.rate} req/s allowed, concurrency 8, "
        f"latency {args.latency:g} s, hint {args.hint}; medians of {args.rounds}"
    )
    failures = statistics.median(r["failures"] for r in runs)
    wall = statistics.median(r["wall_s"] for r in runs)
    per = statistics.median(r["requests_per_judgment"] for r in runs)
    print(
        f"failures {failures:.0f}, wall {wall:.1f} s (x{wall / ideal:.2f} of {ideal:g} s), {per:.2f} requests/judgment"
    )
    print("targets: failures 0, wall <= 1.3x ideal, requests/judgment <= 1.3")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
