"""What recording one judgment over many passages costs: its wall time and its verdict file's size.

    python benchmarks/bench_store.py                           # 10, 100 and 1,000 passages
    python benchmarks/bench_store.py --against ../old-checkout # the same, side by side with another checkout
    python benchmarks/bench_store.py --sizes 10,100 --json out.json

One `ContextPrecision` judgment over N passages (about 60 characters each) is recorded by pytest in a
fresh subprocess, against the local judge server (tests/helpers/openai_server.py, real HTTP and real
LiteLLM) answering at once, with --judge-max-items raised to N: per item (one call per passage, as
before batching) and batched (the default, where the checkout has it).  Reported per size: the
record run's wall time and the verdict file's size.  A run over `--limit` seconds is stopped and
reported as such.  Every checkout is measured in the same run, in turn, under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from bench_rag import server  # noqa: E402  (the RAG responder answers per-item and batched rulings)

TEST = """
import inspect, os
from pytest_llmjudge import ContextPrecision, assert_judged

N = int(os.environ["BENCH_PASSAGES"])
PASSAGES = [f"Passage {i}: store {i} takes returns for {i % 60 + 1} days after delivery." for i in range(N)]

def test_ranked():
    per_item = os.environ["BENCH_FORM"] == "per item"
    if per_item and "batch" in inspect.signature(ContextPrecision).parameters:
        rubric = ContextPrecision(batch=1)
    else:  # a checkout from before batching asks per item anyway
        rubric = ContextPrecision()
    assert_judged("Store 3 takes returns for 4 days.", "Ranks the useful passages first",
                  input="How long does store 3 take returns?", context=PASSAGES, rubric=rubric, threshold=0.0)
"""


def record(src: Path, url: str, passages: int, form: str, limit: float) -> dict[str, Any]:
    """One record run in a fresh folder: its wall time and the verdict file's size (None: stopped at `limit`)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_store.py").write_text(TEST)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LLMJUDGE_", "PYTEST_")) and k != "CI"}
        env |= {
            "PYTHONPATH": str(src),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_API_KEY": "sk-local-benchmark",  # a checkout from before needs one, even for a local server
            "LLMJUDGE_MAX_ITEMS": str(passages + 1),  # an option the checkout may not know: then ignored
            "BENCH_PASSAGES": str(passages),
            "BENCH_FORM": form,
        }
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--judge-mode=auto"]
        command += ["--judge-model=openai/judge-test", f"--judge-api-base={url}", "--judge-retries=0"]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            return {"seconds": None, "bytes": None, "note": f"stopped after {limit:.0f} s"}
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            tail = "\n".join(done.stdout.splitlines()[-8:])
            raise RuntimeError(f"the record run failed ({src}, {passages}, {form}):\n{tail}")
        files = list(folder.rglob("judge_verdicts/**/*.json"))
        return {"seconds": round(seconds, 2), "bytes": sum(f.stat().st_size for f in files)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="passages per judgment, comma-separated")
    parser.add_argument("--against", type=Path, action="append", default=[], help="another checkout's root")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds a record run may take")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args(argv)
    checkouts = {"this checkout": ROOT / "src", **{str(p): p.resolve() / "src" for p in args.against}}
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as logs, server(Path(logs) / "requests.jsonl", 0.0) as url:
        for passages in sizes:
            for form in ("per item", "batched"):
                for name, src in checkouts.items():
                    result = record(src, url, passages, form, args.limit)
                    rows.append({"checkout": name, "passages": passages, "form": form, **result})
                    size = "-" if result["bytes"] is None else f"{result['bytes'] / 1024:,.0f} KiB"
                    took = result.get("note") or f"{result['seconds']:.2f} s"
                    print(f"{passages:>5} passages  {form:<8}  {name:<24}  {took:>18}  {size:>12}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
