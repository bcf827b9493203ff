"""DeepEval side of the peer comparison (run with a Python that has deepeval; never the project venv).

    peer-venv/bin/python benchmarks/peer_deepeval.py BASE_URL N [--dead-url URL]

Prints one JSON object: import time, per-judgment time of `assert_test` with a GEval metric against
the local OpenAI-compatible server, and whether a cached evaluation replays with the server gone.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_DISABLE_PROGRESS_BAR", "1")
os.environ.setdefault("ERROR_REPORTING", "NO")


def main() -> int:
    base_url, n = sys.argv[1], int(sys.argv[2])
    dead = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--dead-url" else "http://127.0.0.1:9/v1"
    out: dict = {}
    t0 = time.perf_counter()
    import deepeval
    from deepeval import assert_test, evaluate
    from deepeval.metrics import GEval
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams

    try:
        from deepeval.models import OpenAIModel as Model
    except ImportError:  # older deepeval
        from deepeval.models import GPTModel as Model
    out["import_s"] = round(time.perf_counter() - t0, 3)
    out["version"] = getattr(deepeval, "__version__", "?")

    def metric(url: str) -> GEval:
        model = Model(model="gpt-4o-mini", api_key="sk-local", base_url=url)
        return GEval(
            name="Correctness",
            criteria="Says returns are accepted within 30 days",
            evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT],
            model=model,
            threshold=0.5,
            async_mode=False,
        )

    times, errors = [], []
    for i in range(n):
        case = LLMTestCase(input="Can I return shoes?", actual_output=f"Returns are accepted within 30 days ({i}).")
        t = time.perf_counter()
        try:
            assert_test(case, [metric(base_url)])
        except BaseException as exc:  # noqa: BLE001 - reported
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            if len(errors) > 3:
                break
        times.append(time.perf_counter() - t)
    out["judgments"] = len(times)
    out["per_judgment_s"] = round(statistics.median(times), 4) if times else None
    out["errors"] = errors[:3]

    # Cache: evaluate() with the cache on, then again against a dead server.
    cache: dict = {}
    try:
        from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig

        case = LLMTestCase(input="Can I return shoes?", actual_output="Returns are accepted within 30 days (cached).")
        kwargs = dict(
            cache_config=CacheConfig(use_cache=True, write_cache=True),
            display_config=DisplayConfig(print_results=False, show_indicator=False),
            async_config=AsyncConfig(run_async=False),
        )
        evaluate([case], [metric(base_url)], **kwargs)
        t = time.perf_counter()
        try:
            result = evaluate([case], [metric(dead)], **kwargs)
            rows = [m for r in result.test_results for m in (r.metrics_data or [])]
            cache["replayed_offline"] = bool(rows) and all(m.error is None and m.score is not None for m in rows)
            cache["detail"] = [m.error or f"score {m.score}" for m in rows][:2]
        except BaseException as exc:  # noqa: BLE001
            cache["replayed_offline"] = False
            cache["detail"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        cache["seconds"] = round(time.perf_counter() - t, 3)
    except BaseException as exc:  # noqa: BLE001
        cache = {"replayed_offline": None, "detail": f"could not run: {type(exc).__name__}: {str(exc)[:200]}"}
    out["cache"] = cache
    print("PEER_JSON " + json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
