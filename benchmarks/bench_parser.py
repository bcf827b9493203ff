"""Benchmark `parse_verdict` and `parse_preference` on corpora of real judge replies, and on hostile input.

Run:  python benchmarks/bench_parser.py [--json] [--corpus PATH] [--ours PATH] [--real PATH] [--pairwise PATH]
      [--passfail PATH] [--baseline-src DIR] [--runs N] [--instructions]

The corpora are measured separately:

* shared: ``../shared/corpus/judge_replies.jsonl`` beside the project root (or ``--corpus``, a file
  or its folder); read, never copied, and skipped with a message when absent;
* ours: ``benchmarks/corpus/judge_replies.jsonl`` (or ``--ours``), replies from other sources;
* real judges: ``benchmarks/corpus/real_judges.jsonl`` (or ``--real``), replies of real judges (local, reasoning,
  non-English) from yet other sources; a case's ``asked`` field says what its judge was asked (a pass/fail
  verdict, the prompt it was sent), and the parser is given it as `Asked`;
* pass/fail: ``benchmarks/corpus/passfail_replies.jsonl`` (or ``--passfail``), replies to a judge asked for a
  verdict, read as the corpora above are;
* pairwise: ``benchmarks/corpus/pairwise_replies.jsonl`` (or ``--pairwise``), replies of pairwise judges, read
  with `parse_preference` knowing the prompt each judge was sent (``asked.prompt``) and whether it asked for one
  score per response (``asked.form``); ``expect`` is the winner ("A", "B", "tie", or null: must raise) and,
  where the label says it, the strength.

For each: accuracy overall, by part (a ``part`` field marks replies held out from tuning) and by style, the
``policy`` cases, the expected errors, every failing case, and the **silent wrong** ones listed by id (a score
or winner returned where another one or an error was expected: the worst outcome).  Then throughput (median of
5 runs) and the time of each 1 MB adversarial reply.

``--baseline-src DIR``: also load the parser of another checkout (its ``src`` folder, e.g. the main branch's) under
another module name, and report side by side, in the same run: every case whose reading moved (the outcome and
what was read), and both throughputs, measured in alternating runs, with their ratio.  A case's declared answers
(``asked.answer``) are given only to a parser that takes them.

``--instructions``: count, under valgrind, the CPU instructions one reply of the shared corpus costs (the
difference between reading the corpus 3 and 9 times, so start-up and first compiles fall out), for our parser
and the baseline's: a figure a loaded machine does not move, where wall-clock medians do.
"""

from __future__ import annotations

import argparse
import contextlib
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
from pytest_llmjudge.parsing.answers import Answer  # noqa: E402
from pytest_llmjudge.parsing.funnel import Asked  # noqa: E402
from pytest_llmjudge.parsing.preference import parse_preference  # noqa: E402

# The shared corpus stays in the shared folder next to the project; it is read, never copied.
SHARED = ROOT.parent / "shared" / "corpus" / "judge_replies.jsonl"
OURS = ROOT / "benchmarks" / "corpus" / "judge_replies.jsonl"
REAL = ROOT / "benchmarks" / "corpus" / "real_judges.jsonl"
PASSFAIL = ROOT / "benchmarks" / "corpus" / "passfail_replies.jsonl"
PAIRWISE = ROOT / "benchmarks" / "corpus" / "pairwise_replies.jsonl"
HARD_NEGATIVES = ("prom-14", "prom-15", "promfb-05", "ilab-26", "ilab-29", "ilab-30", "op-07")
MB = 1_000_000
RUNS = 5


def adversarial_cases() -> dict[str, str]:
    sentence = "The response is thorough and polite, and it covers what the user asked about. "
    digits = " ".join(str(i % 1000) for i in range(MB // 4))
    thinking = "<think>" + "Let me weigh it: Score: 3? maybe 4/5. " * (MB // 38) + "</think>\nScore: 4"
    return {
        "a million '{'": "{" * MB,
        "'[[' * 500000": "[[" * 500_000,
        "a million '\"'": '"' * MB,
        "'[' * 1000000": "[" * MB,
        "'{\"a\":' * 200000": '{"a":' * 200_000,
        "'Score: ' * 150000": "Score: " * 150_000,
        "'Final score:\\n' * 75000": "Final score:\n" * 75_000,
        "'{}' * 500000": "{}" * 500_000,
        "'PASS FAIL ' * 100000": "PASS FAIL " * 100_000,
        "'<score>' * 140000": "<score>" * 140_000,
        "'\\\\;' in one JSON string": '{"score": 1, "reason": "' + "\\;" * (MB // 2) + '"}',
        "1 MB thinking block": thinking[:MB],
        "1 MB prose, no score": (sentence * (MB // len(sentence) + 1))[:MB],
        "1 MB digits and spaces": digits[:MB],
        "'PASS. No wait, FAIL. ' * 47000": ("PASS. No wait, FAIL. " * 47_700)[:MB],
        "'<is_correct>true</is_correct>' * 34000": ("<is_correct>true</is_correct>" * 34_500)[:MB],
        "'Draft: {\"score\": 1} Final: ' * 38000": ('Draft: {"score": 1} Final: ' * 38_500)[:MB],
    }


def adversarial_pairwise() -> dict[str, str]:
    """Hostile replies for the pairwise reader: its labels, names and verdict words repeated."""
    return {
        "'[[A>B]] [[B>A]] ' * 62500": "[[A>B]] [[B>A]] " * 62_500,
        "'Output (a) is better. ' * 45000": ("Output (a) is better. " * 45_500)[:MB],
        "'Assistant A better ' * 52000": ("Assistant A better " * 52_700)[:MB],
        "'WINNER: ' * 125000": "WINNER: " * 125_000,
        "'tie neither ' * 83000": ("tie neither " * 83_400)[:MB],
        "'8 9\\n' * 250000 (scores)": "8 9\n" * 250_000,
        "'Response B is worse than A. ' * 35000": ("Response B is worse than A. " * 35_800)[:MB],
        "'1\\n2\\n' * 250000 (declared 1/2/3)": "1\n2\n" * 250_000,
        "'Output: 2 ' * 100000 (declared 1/2/3)": ("Output: 2 " * 100_000)[:MB],
        "'アシスタント1より' * 100000 (declared 1/2/3)": ("アシスタント1より" * 111_200)[:MB],
    }


def asked_of(case: dict[str, Any]) -> Asked | None:
    """What the case's judge was asked, when the case says (its ``asked`` field)."""
    asked = case.get("asked")
    if not isinstance(asked, dict):
        return None
    return Asked(
        asked.get("prompt") or (),
        verdict=asked.get("verdict"),
        fields=asked.get("fields") or (),
        answer=declared(asked),
    )


def declared(asked: dict[str, Any], answer: type[Any] = Answer) -> Any:
    """The answer words the case's template declares (``asked.answer``), when it declares any, as `answer`
    (the `Answer` class of the parser that reads it: ours, or the baseline's)."""
    words = asked.get("answer")
    return answer(words) if isinstance(words, dict) else None


def read(case: dict[str, Any]) -> Any:
    return parse_verdict(case["response"], scale=tuple(case["scale"]), asked=asked_of(case))


def outcome(case: dict[str, Any]) -> tuple[str, str]:
    """('ok' | 'silent-wrong' | 'raised' | 'crash', description) for one case."""
    expect = case["expect"]
    try:
        got = read(case)
    except VerdictParseError as exc:
        if expect["score"] is None:
            return "ok", "error"
        return "raised", f"VerdictParseError({exc})"
    except Exception as exc:  # noqa: BLE001 - a crash is a failure, never a pass
        return "crash", f"{type(exc).__name__}: {exc}"
    desc = f"score={got.score} verdict={got.verdict} strategy={got.strategy}"
    if expect["score"] is None or abs(got.score - expect["score"]) > 1e-4:
        return "silent-wrong", desc
    if "verdict" in expect and expect["verdict"] != got.verdict:
        return "silent-wrong", desc
    if "reasoning_contains" in expect and expect["reasoning_contains"] not in got.reasoning:
        return "wrong-reasoning", desc + f" reasoning={got.reasoning[:80]!r}"
    return "ok", desc


def read_pair(case: dict[str, Any]) -> Any:
    asked = case.get("asked") or {}
    return parse_preference(
        case["response"], Asked(asked.get("prompt") or (), answer=declared(asked)), scores=asked.get("form") == "scores"
    )


def outcome_pair(case: dict[str, Any]) -> tuple[str, str]:
    """('ok' | 'silent-wrong' | 'raised' | 'crash', description) for one pairwise case."""
    expect = case["expect"]
    try:
        got = read_pair(case)
    except VerdictParseError as exc:
        return ("ok", "error") if expect["winner"] is None else ("raised", f"VerdictParseError({exc})")
    except Exception as exc:  # noqa: BLE001 - a crash is a failure, never a pass
        return "crash", f"{type(exc).__name__}: {exc}"
    desc = f"winner={got.winner} strength={got.strength} strategy={got.strategy}"
    if got.winner != expect["winner"] or ("strength" in expect and got.strength != expect["strength"]):
        return "silent-wrong", desc
    return "ok", desc


def throughput(cases: list[dict[str, Any]], reader: Any = None) -> float:
    return side_by_side(cases, [reader or read])[0]


def side_by_side(
    cases: list[dict[str, Any]], readers: list[Any], errors: tuple[type[Exception], ...] = ()
) -> list[float]:
    """Replies per second of each reader over the cases: median of `RUNS` runs, the readers taking turns."""
    timings: list[list[float]] = [[] for _ in readers]
    for _ in range(RUNS):
        for k, reader in enumerate(readers):
            t0 = time.perf_counter()
            for case in cases:
                with contextlib.suppress(VerdictParseError, *errors):
                    reader(case)
            timings[k].append(time.perf_counter() - t0)
    return [len(cases) / statistics.median(t) for t in timings]


class Baseline:
    """The parser of another checkout (``--baseline-src``), loaded under its own module name beside ours."""

    NAME = "_baseline_pytest_llmjudge"

    def __init__(self, src: Path) -> None:
        import importlib
        import importlib.util

        init = src / "pytest_llmjudge" / "__init__.py"
        if not init.is_file():
            raise SystemExit(f"--baseline-src: no pytest_llmjudge package in {src}")
        spec = importlib.util.spec_from_file_location(self.NAME, init, submodule_search_locations=[str(init.parent)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.NAME] = module
        spec.loader.exec_module(module)
        self.errors = importlib.import_module(self.NAME + ".errors")
        funnel = importlib.import_module(self.NAME + ".parsing.funnel")
        self.parse_verdict = funnel.parse_verdict
        self.Asked = funnel.Asked
        self.parse_preference = importlib.import_module(self.NAME + ".parsing.preference").parse_preference
        self.takes_answer = "answer" in getattr(self.Asked, "__slots__", ())
        # A baseline that reads declarations takes them as its own class (its Asked checks the type).
        self.Answer = importlib.import_module(self.NAME + ".parsing.answers").Answer if self.takes_answer else None

    def asked(self, case: dict[str, Any]) -> Any:
        asked = case.get("asked")
        if not isinstance(asked, dict):
            return None
        extra = {"answer": declared(asked, self.Answer)} if self.takes_answer else {}
        return self.Asked(
            asked.get("prompt") or (), verdict=asked.get("verdict"), fields=asked.get("fields") or (), **extra
        )

    def read(self, case: dict[str, Any]) -> Any:
        return self.parse_verdict(case["response"], scale=tuple(case["scale"]), asked=self.asked(case))

    def read_pair(self, case: dict[str, Any]) -> Any:
        asked = dict(case.get("asked") or {}, verdict=None)
        return self.parse_preference(
            case["response"], self.asked({"asked": asked}), scores=asked.get("form") == "scores"
        )


def reading(reader: Any, case: dict[str, Any], errors: tuple[type[Exception], ...]) -> str:
    """What a reader makes of one case, as comparable text: the result's fields, or the error's kind."""
    try:
        got = reader(case)
    except (VerdictParseError, *errors):
        return "error"
    except Exception as exc:  # noqa: BLE001 - a crash is a reading too
        return f"crash {type(exc).__name__}"
    if hasattr(got, "winner"):
        return f"winner={got.winner} strength={got.strength}"
    return f"score={got.score} verdict={got.verdict}"


def compare(cases: list[dict[str, Any]], baseline: Baseline, pairwise: bool) -> dict[str, Any]:
    """The cases whose reading moved against the baseline, and both throughputs side by side."""
    ours = read_pair if pairwise else read
    theirs = baseline.read_pair if pairwise else baseline.read
    errors = (baseline.errors.VerdictParseError,)
    moved = []
    for case in cases:
        now, before = reading(ours, case, errors), reading(theirs, case, errors)
        if now != before:
            moved.append({"id": case["id"], "part": case.get("part", "first collection"), "before": before, "now": now})
    rate, base_rate = side_by_side(cases, [ours, theirs], errors)
    return {"moved": moved, "replies_per_second": round(rate, 1), "baseline_replies_per_second": round(base_rate, 1)}


def measure(cases: list[dict[str, Any]], pairwise: bool = False) -> dict[str, Any]:
    by_style: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_part: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    policy = [0, 0]
    hard = [0, 0]
    errors_expected = [0, 0]
    failures: list[dict[str, Any]] = []
    silent: list[str] = []
    passed = 0
    for case in cases:
        kind, got = outcome_pair(case) if pairwise else outcome(case)
        ok = kind == "ok"
        passed += ok
        by_style[case["style"]][0] += ok
        by_style[case["style"]][1] += 1
        by_part[case.get("part", "first collection")][0] += ok
        by_part[case.get("part", "first collection")][1] += 1
        if case.get("policy"):
            policy[0] += ok
            policy[1] += 1
        if case["id"].startswith(tuple(h + "-" for h in HARD_NEGATIVES)):
            hard[0] += ok
            hard[1] += 1
        if case["expect"].get("winner" if pairwise else "score") is None:
            errors_expected[0] += ok
            errors_expected[1] += 1
        if kind == "silent-wrong":
            silent.append(case["id"])
        if not ok:
            failures.append({"id": case["id"], "kind": kind, "expected": case["expect"], "got": got})
    return {
        "total": len(cases),
        "passed": passed,
        "accuracy": round(passed / len(cases), 4) if cases else 0.0,
        "silent_wrong": silent,
        "by_style": {k: {"passed": v[0], "total": v[1]} for k, v in sorted(by_style.items())},
        "by_part": {k: {"passed": v[0], "total": v[1]} for k, v in by_part.items()},
        "policy": {"passed": policy[0], "total": policy[1]},
        "hard_negatives": {"passed": hard[0], "total": hard[1]},
        "expected_errors": {"raised": errors_expected[0], "total": errors_expected[1]},
        "failures": failures,
        "replies_per_second": round(throughput(cases, read_pair if pairwise else read), 1),
    }


def echo_case() -> tuple[str, Asked]:
    """A 1 MB reply that copies a judgment's output over and over, read knowing the prompt (copies set aside)."""
    from pytest_llmjudge.rubrics import Case
    from pytest_llmjudge.rubrics.likert import Likert

    output = "Returns are accepted within 30 days of purchase. Rating: 5/5. "
    rubric = Likert(1, 10)
    (prompt,) = rubric.prompts(Case.build(output * 20, "Says returns are accepted within 30 days"))
    return (output * (MB // len(output) + 1))[:MB], rubric.asked(prompt)


NUMBERS = {"1": "first", "2": "second", "3": "tie"}  # the declared answer words of the hostile pairwise replies


def adversarial(baseline: Baseline | None = None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    cases: dict[str, tuple[str, Asked | None]] = {name: (text, None) for name, text in adversarial_cases().items()}
    cases["1 MB echo of the output (asked)"] = echo_case()
    pairs = {f"pairwise: {name}": text for name, text in adversarial_pairwise().items()}
    for name, (text, asked) in [*cases.items(), *((name, (text, None)) for name, text in pairs.items())]:
        row = {}
        for who, parser in (("", None), ("baseline_", baseline)) if baseline is not None else (("", None),):
            t0 = time.perf_counter()
            row[who + "outcome"] = hostile(name, text, asked if parser is None else None, name in pairs, parser)
            row[who + "seconds"] = round(time.perf_counter() - t0, 4)
        out[name] = row
    return out


def hostile(name: str, text: str, asked: Asked | None, pairwise: bool, baseline: Baseline | None) -> str:
    """Read one hostile reply with our parser (or the baseline's): "parsed", "VerdictParseError" or the crash."""
    errors = (VerdictParseError,) if baseline is None else (VerdictParseError, baseline.errors.VerdictParseError)
    try:
        if baseline is not None:
            if pairwise:
                asked_of = {"asked": {"answer": NUMBERS}} if name.endswith("(declared 1/2/3)") else {}
                baseline.parse_preference(text, baseline.asked(asked_of), scores=name.endswith("(scores)"))
            else:
                baseline.parse_verdict(text, scale=(1, 10))
        elif pairwise:
            declared_asked = Asked(answer=Answer(NUMBERS)) if name.endswith("(declared 1/2/3)") else None
            parse_preference(text, declared_asked, scores=name.endswith("(scores)"))
        else:
            parse_verdict(text, scale=(1, 10), asked=asked)
        return "parsed"
    except errors:
        return "VerdictParseError"
    except Exception as exc:  # noqa: BLE001 - reported, so a crash is visible
        return type(exc).__name__


def load(path: Path) -> list[dict[str, Any]] | None:
    if path.is_dir():
        path = path / "judge_replies.jsonl"
    if not path.exists():
        return None
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def print_corpus(name: str, path: Path, r: dict[str, Any]) -> None:
    print(f"== {name} corpus ({path}) ==")
    print(f"overall: {r['passed']}/{r['total']} = {r['accuracy']:.1%}")
    print(
        f"silent wrong: {len(r['silent_wrong'])}" + (f" ({', '.join(r['silent_wrong'])})" if r["silent_wrong"] else "")
    )
    if len(r["by_part"]) > 1:  # replies added later are held out: measured apart from the first collection
        print("by part:")
        for part, row in r["by_part"].items():
            print(f"  {part:18s} {row['passed']:3d}/{row['total']:<3d}")
    print("by style:")
    for style, row in r["by_style"].items():
        print(f"  {style:18s} {row['passed']:3d}/{row['total']:<3d}")
    print(f"policy cases:     {r['policy']['passed']}/{r['policy']['total']}")
    if r["hard_negatives"]["total"]:
        print(f"hard negatives:   {r['hard_negatives']['passed']}/{r['hard_negatives']['total']}")
    errs = r["expected_errors"]
    print(f"expected errors:  {errs['raised']}/{errs['total']} raised VerdictParseError")
    print(f"failures ({len(r['failures'])}):")
    for f in r["failures"]:
        print(f"  {f['id']} [{f['kind']}]: expected {json.dumps(f['expected'], ensure_ascii=False)}; got {f['got']}")
    print(f"throughput: {r['replies_per_second']:,.0f} replies/s (median of {RUNS} runs over the corpus)")
    side = r.get("baseline")
    if side is not None:
        moved = side["moved"]
        print(f"against the baseline: {len(moved)} reading(s) moved")
        for m in moved:
            print(f"  {m['id']} ({m['part']}): {m['before']} -> {m['now']}")
        ratio = side["replies_per_second"] / side["baseline_replies_per_second"]
        print(
            f"side by side (alternating runs, median of {RUNS}): {side['replies_per_second']:,.0f} replies/s,"
            f" baseline {side['baseline_replies_per_second']:,.0f} replies/s, ratio {ratio:.2f}"
        )
    print()


def run(
    as_json: bool,
    shared: Path = SHARED,
    ours: Path = OURS,
    real: Path = REAL,
    passfail: Path = PASSFAIL,
    pairwise: Path = PAIRWISE,
    baseline_src: Path | None = None,
) -> int:
    baseline = Baseline(baseline_src) if baseline_src is not None else None
    report: dict[str, Any] = {}
    corpora = (
        ("shared", shared),
        ("ours", ours),
        ("real judges", real),
        ("pass/fail", passfail),
        ("pairwise", pairwise),
    )
    for name, path in corpora:
        cases = load(path)
        if cases is None:
            if not as_json:
                print(f"== {name} corpus: not found at {path}; skipped ==\n")
            report[name] = None
            continue
        report[name] = measure(cases, pairwise=name == "pairwise")
        if baseline is not None:
            report[name]["baseline"] = compare(cases, baseline, pairwise=name == "pairwise")
        if not as_json:
            print_corpus(name, path, report[name])
    report["adversarial"] = adversarial(baseline)
    # Top-level figures that older readers of this report expect: the shared corpus when present.
    main_corpus = report["shared"] or report["ours"] or {}
    report["accuracy"] = main_corpus.get("accuracy")
    report["replies_per_second"] = main_corpus.get("replies_per_second")
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    worst = max(report["adversarial"].items(), key=lambda kv: kv[1]["seconds"])
    print("adversarial 1 MB replies:")
    for name, row in report["adversarial"].items():
        side = f"   baseline {row['baseline_seconds']:.3f} s" if "baseline_seconds" in row else ""
        print(f"  {name:48s} {row['seconds']:.3f} s  ({row['outcome']}){side}")
    print(f"worst: {worst[0]} in {worst[1]['seconds']:.3f} s")
    return 0


# Reads the shared corpus N times with the parser in SRC (argv: SRC N CORPUS): what --instructions counts.
_READ_CORPUS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pytest_llmjudge.errors import VerdictParseError
from pytest_llmjudge.parsing import parse_verdict
cases = [json.loads(line) for line in open(sys.argv[3], encoding="utf-8") if line.strip()]
for _ in range(int(sys.argv[2])):
    for case in cases:
        try:
            parse_verdict(case["response"], scale=tuple(case["scale"]))
        except VerdictParseError:
            pass
"""


def instructions_per_reply(src: Path, corpus: Path) -> float | None:
    """The instructions one reply of ``corpus`` costs with the parser in ``src`` (None: no valgrind or corpus)."""
    import os
    import re
    import shutil
    import subprocess

    if shutil.which("valgrind") is None or not corpus.exists():
        return None
    counts = []
    for reps in (3, 9):
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _READ_CORPUS,
             str(src), str(reps), str(corpus)],
            capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"},
        )  # fmt: skip
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            return None
        counts.append(int(found.group(1)))
    cases = sum(1 for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip())
    return (counts[1] - counts[0]) / (6 * cases)


def print_instructions(corpus: Path, baseline_src: Path | None) -> None:
    ours = instructions_per_reply(ROOT / "src", corpus)
    if ours is None:
        print("instructions: valgrind or the shared corpus is missing; nothing counted")
        return
    line = f"instructions per reply of the shared corpus: {ours / 1000:,.1f} K"
    if baseline_src is not None:
        theirs = instructions_per_reply(baseline_src, corpus)
        if theirs is not None:
            line += f", baseline {theirs / 1000:,.1f} K ({(ours / theirs - 1) * 100:+.1f}%)"
    print(line)


def main() -> int:
    global RUNS  # one setting for every measurement of this run
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print a machine-readable report")
    parser.add_argument("--corpus", type=Path, default=SHARED, help="the shared corpus (file or folder)")
    parser.add_argument("--ours", type=Path, default=OURS, help="our own corpus (file or folder)")
    parser.add_argument("--real", type=Path, default=REAL, help="our corpus of real judges' replies (file)")
    parser.add_argument("--passfail", type=Path, default=PASSFAIL, help="replies to a judge asked for a verdict (file)")
    parser.add_argument("--pairwise", type=Path, default=PAIRWISE, help="replies of pairwise judges (file)")
    parser.add_argument(
        "--baseline-src",
        type=Path,
        default=None,
        help="another checkout's src folder: report moved readings and throughput side by side with its parser",
    )
    parser.add_argument("--runs", type=int, default=RUNS, help=f"timed runs per corpus, median taken (default {RUNS})")
    parser.add_argument(
        "--instructions", action="store_true", help="count CPU instructions per reply under valgrind (slow, stable)"
    )
    args = parser.parse_args()
    RUNS = max(1, args.runs)
    if args.instructions:
        corpus = args.corpus / "judge_replies.jsonl" if args.corpus.is_dir() else args.corpus
        print_instructions(corpus, args.baseline_src)
        return 0
    return run(args.json, args.corpus, args.ours, args.real, args.passfail, args.pairwise, args.baseline_src)


if __name__ == "__main__":
    raise SystemExit(main())
