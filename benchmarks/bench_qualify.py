"""What `llmjudge qualify` costs: recording, replaying, and how long a run takes at an API's latency.

    python benchmarks/bench_qualify.py                  # everything (about 10 minutes on 2 CPUs)
    python benchmarks/bench_qualify.py --latency 1.5    # the judge answers in 1.5 s
    python benchmarks/bench_qualify.py --json out.json

Each run is `python -m pytest_llmjudge qualify` in a fresh subprocess and a fresh folder, against the local
judge server (tests/helpers/openai_server.py, real HTTP and real LiteLLM) answering as a judge that picks
the labelled better output.  Measured, side by side in one run:

  record   the full qualification (770 answers), the server answering at once: the qualification files'
           writes held and written a batch at a time (as shipped) against written once per answer (the
           store's default for a test); wall time and the files' size, medians of --repeats runs
  replay   `CI=true llmjudge qualify` over that recording: wall time and peak RSS, median of --repeats
  latency  --quick and the full set with the server answering in --latency seconds, at the default
           --judge-concurrency (8): how long a run takes against an API (one run each)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers.openai_server import OpenAIServer  # noqa: E402
from helpers.qualify_judges import always_better  # noqa: E402

MODEL = "openai/judge-test"
# The qualify command with every file written once per answer: the held writes turned off.
UNHELD = (
    "import contextlib, sys\n"
    "from pytest_llmjudge.store.verdict_file import VerdictFile\n"
    "VerdictFile.held = lambda self, limit=64: contextlib.nullcontext()\n"
    "from pytest_llmjudge.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLMJUDGE_", "PYTEST_")) and k != "CI"}
    env.update(PYTHONPATH=str(ROOT / "src"), LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_API_KEY="sk-local-benchmark")
    env.update(extra)
    return env


# Runs the command given and prints its peak RSS (KiB) and CPU seconds on the last line of stderr: this
# process's own child only.  CPU time says what a run costs on a machine other work keeps busy.
MEASURED = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[1:])\n"
    "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(used.ru_maxrss, used.ru_utime + used.ru_stime, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def qualify(folder: Path, *args: str, url: str | None = None, held: bool = True, **env: str) -> dict[str, Any]:
    """One `llmjudge qualify` run in `folder`: its wall time, CPU time and peak RSS."""
    judge = [f"--judge-model={MODEL}", f"--judge-api-base={url}", "--judge-retries=0"] if url else []
    head = [sys.executable, "-m", "pytest_llmjudge"] if held else [sys.executable, "-c", UNHELD]
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, *head, "qualify", *args, *judge],
        cwd=folder,
        env=child_env(**env),
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"qualify exited {done.returncode}: {done.stderr[-2000:]}")
    rss, cpu = done.stderr.splitlines()[-1].split()
    return {"seconds": seconds, "cpu_s": float(cpu), "maxrss_mb": int(rss) / 1024}


def stored_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in (folder / "judge_verdicts" / "qualification").glob("*.json"))


def fresh(base: Path, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=name, dir=base))
    (folder / "pytest.ini").write_text("[pytest]\n")
    return folder


def bench(base: Path, repeats: int, latency: float) -> dict[str, Any]:
    results: dict[str, Any] = {"repeats": repeats, "latency_s": latency}
    with OpenAIServer(always_better) as server:
        runs: dict[str, list[dict[str, Any]]] = {"held": [], "per answer": []}
        recorded = None
        for _ in range(repeats):
            for form in runs:  # in turn, under the same load
                folder = fresh(base, "record")
                took = qualify(folder, url=server.base_url, held=form == "held")
                runs[form].append({**took, "bytes": stored_bytes(folder)})
                recorded = recorded or folder
        results["record"] = {
            form: {
                measure: statistics.median(run[measure] for run in done) for measure in ("seconds", "cpu_s", "bytes")
            }
            for form, done in runs.items()
        }
        assert recorded is not None
        replays = [qualify(recorded, CI="true") for _ in range(repeats)]
        results["replay"] = {
            "seconds": statistics.median(r["seconds"] for r in replays),
            "cpu_s": statistics.median(r["cpu_s"] for r in replays),
            "maxrss_mb": max(r["maxrss_mb"] for r in replays),
        }
        server.latency_s = latency
        results["latency"] = {
            "quick": qualify(fresh(base, "quick"), "--quick", url=server.base_url),
            "full": qualify(fresh(base, "full"), url=server.base_url),
        }
    results["load"] = os.getloadavg()[0]
    return results


def report(results: dict[str, Any]) -> None:
    record, replay, latency = results["record"], results["replay"], results["latency"]
    held, each = record["held"], record["per answer"]
    print(f"record, 770 answers, server at once (median of {results['repeats']}; wall, CPU):")
    for name, side in (("writes held:", held), ("a write per answer:", each)):
        print(f"  {name:<20}{side['seconds']:6.1f} s, {side['cpu_s']:5.1f} s CPU, files {side['bytes'] / 1e6:.2f} MB")
    print(
        f"replay (CI=true):     {replay['seconds']:6.1f} s, {replay['cpu_s']:5.1f} s CPU, "
        f"peak RSS {replay['maxrss_mb']:.0f} MB"
    )
    print(f"judge answering in {results['latency_s']} s, concurrency 8 (ideal: 10 s and 96 s):")
    for name, run in (("--quick (80 answers):", latency["quick"]), ("full (770 answers):", latency["full"])):
        print(f"  {name:<23}{run['seconds']:6.1f} s, {run['cpu_s']:5.1f} s CPU")
    print(f"load average at the end: {results['load']:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=3, help="runs per side of record and replay (default 3)")
    parser.add_argument("--latency", type=float, default=1.0, help="the judge's answer time in seconds (default 1)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as base:
        results = bench(Path(base), args.repeats, args.latency)
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
