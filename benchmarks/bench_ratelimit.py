"""Rate limits as a speed limit: 200 judgments against a server that allows 10 requests per second.

    python benchmarks/bench_ratelimit.py [--judgments 200] [--rounds 3] [--latency 0.05] [--hint ms|seconds]

The test suite's fake OpenAI-compatible server (tests/helpers/openai_server.py, loaded by path) runs in
this process with a responder that admits at most 10 requests in any sliding second and answers the
rest with HTTP 429 and how long until the window has room: `Retry-After` in whole seconds (rounded
up), plus `retry-after-ms` with the exact wait (`--hint ms`, the default, as Azure OpenAI and
OpenAI-compatible gateways send it) or without it (`--hint seconds`).

Each judgment is one `call_with_retries` through the real LiteLLM client, 8 at a time (the
plugin's default concurrency), with retries enough never to give up (20) and a 120 s deadline.
Two ways, alternating, `--rounds` times: with the adaptive limiter (AIMD concurrency, Retry-After
pauses every caller) and without it (each call honours its own Retry-After, as before).  Prints,
per way, the medians of: failures (target 0), wall time against the ideal 200/10 = 20 s (target
within 1.3x) and requests sent per judgment (target <= 1.3).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import math
import os
import statistics
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RATE = 10  # requests per second the server admits
CONCURRENCY = 8


def load_server_module() -> Any:
    spec = importlib.util.spec_from_file_location("openai_server", ROOT / "tests" / "helpers" / "openai_server.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["openai_server"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


class SlidingWindow:
    """Admits at most `rate` requests in any 1 s window; says how long until the next one would be."""

    def __init__(self, rate: int, hint: str) -> None:
        self.rate = rate
        self.hint = hint
        self.admitted: deque[float] = deque()
        self.lock = threading.Lock()

    def __call__(self, server_module: Any, request: dict) -> Any:
        now = time.monotonic()
        with self.lock:
            while self.admitted and self.admitted[0] <= now - 1.0:
                self.admitted.popleft()
            if len(self.admitted) < self.rate:
                self.admitted.append(now)
                return server_module.reply_json(0.9)
            wait = self.admitted[0] + 1.0 - now
        headers = {"Retry-After": str(max(1, math.ceil(wait)))}
        if self.hint == "ms":
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
        return server_module.Reply(
            status=429, headers=headers, error_message="Rate limit reached: 10 requests per second"
        )


async def run_once(base_url: str, judgments: int, limited: bool) -> dict[str, float]:
    from pytest_llmjudge.backends import AdaptiveLimiter, CallRequest, LiteLLMBackend, call_with_retries
    from pytest_llmjudge.errors import BackendError

    backend = LiteLLMBackend()
    limiter = AdaptiveLimiter(CONCURRENCY) if limited else None
    gate = asyncio.Semaphore(CONCURRENCY)  # the plugin's --judge-concurrency
    failures = 0

    async def judge(i: int) -> None:
        nonlocal failures
        request = CallRequest(
            model="openai/judge-test", messages=[{"role": "user", "content": f"Output {i}"}], api_base=base_url
        )
        async with gate:
            try:
                await call_with_retries(backend, request, retries=20, timeout=120.0, limiter=limiter)
            except BackendError:
                failures += 1

    started = time.monotonic()
    await asyncio.gather(*(judge(i) for i in range(judgments)))
    return {"failures": failures, "wall_s": time.monotonic() - started}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judgments", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05, help="server latency per reply, seconds")
    parser.add_argument("--hint", choices=("ms", "seconds"), default="ms")
    args = parser.parse_args()

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-local-benchmark")
    sys.path.insert(0, str(ROOT / "src"))
    server_module = load_server_module()
    from pytest_llmjudge.backends import LoopThread

    window = SlidingWindow(RATE, args.hint)
    loop = LoopThread("bench-ratelimit")
    results: dict[str, list[dict[str, float]]] = {"limiter": [], "no limiter": []}
    with server_module.OpenAIServer(lambda request: window(server_module, request), latency_s=args.latency) as server:
        base_url = server.base_url
        loop.run(run_once(base_url, 5, limited=False))  # warm up LiteLLM's client
        time.sleep(1.1)
        for _ in range(args.rounds):
            for name in results:
                server.reset()
                server.set_responder(lambda request: window(server_module, request))
                time.sleep(1.1)  # an empty window for each run
                outcome = loop.run(run_once(base_url, args.judgments, limited=name == "limiter"))
                outcome["requests_per_judgment"] = server.request_count / args.judgments
                results[name].append(outcome)
                print(
                    f"  {name:<10} failures {outcome['failures']:.0f}  wall {outcome['wall_s']:.1f} s  "
                    f"requests/judgment {outcome['requests_per_judgment']:.2f}",
                    flush=True,
                )
    loop.stop()

    ideal = args.judgments / RATE
    print(
        f"\n{args.judgments} judgments, {RATE} req/s allowed, concurrency {CONCURRENCY}, latency {args.latency:g} s, "
        f"hint {args.hint}; medians of {args.rounds}"
    )
    print(f"{'':<12}{'failures':>10}{'wall s':>10}{'x ideal':>10}{'req/judgment':>14}")
    for name, runs in results.items():
        failures = statistics.median(r["failures"] for r in runs)
        wall = statistics.median(r["wall_s"] for r in runs)
        per = statistics.median(r["requests_per_judgment"] for r in runs)
        print(f"{name:<12}{failures:>10.0f}{wall:>10.1f}{wall / ideal:>10.2f}{per:>14.2f}")
    print("targets: failures 0, wall <= 1.3x ideal, requests/judgment <= 1.3")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
