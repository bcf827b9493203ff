"""What importing the reply parser costs, and how many patterns a first reply compiles.

Run:  python benchmarks/bench_parser_import.py [--runs N] [--json]

Each run is a fresh interpreter that first imports what a pytest run has loaded anyway (pytest, the
plugin's runtime, asyncio, json, hashlib), then times ``import pytest_llmjudge.parsing`` and counts the
regular expressions compiled by the import and then by one reply of each kind, in turn (patterns compile
on first use, so each count is what that reply added).  Reported: the median import time over the runs and the counts.  For a noise-free figure, count
instructions instead: ``valgrind --tool=callgrind`` on the same two imports, with and without the parser.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

REPLIES = {
    "clean JSON": '{"score": 4, "reasoning": "Accurate and complete."}',
    "labelled": "The answer is accurate but terse.\n\nScore: 4",
    "prose": "I would rate this response a 4 because it is accurate but terse.",
}

_CHILD = """
import json, re, sys, time
import pytest, pytest_llmjudge.runtime, asyncio, hashlib

compiled = []
real = re._compile

def counting(pattern, flags):
    compiled.append(pattern)
    return real(pattern, flags)

re._compile = counting
t0 = time.perf_counter()
import pytest_llmjudge.parsing
seconds = time.perf_counter() - t0
counts = {"import": len(compiled)}
for kind, reply in json.loads(sys.argv[1]).items():
    del compiled[:]
    try:
        pytest_llmjudge.parsing.parse_verdict(reply, scale=(1, 5))
    except Exception:
        pass
    counts[kind] = len(compiled)
print(json.dumps({"seconds": seconds, "compiled": counts}))
"""


def one_run() -> dict[str, Any]:
    """One fresh interpreter: the import time (s) and the patterns compiled, by what compiled them."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(REPLIES)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters to time (default 15)")
    parser.add_argument("--json", action="store_true", help="print a machine-readable report")
    args = parser.parse_args()
    runs = [one_run() for _ in range(args.runs)]
    median_ms = round(statistics.median(r["seconds"] for r in runs) * 1000, 2)
    compiled: dict[str, int] = runs[-1]["compiled"]
    if args.json:
        print(json.dumps({"import_ms_median": median_ms, "compiled": compiled}))
        return 0
    print(f"import pytest_llmjudge.parsing: {median_ms} ms (median of {args.runs} fresh interpreters)")
    for what, n in compiled.items():
        print(f"  patterns compiled by {'the import' if what == 'import' else f'a first {what} reply'}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
