"""`llmjudge calibrate FILE`: judge labelled examples and print how far the judge agrees with them.

    llmjudge calibrate labels.jsonl [--judge-model MODEL ...] [--threshold T] [--json]

Takes the same `--judge-*` options, environment and ini file as a pytest run in the same folder,
CI detection included (so on CI it replays).  Its verdicts live in their own file,
`judge_verdicts/calibration/<file stem>.json` under the rootdir (or under `--judge-store`): commit
it, and CI re-checks the figures offline.  Errors (a bad row, a replay miss, a bad option) are one
line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import JudgeError, command_error, first_line
from ..options import OPTIONS_BY_NAME
from ..redact import redact
from ..settings import SettingError, read
from .assertion import disagreement_lines, figures_lines, number_text
from .stats import CalibrationResult

COMMAND = "calibration"  # names the folder of the command's verdict files


# -- text ------------------------------------------------------------------------------------------


def render(result: CalibrationResult, *, title: str | None = None) -> str:
    """The whole text report: figures, per-criteria figures, and every disagreement (one block each)."""
    kind = f"{result.kind} labels" if result.kind else "no labels"
    lines = [f"{title + ': ' if title else ''}{result.n} examples ({kind}), threshold {result.threshold:.2f}", ""]
    lines += figures_lines(result)
    if len(result.per_criteria) > 1:
        rho = result.kind == "score"
        header = f"  {'n':>4}  {'accuracy':>8}  {'kappa':>6}" + (f"  {'rho':>5}" if rho else "")
        lines += ["", "per criteria:", f"{header}  criteria"]
        for figures in result.per_criteria:
            first = redact(figures.criteria.strip()).splitlines()[0] if figures.criteria.strip() else ""
            cells = f"  {figures.n:>4}  {number_text(figures.accuracy):>8}  {number_text(figures.kappa.value):>6}"
            if rho:
                cells += f"  {number_text(figures.spearman):>5}"
            lines.append(f"{cells}  {first[:80]}")
    lines += ["", f"disagreements: {len(result.disagreements)}"]
    for item in result.disagreements:
        lines += ["", *(f"  {line}" for line in disagreement_lines(item))]
    return "\n".join(lines)


# -- the command -------------------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `calibrate` to the `llmjudge` subcommands (`subparsers` from `add_subparsers`)."""
    from ..standalone import add_judge_options

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "calibrate",
        help="judge human-labelled examples and report how far the judge agrees (kappa, accuracy, ...)",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("file", metavar="FILE", help="labelled examples: .jsonl (or .ndjson) or .csv")
    parser.add_argument(
        "--threshold",
        metavar="T",
        default=None,
        help="the score a judgment needs to pass, in [0, 1] (default: --judge-threshold, as pytest resolves it)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    add_judge_options(parser.add_argument_group("judge options (as for pytest)"))
    parser.set_defaults(run=run)
    return parser


def _threshold(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        return float(read(OPTIONS_BY_NAME["threshold"], raw))
    except SettingError as exc:
        raise SettingError(str(exc).replace("--judge-threshold", "--threshold")) from None


def run(args: argparse.Namespace) -> int:
    """Run `calibrate` with parsed arguments: print the report (or its JSON); 0, or 2 on an error."""
    from ..standalone import command_context, judge_cli_values, load_settings
    from .examples import CalibrationError, load_examples
    from .runner import ExampleError, run_calibration

    try:
        threshold = _threshold(args.threshold)
        config = load_settings(judge_cli_values(args))
        examples = load_examples(args.file)
        with command_context(COMMAND, args.file, config) as session:
            result = run_calibration(examples, judge=session.judge(), threshold=threshold, source=args.file)
    except ExampleError as exc:
        hint = ""
        if exc.kind == "missing":
            hint = f"; record it with a reachable judge: llmjudge calibrate {args.file} --judge-mode=auto"
        return command_error("calibrate", f"{exc}{hint}")
    except CalibrationError as exc:
        problems = exc.problems
        if len(problems) > 1:  # one line: the first problem, and how many more
            return command_error("calibrate", f"{problems[0]} (and {len(problems) - 1} more bad rows)")
        return command_error("calibrate", str(exc))
    except (JudgeError, SettingError) as exc:
        return command_error("calibrate", first_line(exc))
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
    else:
        print(render(result, title=str(args.file)))
    return 0
