"""Every pytest-llmjudge benchmark in one run, side by side, medians over repeated runs.

    python benchmarks/run_all.py            # the full set (a few minutes)
    python benchmarks/run_all.py --quick    # smaller sizes, fewer repeats (about a minute)
    python benchmarks/run_all.py --only startup,replay --json results.json
    python benchmarks/run_all.py --only startup,replay --against ../main --against ../v0.1   # A/B: vs other checkouts

Each benchmark runs pytest in a fresh subprocess on a generated suite in a temporary directory,
with this interpreter (run it with the project's venv).  Judges are the local OpenAI-compatible
server in tests/helpers/openai_server.py (real HTTP on 127.0.0.1, real LiteLLM) or, where only the store
matters, a callable judge; nothing leaves the machine.

  startup  `pytest --collect-only -q` on 200 tests that never judge: plugin on vs `-p no:llmjudge` (with
           --against DIR, also DIR's src/ on PYTHONPATH, in the same rounds)
  replay   1000 judged assertions replayed from the verdict file vs the same tests with plain asserts, run in
           turn: the median of the pairs' differences (--replay-pairs N, default 5).  Each judgment's
           reply differs (its score is 0.9000 to 0.9999), as a real suite's do: identical replies
           let a parse memo answer all but the first;
           checks LiteLLM was never imported.  With --against DIR (another checkout of the project;
           repeatable), each pair also replays the same verdict files with DIR's src/ on PYTHONPATH:
           every side measured in one run, under the same load
  suites   1000 judgments replayed in one pass-rate gate, and as runs=5 of 200 tests, against the same 1000
           ungated, in interleaved rounds; and the live calls each records (a gate adds none)
  live     100 judgments against a server answering in 200 ms: sequential, `score_many`, `-n 4`,
           each against the ideal (100 x 0.2 s / concurrency)
  memory   peak RSS of a replay run over 10,000 stored verdicts (and of the same suite, plain)
  parser   benchmarks/bench_parser.py --json (a colleague's): replies/s, seconds per 1 MB hostile reply
  peer     DeepEval's assert_test + GEval against the same kind of server, from a separate venv
           (PEER_PYTHON, default peer-venv/bin/python); skipped with a message if absent
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_llmjudge.settings import CI_VARIABLES  # the children must not inherit a CI's replay default

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
PY = sys.executable
MODEL = "openai/judge-test"


def _server_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "llmjudge_bench_openai_server", ROOT / "tests" / "helpers" / "openai_server.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def child_env(**extra: str) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE would have every child compile every module again: a user's runs reuse
    # the bytecode their first run wrote, and so does each benchmark after its warm-up (or recording) run.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLMJUDGE_", "PYTEST_")) and k not in CI_VARIABLES and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_API_KEY="sk-local-benchmark", PYTHONHASHSEED="0")
    env.update(extra)
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, check: bool = True) -> dict[str, Any]:
    """Run a command; wall time, CPU time, exit code, output and the child's peak RSS (via wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env or child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if check and proc.returncode not in (0,):
        tail = "\n".join(out.splitlines()[-15:])
        raise RuntimeError(f"{' '.join(cmd[:6])}... exited {proc.returncode} in {cwd}:\n{tail}")
    cpu = usage.ru_utime + usage.ru_stime  # less swayed than wall time by other work on a shared machine
    return {"seconds": seconds, "cpu_s": cpu, "rc": proc.returncode, "out": out, "maxrss_mb": usage.ru_maxrss / 1024}


def pytest_cmd(*args: str) -> list[str]:
    return [PY, "-m", "pytest", "-p", "no:cacheprovider", *args]


def median(values: list[float]) -> float:
    return statistics.median(values)


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    return folder


# -- start-up -------------------------------------------------------------------------------------


def bench_startup(tmp: Path, quick: bool, against: Sequence[Path] = ()) -> dict[str, Any]:
    suite = tmp / "startup"
    for f in range(10):
        write(suite, {f"test_s{f}.py": "\n".join(f"def test_{i}():\n    assert {i} + 1 > {i}\n" for i in range(20))})
    reps = 5 if quick else 15
    on, off = [], []
    # Another checkout's package comes first on the path (with --against), measured in the same rounds.
    others: list[tuple[dict[str, str], list[float], list[float]]] = [
        (child_env(PYTHONPATH=str(d / "src")), [], []) for d in against
    ]
    run(pytest_cmd("--collect-only", "-q"), suite)  # warm the file system and bytecode caches
    run(pytest_cmd("--collect-only", "-q", "-p", "no:llmjudge"), suite)
    for other_env, _, _ in others:
        run(pytest_cmd("--collect-only", "-q"), suite, other_env)  # its bytecode, written once
    for _ in range(reps):  # interleaved, so drift in machine load hits both alike
        on.append(run(pytest_cmd("--collect-only", "-q"), suite)["seconds"])
        off.append(run(pytest_cmd("--collect-only", "-q", "-p", "no:llmjudge"), suite)["seconds"])
        for other_env, other_on, _ in others:
            other_on.append(run(pytest_cmd("--collect-only", "-q"), suite, other_env)["seconds"])
    check = run(
        [
            PY,
            "-c",
            textwrap.dedent("""
        import sys, pytest
        pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"])
        print("LITELLM_IMPORTED", "litellm" in sys.modules, "DISKCACHE_IMPORTED", "diskcache" in sys.modules)
    """),
        ],
        suite,
    )
    importtime_cmd = [PY, "-X", "importtime", "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"]

    def plugin_import_s(env: dict[str, str] | None = None) -> float:
        importtime = run(importtime_cmd, suite, env)
        return (
            sum(
                int(line.split("|")[0].split(":")[1])
                for line in importtime["out"].splitlines()
                if line.startswith("import time:") and "pytest_llmjudge" in line.split("|")[2]
            )
            / 1e6
        )

    plugin_imports = []
    for _ in range(reps):  # one import takes a few ms: the median of several runs, not one noisy sample
        plugin_imports.append(plugin_import_s())
        for other_env, _, other_imports in others:
            other_imports.append(plugin_import_s(other_env))
    imported = "LITELLM_IMPORTED True" in check["out"]
    opened = "DISKCACHE_IMPORTED True" in check["out"]
    other = [
        {
            "checkout": str(d),
            "with_plugin_s": round(median(other_on), 4),
            "ratio": round(median(other_on) / median(off), 4),
            "plugin_modules_import_s": round(median(other_imports), 4),
        }
        for d, (_, other_on, other_imports) in zip(against, others, strict=True)
    ]
    return {
        "tests": 200,
        "repeats": reps,
        "with_plugin_s": round(median(on), 4),
        "without_plugin_s": round(median(off), 4),
        "ratio": round(median(on) / median(off), 4),
        "target": "<= 1.05",
        "best_with_s": round(min(on), 4),
        "best_without_s": round(min(off), 4),
        "best_ratio": round(min(on) / min(off), 4),
        "plugin_modules_import_s": round(median(plugin_imports), 4),
        "plugin_modules_import_range_s": [round(min(plugin_imports), 4), round(max(plugin_imports), 4)],
        "litellm_imported": imported,
        "diskcache_imported": opened,
        **({"against": other} if other else {}),
    }


# -- replay ---------------------------------------------------------------------------------------

SYS_MODULES_CONFTEST = """
import os, sys, time, pytest

CALLS = []

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    start = time.perf_counter()
    try:
        return (yield)
    finally:
        CALLS.append(time.perf_counter() - start)

def pytest_sessionfinish(session):
    marker = os.environ.get("BENCH_MODULES_FILE")
    if marker and not hasattr(session.config, "workerinput"):
        with open(marker, "w") as handle:
            handle.write("litellm=%s diskcache=%s calls=%f" % ("litellm" in sys.modules, "diskcache" in sys.modules, sum(CALLS)))
"""


def bench_replay(
    tmp: Path, quick: bool, server_url: str, pairs: int | None = None, against: Sequence[Path] = ()
) -> dict[str, Any]:
    n = 1000
    judged = write(
        tmp / "replay" / "judged",
        {
            "conftest.py": SYS_MODULES_CONFTEST,
            "test_judged.py": f"""
            import pytest
            from pytest_llmjudge import assert_judged

            @pytest.mark.parametrize("i", range({n}))
            def test_answer(i):
                output = f"Answer {{i}}: returns are accepted within 30 days. SCORE=0.9{{i:03d}}"
                assert_judged(output, "Says returns are accepted within 30 days", threshold=0.7)
        """,
        },
    )
    plain = write(
        tmp / "replay" / "plain",
        {
            "conftest.py": SYS_MODULES_CONFTEST,
            "test_plain.py": f"""
            import pytest

            @pytest.mark.parametrize("i", range({n}))
            def test_answer(i):
                output = f"Answer {{i}}: returns are accepted within 30 days. SCORE=0.9{{i:03d}}"
                assert "30 days" in output
        """,
        },
    )
    live = [f"--judge-model={MODEL}", f"--judge-api-base={server_url}", "--judge-retries=0"]
    started = time.perf_counter()
    run(pytest_cmd("-q", "-n", "2", "--judge-mode=auto", *live), judged)
    record_s = time.perf_counter() - started
    reps = pairs or (3 if quick else 5)
    replay_t: list[float] = []
    replay_calls: list[float] = []
    replay_cpu: list[float] = []
    plain_t, plain_calls, plain_cpu = [], [], []
    marker = tmp / "replay" / "modules.txt"
    env = child_env(BENCH_MODULES_FILE=str(marker))
    # Another checkout's package comes first on the path; the verdict files are the same (keys are pinned).
    timings: list[tuple[dict[str, str], list[float], list[float], list[float]]] = [
        (child_env(BENCH_MODULES_FILE=str(marker), PYTHONPATH=str(d / "src")), [], [], []) for d in against
    ]

    def calls() -> float:
        return float(marker.read_text().split("calls=")[1])

    def replay(into: tuple[list[float], list[float], list[float]], run_env: dict[str, str]) -> None:
        result = run(pytest_cmd("-q", "--judge-mode=replay", *live), judged, run_env)
        assert f"{n} judged, {n} replayed, 0 live" in result["out"], result["out"][-500:]
        into[0].append(result["seconds"])
        into[1].append(result["cpu_s"])
        into[2].append(calls())

    for other_env, *_ in timings:
        run(pytest_cmd("-q", "--judge-mode=replay", *live), judged, other_env)  # its bytecode, written once
    for _ in range(reps):
        replay((replay_t, replay_cpu, replay_calls), env)
        baseline = run(pytest_cmd("-q"), plain, env)
        plain_t.append(baseline["seconds"])
        plain_cpu.append(baseline["cpu_s"])
        plain_calls.append(calls())
        for other_env, other_t, other_cpu, other_calls in timings:
            replay((other_t, other_cpu, other_calls), other_env)
    run(pytest_cmd("-q", "--judge-mode=replay", *live), judged, env)
    modules = marker.read_text()
    # Each replay run is paired with the plain run after it, and the figure is the median of the pairs'
    # differences: a shared machine's speed drifts between runs, and a pair sees the same moment.
    paired = [r - p for r, p in zip(replay_t, plain_t, strict=True)]
    overhead_ms = median(paired) / n * 1000

    def per_judgment(side: list[float], base: list[float]) -> float:
        return round(median([s - b for s, b in zip(side, base, strict=True)]) / n * 1000, 3)

    other = [
        {
            "checkout": str(d),
            "overhead_ms_per_judgment": per_judgment(other_t, plain_t),
            "in_test_ms_per_judgment": per_judgment(other_calls, plain_calls),
            "cpu_overhead_ms_per_judgment": per_judgment(other_cpu, plain_cpu),
        }
        for d, (_, other_t, other_cpu, other_calls) in zip(against, timings, strict=True)
    ]
    return {
        "judged_assertions": n,
        "repeats": reps,
        "record_live_s": round(record_s, 2),
        "replay_s": round(median(replay_t), 3),
        "plain_s": round(median(plain_t), 3),
        "ratio": round(median(replay_t) / median(plain_t), 3),
        "overhead_ms_per_judgment": round(overhead_ms, 3),
        "target": "<= 0.3 ms",
        "best_overhead_ms_per_judgment": round(min(paired) / n * 1000, 3),
        "in_test_ms_per_judgment": round(
            median([r - p for r, p in zip(replay_calls, plain_calls, strict=True)]) / n * 1000, 3
        ),
        "cpu_overhead_ms_per_judgment": round(
            median([r - p for r, p in zip(replay_cpu, plain_cpu, strict=True)]) / n * 1000, 3
        ),
        "litellm_imported_in_replay": "litellm=True" in modules,
        **({"against": other} if other else {}),
    }


# -- suites ---------------------------------------------------------------------------------------

SUITE_TESTS = {
    "ungated": """
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.parametrize("i", range({n}))
        def test_answer(i):
            assert_judged(f"Answer {{i}}: returns within 30 days. SCORE=0.9{{i:03d}}", "Says 30 days", threshold=0.7)
    """,
    "gated": """
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(pass_rate=0.9)
        @pytest.mark.parametrize("i", range({n}))
        def test_answer(i):
            assert_judged(f"Answer {{i}}: returns within 30 days. SCORE=0.9{{i:03d}}", "Says 30 days", threshold=0.7)
    """,
    # Each run's output differs (a counter the replay sees in the same order), as a flaky app's would.
    "repeated": """
        import itertools
        import pytest
        from pytest_llmjudge import assert_judged

        DRAWS = itertools.count()

        @pytest.mark.judge(runs=5)
        @pytest.mark.parametrize("i", range({tests}))
        def test_answer(i):
            draw = next(DRAWS)
            assert_judged(f"Answer {{draw}}: returns within 30 days. SCORE=0.9{{draw:03d}}", "Says 30 days", threshold=0.7)
    """,
}


def bench_suites(tmp: Path, quick: bool, server: Any) -> dict[str, Any]:
    """Replay of the same number of judgments ungated, in one gated group, and as 5 runs of a fifth as many
    tests, in interleaved rounds; and the live calls each records (a gate adds none, runs multiply them)."""
    n = 1000
    live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
    suites = {
        name: write(tmp / "suites" / name, {f"test_{name}.py": text.format(n=n, tests=n // 5)})
        for name, text in SUITE_TESTS.items()
    }
    calls: dict[str, int] = {}
    for name, folder in suites.items():
        before = server.request_count
        run(pytest_cmd("-q", "--judge-mode=auto", *live), folder)  # recorded sequentially: the runs in order
        calls[name] = server.request_count - before
    reps = 3 if quick else 5
    times: dict[str, list[float]] = {name: [] for name in suites}
    for _ in range(reps):
        for name, folder in suites.items():
            result = run(pytest_cmd("-q", "--judge-mode=replay", *live), folder)
            assert f"{n} judged, {n} replayed, 0 live" in result["out"], result["out"][-500:]
            times[name].append(result["seconds"])

    def per_judgment(name: str) -> float:
        return round(median([t - u for t, u in zip(times[name], times["ungated"], strict=True)]) / n * 1000, 3)

    return {
        "judgments": n,
        "repeats": reps,
        "ungated_s": round(median(times["ungated"]), 3),
        "gated_s": round(median(times["gated"]), 3),
        "repeated_s": round(median(times["repeated"]), 3),
        "gated_ms_per_judgment": per_judgment("gated"),
        "repeated_ms_per_judgment": per_judgment("repeated"),
        "calls": calls,
    }


# -- live -----------------------------------------------------------------------------------------

TIMING_CONFTEST = """
import os, sys, time, pytest

def pytest_sessionstart(session):
    # Import LiteLLM before the clock starts (a live run pays it once per process; measured apart).
    import litellm  # noqa: F401

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    start = time.time()
    try:
        return (yield)
    finally:
        with open(os.path.join(os.environ["BENCH_TIMING_DIR"], "t-%d" % os.getpid()), "a") as handle:
            handle.write("%f %f\\n" % (start, time.time()))
"""


def _window(folder: Path) -> float:
    starts, ends = [], []
    for path in folder.glob("t-*"):
        for line in path.read_text().splitlines():
            a, b = line.split()
            starts.append(float(a))
            ends.append(float(b))
    return max(ends) - min(starts)


def bench_live(tmp: Path, quick: bool, latency: float = 0.2) -> dict[str, Any]:
    server_mod = _server_module()
    proc, url = server_mod.serve_in_subprocess(latency_s=latency)
    n = 40 if quick else 100
    reps = 1 if quick else 3
    concurrency = 8
    try:
        suite = write(
            tmp / "live",
            {
                "conftest.py": TIMING_CONFTEST,
                "test_sequential.py": f"""
                import os, pytest
                from pytest_llmjudge import assert_judged

                @pytest.mark.parametrize("i", range({n}))
                def test_one(i):
                    assert_judged(f"run {{os.environ['BENCH_RUN']}} answer {{i}}. SCORE=0.9", "Says returns are accepted", threshold=0.7)
            """,
                "test_many.py": f"""
                import os

                def test_score_many(judge):
                    cases = [(f"run {{os.environ['BENCH_RUN']}} answer {{i}}. SCORE=0.9", "Says returns are accepted") for i in range({n})]
                    verdicts = judge.score_many(cases)
                    assert len(verdicts) == {n} and all(v.source == "live" for v in verdicts)
            """,
            },
        )
        args = [
            f"--judge-model={MODEL}",
            f"--judge-api-base={url}",
            "--judge-retries=0",
            "--judge-mode=live",
            f"--judge-concurrency={concurrency}",
        ]
        variants: dict[str, tuple[list[str], int]] = {
            "sequential": (["test_sequential.py"], 1),
            "score_many": (["test_many.py"], concurrency),
            "xdist_n4": (["test_sequential.py", "-n", "4"], 4),
        }
        results: dict[str, Any] = {"judgments": n, "server_latency_s": latency, "repeats": reps}
        for name, (extra, parallel) in variants.items():
            windows, walls = [], []
            for rep in range(reps):
                timing = Path(tempfile.mkdtemp(dir=tmp))
                env = child_env(BENCH_TIMING_DIR=str(timing), BENCH_RUN=f"{name}-{rep}-{time.time()}")
                result = run(pytest_cmd("-q", *args, *extra), suite, env)
                assert f"{n} judged, 0 replayed, {n} live" in result["out"], result["out"][-800:]
                windows.append(_window(timing))
                walls.append(result["seconds"])
            ideal = n * latency / parallel
            results[name] = {
                "concurrency": parallel,
                "ideal_s": round(ideal, 3),
                "judging_s": round(median(windows), 3),
                "ratio_to_ideal": round(median(windows) / ideal, 3),
                "pytest_wall_s": round(median(walls), 3),
                "per_judgment_ms": round(median(windows) / n * 1000, 1),
            }
        results["target"] = "ratio_to_ideal <= 1.5"
        return results
    finally:
        server_mod.stop_subprocess(proc)


# -- memory ---------------------------------------------------------------------------------------


def bench_memory(tmp: Path, quick: bool) -> dict[str, Any]:
    tests, per_test = (200, 10) if quick else (1000, 10)
    conftest = """
        import json, re, pytest

        @pytest.fixture(scope="session")
        def judge_backend():
            def fake(messages):
                score = float(re.search(r"SCORE=([0-9.]+)", messages[-1]["content"]).group(1))
                return json.dumps({"reasoning": "fake judge", "score": score})
            fake.name = "fake-judge"
            return fake
    """
    body = f"""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.parametrize("i", range({tests}))
        def test_answer(i):
            for j in range({per_test}):
                output = f"Answer {{i}}.{{j}}: returns are accepted within 30 days. SCORE=0.9"
                {{judge}}
    """
    judged = write(
        tmp / "memory" / "judged",
        {
            "conftest.py": conftest,
            "test_mem.py": body.replace(
                "{judge}", 'assert_judged(output, "Says returns are accepted within 30 days", threshold=0.7)'
            ),
        },
    )
    plain = write(
        tmp / "memory" / "plain",
        {"conftest.py": conftest, "test_mem.py": body.replace("{judge}", 'assert "30 days" in output')},
    )
    started = time.perf_counter()
    run(pytest_cmd("-q", "-n", "2", "--judge-mode=auto"), judged)
    record_s = time.perf_counter() - started
    stored = sum(len(json.loads(p.read_text())["verdicts"]) for p in judged.rglob("judge_verdicts/**/*.json"))
    replay = run(pytest_cmd("-q", "--judge-mode=replay"), judged)
    assert f"{stored} judged, {stored} replayed" in replay["out"], replay["out"][-500:]
    baseline = run(pytest_cmd("-q"), plain)
    return {
        "stored_verdicts": stored,
        "record_s": round(record_s, 2),
        "replay_peak_rss_mb": round(replay["maxrss_mb"], 1),
        "plain_peak_rss_mb": round(baseline["maxrss_mb"], 1),
        "extra_mb": round(replay["maxrss_mb"] - baseline["maxrss_mb"], 1),
        "replay_s": round(replay["seconds"], 2),
        "plain_s": round(baseline["seconds"], 2),
    }


# -- parser (a colleague's benchmark) ------------------------------------------------------------


def bench_parser(tmp: Path, quick: bool) -> dict[str, Any]:
    script = BENCH / "bench_parser.py"
    if not script.exists():
        return {"skipped": "benchmarks/bench_parser.py is not there yet"}
    result = run([PY, str(script), "--json"], ROOT, check=False)
    try:
        data = json.loads(result["out"][result["out"].index("{") :])
    except ValueError:
        return {"skipped": f"bench_parser.py printed no JSON: {result['out'][:200]}"}
    adversarial = data.get("adversarial") or {}
    return {
        "replies_per_second": data.get("replies_per_second"),
        "corpus_accuracy": data.get("accuracy"),
        "adversarial_1mb_s": {name: row.get("seconds") for name, row in adversarial.items()},
        "worst_1mb_s": max((row.get("seconds") or 0 for row in adversarial.values()), default=None),
    }


# -- peer: DeepEval ---------------------------------------------------------------------------------


def bench_peer(tmp: Path, quick: bool, live: dict[str, Any] | None) -> dict[str, Any]:
    peer = Path(os.environ.get("PEER_PYTHON") or "peer-venv/bin/python")  # a venv of its own, beside the checkout
    ours_import = run([PY, "-X", "importtime", "-c", "import pytest_llmjudge"], ROOT)
    litellm_import = [
        run([PY, "-c", "import time; t=time.perf_counter(); import litellm; print('T', time.perf_counter()-t)"], ROOT)
        for _ in range(1 if quick else 3)
    ]
    ours = {
        "import_pytest_llmjudge_s": round(_importtime_total(ours_import["out"], "pytest_llmjudge"), 3),
        "import_litellm_s (first live call pays it)": round(median([_t(r["out"]) for r in litellm_import]), 3),
    }
    if live and "sequential" in live:
        ours["per_judgment_s (sequential, 0.2 s server)"] = round(live["sequential"]["per_judgment_ms"] / 1000, 3)
    ours["replay_offline"] = "yes: the committed verdict file, no network, LiteLLM not imported (see replay)"
    if not peer.exists():
        return {
            "ours": ours,
            "deepeval": {"skipped": f"no peer interpreter at {peer} (set PEER_PYTHON to a venv with deepeval)"},
        }
    probe = run([str(peer), "-c", "import deepeval"], tmp, check=False)
    if probe["rc"] != 0:
        return {"ours": ours, "deepeval": {"skipped": f"deepeval not importable with {peer}"}}
    server_mod = _server_module()
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(BENCH) + (os.pathsep + old if old else "")  # the server child imports peer_responder
    try:
        proc, url = server_mod.serve_in_subprocess("peer_responder:both", latency_s=0.2)
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    try:
        work = Path(tempfile.mkdtemp(dir=tmp))
        n = 3 if quick else 10
        result = run(
            [str(peer), str(BENCH / "peer_deepeval.py"), url, str(n)],
            work,
            child_env(DEEPEVAL_TELEMETRY_OPT_OUT="YES"),
            check=False,
        )
        line = next((ln for ln in result["out"].splitlines() if ln.startswith("PEER_JSON ")), None)
        if line is None:
            return {"ours": ours, "deepeval": {"skipped": "peer script failed: " + result["out"][-300:]}}
        theirs = json.loads(line[len("PEER_JSON ") :])
        theirs["process_wall_s"] = round(result["seconds"], 2)
        return {"ours": ours, "deepeval": theirs}
    finally:
        server_mod.stop_subprocess(proc)


def _importtime_total(out: str, module: str) -> float:
    for line in out.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1]) / 1e6
    return float("nan")


def _t(out: str) -> float:
    return float(next(ln for ln in out.splitlines() if ln.startswith("T ")).split()[1])


# -- main -------------------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> None:
    def line(text: str) -> None:
        print(text)

    s = results.get("startup")
    if s:
        line(
            f"start-up   pytest --collect-only -q, {s['tests']} tests, median of {s['repeats']}: "
            f"{s['with_plugin_s']:.3f} s with the plugin, {s['without_plugin_s']:.3f} s without: ratio {s['ratio']:.3f} "
            f"(target {s['target']}); best of {s['repeats']}: ratio {s['best_ratio']:.3f}; the plugin's own modules import in "
            f"{s['plugin_modules_import_s'] * 1000:.1f} ms (median; {s['plugin_modules_import_range_s'][0] * 1000:.1f}-"
            f"{s['plugin_modules_import_range_s'][1] * 1000:.1f} ms); litellm imported: {s['litellm_imported']}, diskcache imported: {s['diskcache_imported']}"
        )
        for o in s.get("against", ()):
            line(
                f"           {o['checkout']}, in the same rounds: {o['with_plugin_s']:.3f} s with the plugin (ratio "
                f"{o['ratio']:.3f}); its modules import in {o['plugin_modules_import_s'] * 1000:.1f} ms (median)"
            )
    r = results.get("replay")
    if r:
        line(
            f"replay     {r['judged_assertions']} judged assertions, median of {r['repeats']}: {r['replay_s']:.2f} s replayed vs "
            f"{r['plain_s']:.2f} s plain asserts (x{r['ratio']:.2f}): {r['overhead_ms_per_judgment']:.3f} ms overhead per judgment, "
            f"the median of {r['repeats']} side-by-side pairs (target {r['target']}; smallest pair: {r['best_overhead_ms_per_judgment']:.3f} ms; inside the test body alone "
            f"{r['in_test_ms_per_judgment']:.3f} ms; CPU time {r['cpu_overhead_ms_per_judgment']:.3f} ms); litellm imported: {r['litellm_imported_in_replay']}  [recording took {r['record_live_s']:.1f} s, -n 2]"
        )
        for o in r.get("against", ()):
            line(
                f"           {o['checkout']}, in the same pairs: {o['overhead_ms_per_judgment']:.3f} ms overhead per "
                f"judgment (inside the test body {o['in_test_ms_per_judgment']:.3f} ms; CPU time {o['cpu_overhead_ms_per_judgment']:.3f} ms)"
            )
    u = results.get("suites")
    if u:
        line(
            f"suites     {u['judgments']} judgments replayed, median of {u['repeats']} rounds: in a gated group "
            f"{u['gated_ms_per_judgment']:+.3f} ms per judgment, as runs=5 of 200 tests {u['repeated_ms_per_judgment']:+.3f} ms "
            f"per judgment, against the same judgments ungated ({u['ungated_s']:.2f} s); live calls to record: "
            f"{u['calls']['ungated']} ungated, {u['calls']['gated']} gated, {u['calls']['repeated']} repeated; "
            f"every replay 0"
        )
    v = results.get("live")
    if v:
        for name in ("sequential", "score_many", "xdist_n4"):
            x = v[name]
            line(
                f"live       {v['judgments']} judgments @ {v['server_latency_s']:.1f} s, {name:10s} (concurrency {x['concurrency']}): "
                f"{x['judging_s']:.2f} s judging vs ideal {x['ideal_s']:.2f} s = x{x['ratio_to_ideal']:.2f} "
                f"(target <= 1.5); whole pytest run {x['pytest_wall_s']:.2f} s"
            )
    m = results.get("memory")
    if m:
        line(
            f"memory     replay of {m['stored_verdicts']} stored verdicts: peak RSS {m['replay_peak_rss_mb']:.0f} MB "
            f"(same suite with plain asserts {m['plain_peak_rss_mb']:.0f} MB, +{m['extra_mb']:.0f} MB); {m['replay_s']:.1f} s vs {m['plain_s']:.1f} s"
        )
    p = results.get("parser")
    if p:
        if "skipped" in p:
            line(f"parser     skipped: {p['skipped']}")
        else:
            line(
                f"parser     {p['replies_per_second']:,.0f} replies/s over the corpus (accuracy {p['corpus_accuracy']}); "
                f"worst 1 MB adversarial reply {p['worst_1mb_s']:.3f} s"
            )
            for name, secs in p["adversarial_1mb_s"].items():
                line(f"             {name:28s} {secs:.3f} s")
    q = results.get("peer")
    if q:
        ours, theirs = q["ours"], q["deepeval"]
        line("peer       pytest-llmjudge: " + ", ".join(f"{k} {v}" for k, v in ours.items()))
        if "skipped" in theirs:
            line(f"           deepeval: skipped: {theirs['skipped']}")
        else:
            cache = theirs.get("cache") or {}
            line(
                f"           deepeval {theirs.get('version')}: import {theirs.get('import_s')} s; assert_test + GEval "
                f"{theirs.get('per_judgment_s')} s per judgment over {theirs.get('judgments')} (0.2 s server); errors {theirs.get('errors') or 'none'}"
            )
            line(
                f"           deepeval cache (evaluate(cache_config=use_cache)) replayed with the server gone: "
                f"{cache.get('replayed_offline')} ({cache.get('detail')}); assert_test itself has no cache"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    parser.add_argument("--only", help="comma-separated: startup,replay,suites,live,memory,parser,peer")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    parser.add_argument("--keep", action="store_true", help="keep the generated suites (printed path)")
    parser.add_argument(
        "--replay-pairs", type=int, metavar="N", help="replay: N side-by-side pairs of runs (default 5, 3 with --quick)"
    )
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="startup, replay: also run another checkout's src/ (DIR; repeatable) in each round, side by side",
    )
    args = parser.parse_args(argv)
    against = [d.resolve() for d in args.against]
    for d in against:
        if not (d / "src" / "pytest_llmjudge").is_dir():
            parser.error(f"--against: {d} holds no src/pytest_llmjudge")
    chosen = set((args.only or "startup,replay,suites,live,memory,parser,peer").split(","))
    tmp = Path(tempfile.mkdtemp(prefix="llmjudge-bench-"))
    results: dict[str, Any] = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "quick": args.quick}
    started = time.perf_counter()
    steps: list[tuple[str, Callable[[], dict[str, Any]]]] = []
    server_mod = _server_module()
    server = server_mod.OpenAIServer().start() if chosen & {"replay", "suites"} else None
    try:
        steps = [
            ("startup", lambda: bench_startup(tmp, args.quick, against)),
            ("replay", lambda: bench_replay(tmp, args.quick, server.base_url, args.replay_pairs, against)),  # type: ignore[union-attr]
            ("suites", lambda: bench_suites(tmp, args.quick, server)),
            ("live", lambda: bench_live(tmp, args.quick)),
            ("memory", lambda: bench_memory(tmp, args.quick)),
            ("parser", lambda: bench_parser(tmp, args.quick)),
            ("peer", lambda: bench_peer(tmp, args.quick, results.get("live"))),
        ]
        for name, step in steps:
            if name not in chosen:
                continue
            t = time.perf_counter()
            print(f"[{name}] running...", file=sys.stderr, flush=True)
            try:
                results[name] = step()
            except Exception as exc:  # noqa: BLE001 - one failed benchmark should not hide the others
                results[name + "_error"] = f"{type(exc).__name__}: {exc}"
                print(f"[{name}] FAILED: {exc}", file=sys.stderr)
            print(f"[{name}] {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    finally:
        if server is not None:
            server.stop()
        if args.keep:
            print(f"suites kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    results["total_s"] = round(time.perf_counter() - started, 1)
    print()
    print(
        f"pytest-llmjudge benchmarks (python {results['python']}, {results['cpus']} CPUs{', --quick' if args.quick else ''}; "
        f"{results['total_s']:.0f} s in all)"
    )
    report(results)
    for key in [k for k in results if k.endswith("_error")]:
        print(f"{key[:-6]:10s} FAILED: {results[key]}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 1 if any(k.endswith("_error") for k in results) else 0


if __name__ == "__main__":
    sys.exit(main())
