"""What judging a RAG answer costs: calls, prompt and completion tokens, and live time per judgment.

    python benchmarks/bench_rag.py                   # ours, per item and batched; the peers when a venv has them
    python benchmarks/bench_rag.py --repeats 5 --json rag.json
    PEER_PYTHON=peer-venv/bin/python python benchmarks/bench_rag.py   # DeepEval and ragas from that venv

The five cases of benchmarks/rag_cases.json (a question, an answer of 4 to 8 sentences, a reference,
5 retrieved passages of about 150 words) are judged with each of the four RAG kinds, per item
(`batch=1`) and batched (the default), side by side in one run; with a Python that has deepeval and
ragas (PEER_PYTHON, default peer-venv/bin/python), their four matching metrics on the same cases.
Every tool calls the same local OpenAI-compatible server (tests/helpers/openai_server.py, in a
process of its own, 200 ms per call) whose responder (rag_responder.py) answers every tool's
prompts alike.  The server logs each request; the requests that arrive during a judgment are its
calls.  Tokens are characters / 4 (of every message sent, and of the reply): the same measure for
every tool, whatever its tokenizer.  Wall time is per judgment, live, the median of --repeats runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
MODEL = "openai/judge-test"
KINDS = ("Faithfulness", "AnswerRelevancy", "ContextPrecision", "ContextRecall")
CRITERIA = "Answers the question from the retrieved passages"


def cases() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((BENCH / "rag_cases.json").read_text())["cases"]
    return data


def _server_module() -> Any:
    spec = importlib.util.spec_from_file_location("llmjudge_bench_rag_server", ROOT / "tests/helpers/openai_server.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@contextmanager
def server(log: Path, latency_s: float) -> Iterator[str]:
    """The local judge server in a process of its own, logging every request to `log`; yields its URL."""
    module = _server_module()
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "RAG_BENCH_LOG")}
    old = saved["PYTHONPATH"]
    os.environ["PYTHONPATH"] = str(BENCH) + (os.pathsep + old if old else "")  # the child imports rag_responder
    os.environ["RAG_BENCH_LOG"] = str(log)
    try:
        proc, url = module.serve_in_subprocess("rag_responder:respond", latency_s=latency_s)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    try:
        yield url
    finally:
        module.stop_subprocess(proc)


# -- pytest-llmjudge -------------------------------------------------------------------------------


def judge_ours(url: str, repeats: int) -> list[dict[str, Any]]:
    """Every case with every kind, per item and batched, `repeats` times each: one record per judgment."""
    os.environ.update(
        LLMJUDGE_MODEL=MODEL, LLMJUDGE_API_BASE=url, LLMJUDGE_MODE="live", LLMJUDGE_RETRIES="0",
        OPENAI_API_KEY="sk-local-benchmark", LITELLM_LOCAL_MODEL_COST_MAP="True",
    )  # fmt: skip
    import pytest_llmjudge
    from pytest_llmjudge import Judge

    judge = Judge()
    first = cases()[0]
    judge.score(first["answer"], CRITERIA, input=first["question"])  # LiteLLM's import and first connection, untimed
    records = []
    for form, batch in (("per item", 1), ("batched", None)):
        for kind in KINDS:
            rubric = getattr(pytest_llmjudge, kind)(batch=batch)
            for case in cases():
                for repeat in range(repeats):
                    start = time.time()
                    verdict = judge.score(
                        case["answer"], CRITERIA, rubric=rubric, input=case["question"],
                        expected=case["reference"], context=case["context"],
                    )  # fmt: skip
                    end = time.time()
                    records.append(
                        {"tool": "pytest-llmjudge", "form": form, "kind": kind, "case": case["name"],
                         "repeat": repeat, "start": start, "end": end, "score": verdict.score}
                    )  # fmt: skip
                    time.sleep(0.05)  # a request of this judgment logged late is never counted in the next
    return records


# -- the peers, from a venv of their own ------------------------------------------------------------


def judge_peers(url: str, repeats: int, python: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """DeepEval's and ragas' records (peer_rag.py run with `python`), and why a peer was skipped."""
    if not python.exists():
        reason = f"no peer interpreter at {python} (set PEER_PYTHON to a venv with deepeval and ragas)"
        return [], {"deepeval": reason, "ragas": reason}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases(), handle)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMJUDGE_")}
    env.update(DEEPEVAL_TELEMETRY_OPT_OUT="YES", RAGAS_DO_NOT_TRACK="true", OPENAI_API_KEY="sk-local-benchmark")
    done = subprocess.run(
        [str(python), str(BENCH / "peer_rag.py"), url, handle.name, str(repeats)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    os.unlink(handle.name)
    records, skipped = [], {}
    for line in done.stdout.splitlines():
        if line.startswith("PEER_RECORD "):
            records.append(json.loads(line[len("PEER_RECORD ") :]))
        elif line.startswith("PEER_SKIPPED "):
            tool, _, why = line[len("PEER_SKIPPED ") :].partition(" ")
            skipped[tool] = why
    if done.returncode != 0:
        skipped.setdefault("peers", f"peer_rag.py exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return records, skipped


# -- the figures -------------------------------------------------------------------------------------


def attribute(records: Sequence[dict[str, Any]], log: Path) -> None:
    """Each record gets the calls, prompt and completion tokens of the requests logged during it."""
    requests = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    for record in records:
        during = [r for r in requests if record["start"] <= r["t"] <= record["end"]]
        record["calls"] = len(during)
        record["prompt_tokens"] = sum(r["prompt_chars"] for r in during) / 4
        record["completion_tokens"] = sum(r["reply_chars"] for r in during) / 4


def summarize(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per tool (and form) and kind: calls, tokens and wall time per judgment (medians over cases and repeats)."""
    rows = []
    sides = list(dict.fromkeys((r["tool"], r.get("form", "")) for r in records))
    for tool, form in sides:
        for kind in KINDS:
            mine = [r for r in records if (r["tool"], r.get("form", ""), r["kind"]) == (tool, form, kind)]
            if not mine:
                continue
            ok = [r for r in mine if not r.get("error")]
            per_case = {}
            for r in ok:
                per_case.setdefault(r["case"], []).append(r)
            walls = [statistics.median(r["end"] - r["start"] for r in runs) for runs in per_case.values()]
            first = [runs[0] for runs in per_case.values()]
            rows.append(
                {
                    "tool": tool,
                    "form": form,
                    "kind": kind,
                    "judgments": len(mine),
                    "errors": len(mine) - len(ok),
                    "calls": statistics.mean(r["calls"] for r in first) if first else None,
                    "prompt_tokens": statistics.mean(r["prompt_tokens"] for r in first) if first else None,
                    "completion_tokens": statistics.mean(r["completion_tokens"] for r in first) if first else None,
                    "wall_s": statistics.median(walls) if walls else None,
                    "wall_range_s": [min(walls), max(walls)] if walls else None,
                    "error_sample": next((r["error"] for r in mine if r.get("error")), None),
                }
            )
    return rows


def per_case(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per tool (and form), summed over the four kinds: what one case costs."""
    totals = []
    for side in dict.fromkeys((r["tool"], r["form"]) for r in rows):
        mine = [r for r in rows if (r["tool"], r["form"]) == side and r["calls"] is not None]
        totals.append(
            {
                "tool": side[0],
                "form": side[1],
                "kinds": len(mine),
                "calls": sum(r["calls"] for r in mine),
                "prompt_tokens": sum(r["prompt_tokens"] for r in mine),
                "completion_tokens": sum(r["completion_tokens"] for r in mine),
                "wall_s": sum(r["wall_s"] for r in mine),
                "errors": sum(r["errors"] for r in rows if (r["tool"], r["form"]) == side),
            }
        )
    return totals


def report(rows: Sequence[dict[str, Any]], totals: Sequence[dict[str, Any]], skipped: dict[str, str]) -> None:
    def side(r: dict[str, Any]) -> str:
        return f"{r['tool']} {r['form']}".strip()

    print(f"{'per judgment (mean over cases)':34s} {'kind':17s} {'calls':>6s} {'prompt tok':>11s} {'compl tok':>10s} "
          f"{'wall s (median; range over cases)':>34s}")  # fmt: skip
    for r in rows:
        if r["calls"] is None:
            print(f"{side(r):34s} {r['kind']:17s} every judgment failed: {r['error_sample']}")
            continue
        wall = f"{r['wall_s']:.2f} ({r['wall_range_s'][0]:.2f}-{r['wall_range_s'][1]:.2f})"
        errors = f"  [{r['errors']} errors: {r['error_sample']}]" if r["errors"] else ""
        print(f"{side(r):34s} {r['kind']:17s} {r['calls']:6.1f} {r['prompt_tokens']:11,.0f} "
              f"{r['completion_tokens']:10,.0f} {wall:>34s}{errors}")  # fmt: skip
    print()
    print(f"{'per case, over the four kinds':34s} {'':17s} {'calls':>6s} {'prompt tok':>11s} {'compl tok':>10s} "
          f"{'wall s (sum of medians)':>34s}")  # fmt: skip
    for t in totals:
        note = f"  (only {t['kinds']} kinds)" if t["kinds"] != len(KINDS) else ""
        print(f"{side(t):34s} {'':17s} {t['calls']:6.1f} {t['prompt_tokens']:11,.0f} {t['completion_tokens']:10,.0f} "
              f"{t['wall_s']:34.2f}{note}")  # fmt: skip
    for tool, why in skipped.items():
        print(f"{tool}: skipped: {why}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="live runs of each judgment (wall: their median)")
    parser.add_argument("--latency", type=float, default=0.2, help="the server's seconds per call (default 0.2)")
    parser.add_argument("--no-peers", action="store_true", help="measure pytest-llmjudge only")
    parser.add_argument("--json", metavar="PATH", help="also write every record and figure to this JSON file")
    args = parser.parse_args(argv)
    peer = Path(os.environ.get("PEER_PYTHON") or "peer-venv/bin/python")
    with tempfile.TemporaryDirectory(prefix="llmjudge-bench-rag-") as tmp:
        log = Path(tmp) / "requests.jsonl"
        log.touch()
        with server(log, args.latency) as url:
            records = judge_ours(url, args.repeats)
            skipped: dict[str, str] = {}
            if not args.no_peers:
                theirs, skipped = judge_peers(url, args.repeats, peer)
                records += theirs
        time.sleep(0.1)
        attribute(records, log)
    rows = summarize(records)
    totals = per_case(rows)
    print(f"RAG judging cost: {len(cases())} cases, server at {args.latency:.1f} s per call, {args.repeats} repeats")
    report(rows, totals, skipped)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "per_case": totals, "skipped": skipped,
                                               "records": records}, indent=2) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
