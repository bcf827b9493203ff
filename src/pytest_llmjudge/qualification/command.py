"""`llmjudge qualify`: judge public human-labelled pairs, in both orders, and say whether the judge can be trusted.

    llmjudge qualify [--quick] [--data PATH ...] [--criteria TEXT] [--template FILE [--answer scores]]
                     [--min-accuracy X] [--min-position-consistency X] [--max-length-gap X]
                     [--max-unreadable X] [--min-kappa X] [--json PATH] [--judge-* ...]

Takes the same `--judge-*` options, environment and ini file as a pytest run in the same folder, CI detection
included (so on CI it replays).  The judge's replies are recorded in `qualification/<subset>.json` under
`judge_verdicts/` at the rootdir (or under `--judge-store`): commit them, and CI re-checks the qualification
offline.  Exit status: 0 the judge meets every bar, 1 it does not (the report names the figures that fell
short), 2 bad input (a bad option or pairs file, a replay miss, an unreachable judge), on one line of stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import JudgeError, command_error, first_line
from ..redact import redact_value
from ..settings import SettingError
from .figures import Thresholds

# Each bar's option, the Thresholds field it sets, and what it protects against (its --help).
BARS: tuple[tuple[str, str, str], ...] = (
    ("--min-accuracy", "min_accuracy", "the least accuracy over every pair judged"),
    (
        "--min-position-consistency",
        "min_position_consistency",
        "the least share of pairs given the same winner in both orders",
    ),
    ("--max-length-gap", "max_length_gap", "the most accuracy may differ between better-is-longer and -shorter pairs"),
    ("--max-unreadable", "max_unreadable", "the most answers whose reply held no verdict"),
    ("--min-kappa", "min_kappa", "the least Cohen's kappa with MT-Bench's human votes"),
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `qualify` to the `llmjudge` subcommands (`subparsers` from `add_subparsers`)."""
    from ..standalone import add_judge_options

    defaults = Thresholds()
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "qualify",
        help="qualify the judge on public human-labelled pairs: accuracy, position and length bias (see --help)",
        description=(__doc__ or "").split("\n\n")[0],
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="judge 10 pairs of each subset, spread evenly over it (80 answers of the bundled sets) instead of all",
    )
    parser.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="PATH",
        help='a further JSON file of pairs, [{"input", "output_1", "output_2", "label": 1 or 2}, ...] '
        "(e.g. your copy of LLMBar's Natural set); repeat for more",
    )
    parser.add_argument("--criteria", metavar="TEXT", help="what the judge compares the outputs by (default: see docs)")
    parser.add_argument(
        "--template",
        metavar="FILE",
        help="your own comparison prompt (a Pairwise template with {response_a} and {response_b}), as your tests use",
    )
    parser.add_argument(
        "--answer",
        choices=("labels", "scores"),
        default="labels",
        help="what your template asks the judge for: a verdict label (default) or one score per response",
    )
    for flag, field, what in BARS:
        default = getattr(defaults, field)
        shown = "off" if default is None else f"{default:g}"
        parser.add_argument(flag, metavar="X", dest=field, help=f"{what} (default {shown}; off: not checked)")
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH (-: print it instead)")
    add_judge_options(parser.add_argument_group("judge options (as for pytest)"))
    parser.set_defaults(run=run)
    return parser


def thresholds_of(args: argparse.Namespace) -> Thresholds:
    """The bars the options give (the defaults where none is given; `off` drops a bar)."""
    from .pairs import QualificationError

    given: dict[str, float | None] = {}
    for flag, field, _ in BARS:
        raw = getattr(args, field)
        if raw is None:
            continue
        if raw.strip().lower() in ("off", "none"):
            given[field] = None
            continue
        try:
            given[field] = float(raw)
        except ValueError:
            raise QualificationError(f"{flag} takes a number (or off), got {raw!r}") from None
    try:
        return Thresholds(**given)
    except QualificationError as exc:
        message = str(exc)
        for flag, field, _ in BARS:
            message = message.replace(field, flag, 1) if message.startswith(field) else message
        raise QualificationError(message) from None


def run(args: argparse.Namespace) -> int:
    """Run `qualify` with parsed arguments: print the report; 0 qualified, 1 not, 2 on an error."""
    from ..reporting.progress import Progress
    from ..reporting.qualification import render
    from ..rubrics.pairwise import Pairwise
    from ..standalone import command_runtime, judge_cli_values, load_settings
    from .pairs import QualificationError, bundled_subsets, load_pairs, quick
    from .runner import PairError, judges_for, qualify

    try:
        thresholds = thresholds_of(args)
        rubric = None
        if args.template is not None:
            rubric = Pairwise(_read_template(args.template), answer=args.answer)
        elif args.answer != "labels":
            raise QualificationError("--answer describes your template: pass --template FILE with it")
        config = load_settings(judge_cli_values(args))
        subsets = bundled_subsets()
        for path in args.data:
            subsets.append(load_pairs(path, [s.name for s in subsets]))
        if args.quick:
            subsets = [quick(s) for s in subsets]
        total = 2 * sum(len(s.pairs) for s in subsets)
        progress = Progress(total, "answers", sys.stderr, shown=Progress.wanted(sys.stderr))
        try:
            with command_runtime(config) as runtime:
                report = qualify(
                    runtime,
                    subsets,
                    judges_for(runtime),
                    thresholds,
                    criteria=args.criteria,
                    rubric=rubric,
                    quick=args.quick,
                    progress=progress.advance,
                )
        finally:
            progress.close()
    except PairError as exc:
        hint = "; record it with a reachable judge: llmjudge qualify --judge-mode=auto" if exc.kind == "missing" else ""
        return command_error("qualify", f"{exc}{hint}")
    except QualificationError as exc:
        problems = exc.problems
        if len(problems) > 1:  # one line: the first problem, and how many more
            return command_error("qualify", f"{problems[0]} (and {len(problems) - 1} more problems)")
        return command_error("qualify", first_line(exc))
    except (JudgeError, SettingError) as exc:
        return command_error("qualify", first_line(exc))
    document = json.dumps(redact_value(report.to_json()), indent=2, sort_keys=True, ensure_ascii=False)
    if args.json == "-":
        print(document)
    else:
        print(render(report))
        if args.json:
            try:
                Path(args.json).write_text(document + "\n", encoding="utf-8")
            except OSError as exc:
                return command_error("qualify", f"cannot write {args.json} ({exc.strerror or exc})")
    return 0 if report.qualified else 1


TEMPLATE_BYTES = 1 << 20  # a comparison prompt is text a judge reads: a larger file is not one


def _read_template(path: str) -> str:
    from ..store.verdict_file import read_regular_file
    from .pairs import QualificationError

    try:
        return read_regular_file(path, TEMPLATE_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise QualificationError(f"{path}: cannot read the template ({reason})") from None
