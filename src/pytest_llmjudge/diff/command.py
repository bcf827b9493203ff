"""`llmjudge diff [BASE] [PATH...]`: what a branch did to its judgments, from the committed verdict files.

    llmjudge diff                      the merge base with the default branch (else HEAD) -> the working tree
    llmjudge diff origin/main tests    only the verdict files under tests/
    llmjudge diff HEAD~1 --format markdown --fail-on regression

No judge is called and nothing is run: both sides are read from the store.  Exit status 0; 1 with
`--fail-on regression` when there is one (see `diff.compare`); 2 on bad input (no git, not a
repository, an unknown revision, a file that is not a verdict file), with a one-line reason.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `diff` to the `llmjudge` subcommands (`subparsers` from `add_subparsers`)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "diff",
        help="compare the verdicts stored at a git revision with the working tree's: flips, scores, pass rates",
        description="Compare the judgments stored at a git revision (default: the merge base with the default "
        "branch, else HEAD) with those in the working tree: each judgment's score before and after, pass-to-fail "
        "and fail-to-pass flips, judgments added and removed, a short diff of a changed output and the reasoning "
        "that changed; per test and per gated group the pass rate with its Wilson interval and an exact McNemar "
        "test on the flips. Reads the committed verdict files only: no judge is called.",
    )
    parser.add_argument("base", nargs="?", metavar="BASE", help="the revision to compare with (default: see above)")
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or directories holding verdict files (default: the repository)"
    )
    parser.add_argument(
        "--format", choices=("text", "markdown", "json"), default="text", help="how to print it (default text)"
    )
    parser.add_argument(
        "--fail-on",
        choices=("regression",),
        metavar="regression",
        help="exit 1 when a judgment outside a gated group went from pass to fail, or a group's pass rate "
        "dropped significantly",
    )
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Print the diff; the exit status (see the module docstring)."""
    from ..cli import CliError
    from ..errors import StoreError
    from ..reporting.diff import render_json, render_markdown, render_text
    from .compare import compare
    from .git import GitError, Repository
    from .sides import revision_side, worktree_side

    fail_on = args.fail_on == "regression"
    try:
        repo = Repository(Path.cwd())
        paths = [repo.relative(Path(p)) for p in args.paths]
        if args.base is None:
            base, named = repo.default_base()
        else:
            base, named = args.base, args.base
        commit = repo.commit(base)
        before = revision_side(repo, commit, named if args.base is not None else commit[:12], paths)
        after = worktree_side(repo, paths)
    except (GitError, StoreError) as exc:
        raise CliError(" ".join(str(exc).split())) from None
    result = compare(before, after, base=named, base_commit=commit)
    if args.format == "json":
        text = render_json(result)
    elif args.format == "markdown":
        text = render_markdown(result, regressions=fail_on)
    else:
        text = render_text(result, regressions=fail_on) + "\n"
    sys.stdout.write(text)
    return 1 if fail_on and result.regressions() else 0
