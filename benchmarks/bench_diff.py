"""What `llmjudge diff` costs on a large store: 1,000 verdict files at a revision against the working tree.

    python benchmarks/bench_diff.py                 # 1,000 files, median of 5 runs
    python benchmarks/bench_diff.py --files 5000 --repeats 3 --json out.json

A git repository is made in a temporary folder with N verdict files (one test each, one judgment with
its outcome, about 1 KB, as the plugin writes them), committed; then a tenth of them are changed in the
working tree (another output and score).  Measured, each the median of the repeats:

  diff       `python -m pytest_llmjudge diff HEAD` in a fresh process, whole (start-up, both sides, text out)
  revision   reading the revision's side alone in this process (one `git ls-tree`, one `git cat-file --batch`)
  worktree   reading the working tree's side alone in this process
  per file   what one `git show REV:path` per file would take to fetch the same bytes (not what the diff does)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def verdict_file(i: int, changed: bool) -> str:
    """One test's verdict file as the plugin writes it: one judgment, its entry and its outcome."""
    output = f"Answer {i}: returns are accepted within {30 if not changed else 14} days."
    score = 0.9 if not changed else 0.2
    k = key(f"{i}:{output}")
    entry = {
        "criteria": "Says returns are accepted within 30 days",
        "key_version": 2,
        "messages_sha256": key(output),
        "model": "openai/gpt-4o-mini",
        "output": output,
        "params": {"temperature": 0.0},
        "reasoning": f"The answer gives a {30 if not changed else 14}-day window.",
        "reply": json.dumps({"reasoning": "...", "score": score}),
        "rubric": "score",
        "sample": 0,
        "score": score,
    }
    outcome = {
        "criteria": entry["criteria"],
        "passed": score >= 0.7,
        "rubric": "score",
        "score": score,
        "threshold": 0.7,
    }
    document = {
        "format": 1,
        "outcomes": {k: outcome},
        "test": f"tests/test_m{i // 50}.py::test_{i}",
        "verdicts": {k: entry},
    }
    return json.dumps(document, sort_keys=True, indent=2) + "\n"


def make_repo(root: Path, files: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=ENV, check=True)
    for i in range(files):
        path = root / "tests" / "judge_verdicts" / f"test_m{i // 50}" / f"test_{i}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(verdict_file(i, changed=False))
    subprocess.run(["git", "add", "-A"], cwd=root, env=ENV, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "recorded"], cwd=root, env=ENV, check=True)
    for i in range(0, files, 10):  # a tenth changed in the working tree
        path = root / "tests" / "judge_verdicts" / f"test_m{i // 50}" / f"test_{i}.json"
        path.write_text(verdict_file(i, changed=True))


def timed(action: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()

    from pytest_llmjudge.diff.git import Repository
    from pytest_llmjudge.diff.sides import revision_side, worktree_side

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_repo(root, args.files)
        env = {**ENV, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

        def whole() -> None:
            done = subprocess.run([sys.executable, "-m", "pytest_llmjudge", "diff", "HEAD"], cwd=root, env=env,
                                  capture_output=True, text=True, check=True)  # fmt: skip
            assert f"{args.files // 10} regressed" in done.stdout, done.stdout[:500]

        repo = Repository(root)
        commit = repo.commit("HEAD")
        paths = [b.path for b in repo.files(commit)]

        def per_file() -> None:
            for path in paths:
                subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, env=ENV, capture_output=True, check=True)

        results = {
            "files": args.files,
            "repeats": args.repeats,
            "diff_s": timed(whole, args.repeats),
            "revision_s": timed(lambda: revision_side(repo, commit, "HEAD", []), args.repeats),
            "worktree_s": timed(lambda: worktree_side(repo, []), args.repeats),
            "per_file_git_show_s": timed(per_file, 1),
        }
    for name, value in results.items():
        print(f"{name:>22}: {value:.3f}" if isinstance(value, float) else f"{name:>22}: {value}")
    print(f"{'batch vs per file':>22}: {results['per_file_git_show_s'] / results['revision_s']:.0f}x faster")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
