"""Benchmark `parse_verdict` on the shared corpus of real judge replies, and on hostile input.

Run:  python benchmarks/bench_parser.py [--json] [--corpus PATH]

Reads ``../shared/corpus/judge_replies.jsonl`` relative to the project root, or the file
given with ``--corpus`` (prints a message and exits 0 when it is absent).  Prints accuracy overall, by style, for the
``policy`` cases, for the hard negatives, each failing case, throughput over the corpus
and the time taken by each 1 MB adversarial reply.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from pytest_llmjudge.errors import VerdictParseError  # noqa: E402
from pytest_llmjudge.parsing import parse_verdict  # noqa: E402

# The corpus stays in the shared folder next to the project; it is read, never copied.
CORPUS = ROOT.parent / "shared" / "corpus" / "judge_replies.jsonl"
HARD_NEGATIVES = ("prom-14", "prom-15", "promfb-05", "ilab-26", "ilab-29", "ilab-30", "op-07")
MB = 1_000_000


def adversarial_cases() -> dict[str, str]:
    sentence = "The response is thorough and polite, and it covers what the user asked about. "
    digits = " ".join(str(i % 1000) for i in range(MB // 4))
    return {
        "a million '{'": "{" * MB,
        "'[[' * 500000": "[[" * 500_000,
        "a million '\"'": '"' * MB,
        "'[' * 1000000": "[" * MB,
        "'{\"a\":' * 200000": '{"a":' * 200_000,
        "'Score: ' * 150000": "Score: " * 150_000,
        "'{}' * 500000": "{}" * 500_000,
        "'PASS FAIL ' * 100000": "PASS FAIL " * 100_000,
        "1 MB prose, no score": (sentence * (MB // len(sentence) + 1))[:MB],
        "1 MB digits and spaces": digits[:MB],
    }


def _case_passes(case: dict[str, Any]) -> tuple[bool, str]:
    expect = case["expect"]
    try:
        got = parse_verdict(case["response"], scale=tuple(case["scale"]))
    except VerdictParseError as exc:
        if expect["score"] is None:
            return True, "error"
        return False, f"VerdictParseError({exc})"
    except Exception as exc:  # a crash is a failure, never a pass
        return False, f"{type(exc).__name__}: {exc}"
    desc = f"score={got.score} verdict={got.verdict} strategy={got.strategy}"
    if expect["score"] is None:
        return False, desc
    if abs(got.score - expect["score"]) > 1e-4:
        return False, desc
    if "verdict" in expect and expect["verdict"] != got.verdict:
        return False, desc
    if "reasoning_contains" in expect and expect["reasoning_contains"] not in got.reasoning:
        return False, desc + f" reasoning={got.reasoning[:80]!r}"
    return True, desc


def run(as_json: bool, corpus: Path = CORPUS) -> int:
    if not corpus.exists():
        print(f"corpus not found at {corpus}; nothing to benchmark")
        return 0
    cases = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]

    by_style: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    policy = [0, 0]
    hard = [0, 0]
    errors_expected = [0, 0]
    failures: list[dict[str, Any]] = []
    passed = 0
    for case in cases:
        ok, got = _case_passes(case)
        passed += ok
        by_style[case["style"]][0] += ok
        by_style[case["style"]][1] += 1
        if case.get("policy"):
            policy[0] += ok
            policy[1] += 1
        if case["id"].startswith(tuple(h + "-" for h in HARD_NEGATIVES)):
            hard[0] += ok
            hard[1] += 1
        if case["expect"]["score"] is None:
            errors_expected[0] += ok
            errors_expected[1] += 1
        if not ok:
            failures.append({"id": case["id"], "expected": case["expect"], "got": got})

    timings = []
    for _ in range(5):
        t0 = time.perf_counter()
        for case in cases:
            try:
                parse_verdict(case["response"], scale=tuple(case["scale"]))
            except VerdictParseError:
                pass
        timings.append(time.perf_counter() - t0)
    per_second = len(cases) / statistics.median(timings)

    adversarial: dict[str, dict[str, Any]] = {}
    for name, text in adversarial_cases().items():
        t0 = time.perf_counter()
        try:
            parse_verdict(text, scale=(1, 10))
            outcome = "parsed"
        except VerdictParseError:
            outcome = "VerdictParseError"
        except Exception as exc:  # reported, so a crash is visible
            outcome = type(exc).__name__
        adversarial[name] = {"seconds": round(time.perf_counter() - t0, 4), "outcome": outcome}

    report = {
        "total": len(cases),
        "passed": passed,
        "accuracy": round(passed / len(cases), 4),
        "by_style": {k: {"passed": v[0], "total": v[1]} for k, v in sorted(by_style.items())},
        "policy": {"passed": policy[0], "total": policy[1]},
        "hard_negatives": {"passed": hard[0], "total": hard[1]},
        "expected_errors": {"raised": errors_expected[0], "total": errors_expected[1]},
        "failures": failures,
        "replies_per_second": round(per_second, 1),
        "adversarial": adversarial,
    }
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0

    print(f"overall: {passed}/{len(cases)} = {passed / len(cases):.1%}")
    print("by style:")
    for style, (ok, total) in sorted(by_style.items()):
        print(f"  {style:18s} {ok:3d}/{total:<3d}")
    print(f"policy cases:     {policy[0]}/{policy[1]}")
    print(f"hard negatives:   {hard[0]}/{hard[1]}")
    print(f"expected errors:  {errors_expected[0]}/{errors_expected[1]} raised VerdictParseError")
    print(f"failures ({len(failures)}):")
    for f in failures:
        print(f"  {f['id']}: expected {json.dumps(f['expected'], ensure_ascii=False)}; got {f['got']}")
    print(f"throughput: {per_second:,.0f} replies/s (median of {len(timings)} runs over the corpus)")
    print("adversarial 1 MB replies:")
    for name, row in adversarial.items():
        print(f"  {name:26s} {row['seconds']:.3f} s  ({row['outcome']})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print a machine-readable report")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the judge replies (JSON lines) to read")
    args = parser.parse_args()
    return run(args.json, args.corpus)


if __name__ == "__main__":
    raise SystemExit(main())
