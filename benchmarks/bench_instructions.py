"""Replay overhead in CPU instructions: a figure that does not move with the machine's load.

    python benchmarks/bench_instructions.py            # 200 judgments (about 3 minutes)
    python benchmarks/bench_instructions.py --n 100

Wall-clock overhead per judgment (`run_all.py --only replay`) swings by a third on a shared
machine; an instruction count under valgrind does not.  Four pytest runs are counted: N replayed
judgments, N plain asserts, and one of each.  From them:

  fixed     what a run that judges once pays over one that never judges (imports, settings, the
            end-of-run summary): (judged_1 - plain_1)
  marginal  what each further judgment pays: ((judged_N - judged_1) - (plain_N - plain_1)) / (N - 1)

Every output differs (as in `run_all.py`), and so does every reply: a suite of one reply repeated
would measure a parse memo, not the parse.

Instructions are not seconds (cache misses and system calls are not in them), so the wall-clock
benchmark stays the measure of the target; this one tells whether a change made the work smaller.
Needs valgrind on PATH (exits 2 without it).  The suites are recorded first against the local
OpenAI-compatible server of tests/helpers/openai_server.py, then replayed offline.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_all import MODEL, _server_module, child_env, pytest_cmd, run, write

JUDGED = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("i", range({n}))
def test_answer(i):
    output = f"Answer {{i}}: returns are accepted within 30 days. SCORE=0.9{{i:03d}}"
    assert_judged(output, "Says returns are accepted within 30 days", threshold=0.7)
"""

PLAIN = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_answer(i):
    output = f"Answer {{i}}: returns are accepted within 30 days. SCORE=0.9{{i:03d}}"
    assert "30 days" in output
"""

_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(cmd: list[str], cwd: Path) -> int:
    """The instructions valgrind counted for `cmd` (run once before, so the bytecode is cached)."""
    run(cmd, cwd)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        cwd=cwd,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"valgrind run failed in {cwd}:\n{done.stdout[-800:]}\n{done.stderr[-800:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="judgments in the larger suite (default 200)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing to count", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="llmjudge-instructions-"))
    server = _server_module().OpenAIServer().start()
    live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
    replay = pytest_cmd("-q", "--judge-mode=replay", *live)
    counts: dict[str, int] = {}
    try:
        for n in (args.n, 1):
            judged = write(tmp / f"judged_{n}", {"test_judged.py": JUDGED.format(n=n)})
            plain = write(tmp / f"plain_{n}", {"test_plain.py": PLAIN.format(n=n)})
            run(pytest_cmd("-q", "--judge-mode=auto", *live), judged)  # record; replay mode never calls it
            counts[f"judged_{n}"] = instructions(replay, judged)
            counts[f"plain_{n}"] = instructions(pytest_cmd("-q"), plain)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    n = args.n
    fixed = counts["judged_1"] - counts["plain_1"]
    marginal = ((counts[f"judged_{n}"] - counts["judged_1"]) - (counts[f"plain_{n}"] - counts["plain_1"])) / (n - 1)
    figures = {**counts, "fixed": fixed, "marginal_per_judgment": round(marginal)}
    print(
        f"replay, in instructions: {fixed / 1e6:.0f} M fixed (a run that judges once, over one that never judges), "
        f"{marginal / 1e3:.0f} k per further judgment; per judgment over 1000 judgments: "
        f"{(fixed / 1000 + marginal) / 1e3:.0f} k"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
