"""`llmjudge` / `python -m pytest_llmjudge`: a small CLI over the committed verdict files.

    llmjudge stats   [PATH...]             counts per model and test module; unparseable replies
    llmjudge reparse [PATH...] [--write]   run the current parser over every stored reply
    llmjudge show KEY [PATH...]            one stored judgment in full (a key prefix will do)
    llmjudge diff [BASE] [PATH...]         the judgments at a git revision against the working tree's
    llmjudge prune [--dry-run]             remove verdicts the last full run did not use
    llmjudge prune --manifest A --manifest B   ... that none of several runs (shards) used
    llmjudge merge %O %A %B                git merge driver: verdict files merge by key
    llmjudge merge --install               install that driver (.gitattributes, git config)
    llmjudge questions --spec FILE         the judge model writes assessment questions (see --help)
    llmjudge doctor [--judge-* ...]        check the configured judge with a few live calls
    llmjudge qualify [--quick] [...]       qualify the judge on public human-labelled pairs

Verdict files are found by scanning PATHs (default `.`) for `*.json` inside `judge_verdicts`
directories, and for any other JSON file shaped like a verdict file (as `--judge-store DIR` writes
them); version-control, tox/nox, node_modules, caches and virtual environments are skipped.

Prune works from the used-keys manifest the last full run left in pytest's cache (see `prune`),
or from several manifests combined: a run that ran part of what it collected (a pytest-shard or
pytest-split shard, -k) leaves its own under `.pytest_cache/v/llmjudge/shards/`.
Errors exit with status 2 and one line, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import StoreError, VerdictParseError, first_line
from .prune import (
    NOT_RUN,
    ManifestError,
    apply_prune,
    combine_manifests,
    find_manifest,
    last_refusal,
    load_manifest,
    load_manifests,
    plan_prune,
    project_root,
)
from .store import finder as store_finder
from .store.verdict_file import VerdictDocument

_HEX = re.compile(r"[0-9a-f]{4,64}")


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


# -- reading verdict files ----------------------------------------------------------------------


def load_verdict_files(paths: Sequence[str | Path]) -> list[VerdictDocument]:
    """Every verdict file under `paths` (default `.`; files are taken as given), validated; a missing
    path or a malformed file is a CliError (one line)."""
    try:
        return [VerdictDocument.read(path) for path in store_finder.find_verdict_files(paths or ["."])]
    except FileNotFoundError as exc:
        raise CliError(f"{exc.filename}: no such file or directory") from None
    except StoreError as exc:
        raise CliError(str(exc)) from None


# -- parsing stored replies again ---------------------------------------------------------------


@dataclass
class Reparsed:
    score: float | None = None
    verdict: str | None = None
    confidence: str | None = None
    reasoning: str | None = None
    error: str | None = None  # the parser could not read the reply
    skipped: str | None = None  # the rubric could not be reproduced: not judged either way


def reparse_entry(entry: Mapping[str, Any]) -> Reparsed:
    """A stored reply read with today's parser, decided exactly as replay decides it (`score_stored`):
    through its own rubric where the stored prompt hash lets it be rebuilt, else (the default kind)
    the plain parser on 0-1; other rubrics are skipped rather than misread on the wrong scale."""
    from .rubrics.stored import score_stored

    try:
        parsed = score_stored(entry)
    except VerdictParseError as exc:
        return Reparsed(error=first_line(exc, default="unparseable"))
    except Exception as exc:  # noqa: BLE001 - a parser crash is reported per entry, not fatal
        return Reparsed(error=f"{exc.__class__.__name__}: {exc}"[:200])
    if parsed is None:
        return Reparsed(skipped=f"rubric {entry.get('rubric')!r} cannot be rebuilt from the stored fields")
    return Reparsed(parsed.score, parsed.verdict, parsed.confidence, parsed.reasoning)


# -- commands -----------------------------------------------------------------------------------


def cmd_stats(args: argparse.Namespace) -> int:
    verdict_files = load_verdict_files(args.paths)
    counts: dict[str, Counter[str]] = {"by model": Counter(), "by test module": Counter(), "by rubric": Counter()}
    unparseable: list[tuple[VerdictDocument, str, str]] = []
    skipped = 0
    for verdict_file in verdict_files:
        for key, entry in verdict_file.entries.items():
            counts["by model"][str(entry.get("model", "?"))] += 1
            counts["by test module"][
                verdict_file.test.split("::", 1)[0] if verdict_file.test else f"(unknown: {verdict_file.path})"
            ] += 1
            counts["by rubric"][str(entry.get("rubric") or "score")] += 1
            result = reparse_entry(entry)
            if result.error is not None:
                unparseable.append((verdict_file, key, result.error))
            elif result.skipped is not None:
                skipped += 1
    total = sum(counts["by model"].values())
    tests = len({verdict_file.test for verdict_file in verdict_files})
    print(
        f"{total} stored verdicts in {len(verdict_files)} verdict files ({tests} tests), {len(unparseable)} "
        "unparseable replies" + (f", {skipped} not re-checked (rubric not rebuildable)" if skipped else "")
    )
    for title, counted in counts.items():
        if not counted:
            continue
        print(f"{title}:")
        width = max(len(k) for k in counted)
        for name, n in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {name:<{width}}  {n}")
    if unparseable:
        print("unparseable:")
        for verdict_file, key, error in unparseable:
            print(f"  {verdict_file.path}  key {key[:12]}  {error}")
    return 0


def cmd_reparse(args: argparse.Namespace) -> int:
    verdict_files = load_verdict_files(args.paths)
    checked = changed = broken = skipped = files_written = 0
    for verdict_file in verdict_files:
        dirty = False
        for key, entry in verdict_file.entries.items():
            checked += 1
            result = reparse_entry(entry)
            if result.skipped is not None:
                skipped += 1
                continue
            old = entry.get("score")
            where = f"{verdict_file.path}  key {key[:12]}  ({verdict_file.test})"
            if result.error is not None:
                broken += 1
                print(f"{where}: stored {_fmt(old)}, now unparseable: {result.error}")
                continue
            new = {
                "score": result.score,
                "verdict": result.verdict,
                "confidence": result.confidence,
                "reasoning": result.reasoning,
            }
            score_moved = not isinstance(old, (int, float)) or abs(float(old) - float(result.score or 0)) > 1e-6
            other_moved = any(entry.get(f) != v for f, v in new.items() if f != "score")
            if score_moved:
                changed += 1
                print(f"{where}: score {_fmt(old)} -> {_fmt(result.score)}")
            if (score_moved or other_moved) and args.write:
                entry.update(new)
                dirty = True
        if dirty:
            verdict_file.write()
            files_written += 1
    summary = f"reparsed {checked} stored replies: {changed} scores changed, {broken} unparseable"
    if skipped:
        summary += f", {skipped} skipped (rubric not rebuildable)"
    if args.write:
        summary += f"; updated {files_written} verdict file{'s' if files_written != 1 else ''}"
    elif changed:
        summary += "; run with --write to update the stored scores"
    print(summary)
    return 1 if args.check and (changed or broken) else 0


def _fmt(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "(none)"


def cmd_show(args: argparse.Namespace) -> int:
    prefix = args.key.strip().lower()
    if not _HEX.fullmatch(prefix):
        raise CliError(f"{args.key!r} is not a verdict key: give 4 to 64 hex digits (a prefix of the sha256 key)")
    matches = [
        (verdict_file, key, entry)
        for verdict_file in load_verdict_files(args.paths)
        for key, entry in verdict_file.entries.items()
        if key.startswith(prefix)
    ]
    if not matches:
        raise CliError(
            f"no stored verdict has a key starting with {prefix} under {', '.join(map(str, args.paths or ['.']))}"
        )
    keys = sorted({key for _, key, _ in matches})
    if len(keys) > 1:
        listed = "; ".join(
            f"{key[:16]} ({verdict_file.test})" for verdict_file, key, _ in sorted(matches, key=lambda m: m[1])
        )
        raise CliError(f"key prefix {prefix} is ambiguous, {len(keys)} verdicts match: {listed}")
    verdict_file, key, entry = matches[0]
    if args.json:
        print(
            json.dumps(
                {"key": key, "file": str(verdict_file.path), "test": verdict_file.test, **entry},
                indent=2,
                ensure_ascii=False,
                sort_keys=True,
            )
        )
        return 0
    now = reparse_entry(entry)
    print(f"key:        {key}")
    print(f"file:       {verdict_file.path}")
    print(f"test:       {verdict_file.test}")
    for name in ("model", "rubric", "prompt", "sample", "score", "verdict", "confidence"):
        if entry.get(name) is not None:
            print(f"{name + ':':<11} {entry[name]}")
    if now.error is not None:
        print(f"parsed now: unparseable: {now.error}")
    elif now.skipped is None:
        same = (
            "same"
            if isinstance(entry.get("score"), (int, float)) and abs(entry["score"] - (now.score or 0)) <= 1e-6
            else "differs from stored: run `llmjudge reparse --write`"
        )
        print(f"parsed now: {now.score} ({same})")
    for name in ("criteria", "input", "expected", "output", "reasoning", "reply"):
        if entry.get(name) is not None:
            print(f"{name}:")
            print("  " + str(entry[name]).replace("\n", "\n  "))
    if entry.get("logprobs") is not None:
        print(f"logprobs:   stored ({len(json.dumps(entry['logprobs']))} characters of JSON)")
    if entry.get("messages_sha256"):
        print(f"messages:   sha256 {entry['messages_sha256']}")
    return 0


# -- prune ---------------------------------------------------------------------------------------


def cmd_prune(args: argparse.Namespace) -> int:
    try:
        if args.manifest:
            manifests = load_manifests(Path(m) for m in args.manifest)
            manifest = combine_manifests(manifests)
            root = Path.cwd()
            where = f"{len(manifests)} manifests combined"
        else:
            refused = last_refusal(args.cache_dir, Path.cwd())
            try:
                path = find_manifest(args.cache_dir, Path.cwd())
            except ManifestError:
                if refused is None:
                    raise
                raise CliError(f"nothing to prune from the last run: {refused.reason}") from None
            manifest = load_manifest(path)
            root = project_root(path)
            where = f"manifest {path}"
            if refused is not None and refused.written > float(manifest.get("written") or 0):
                print(f"note: a later run wrote no manifest ({refused.reason}); this is the last full run's")
    except ManifestError as exc:
        raise CliError(str(exc)) from None
    plan = plan_prune(manifest, root=root)
    age = time.time() - float(manifest.get("written") or 0)
    tests = manifest.get("tests") or {}
    ran = sum(t.get("outcome") != NOT_RUN for t in tests.values())
    print(f"{where}, written {age / 3600:.1f} h ago by runs of {ran} of {len(tests)} collected tests")
    for note in plan.notes:
        print(note)
    verb = "would remove" if args.dry_run else "removed"
    for action in plan.actions:
        total = len(action.removed) + action.stays()  # entries of every section
        what = "the whole file" if action.deletes_file else f"{len(action.removed)} of {total} entries"
        print(f"{verb} {what}: {action.path} ({action.test or '?'}: {action.reason})")
    if not args.dry_run:
        apply_prune(plan)
    description = plan.describe()
    print(description.replace("removed", "would remove", 1) if args.dry_run else description)
    return 0


# -- merge driver ------------------------------------------------------------------------------------


def cmd_merge(args: argparse.Namespace) -> int:
    from .store import merge

    if args.install:
        if args.files:
            raise CliError("merge --install takes no files")
        repo = Path(args.repo)
        try:
            added = merge.install(repo, store=args.store)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(merge.install_instructions(args.store))
            detail = getattr(exc, "stderr", b"") or b""
            detail = detail.decode("utf-8", "replace").strip() if isinstance(detail, bytes) else str(detail).strip()
            raise CliError(f"could not install the merge driver in {repo}: {detail or exc}") from None
        for line in added:
            print(f"added to {repo / '.gitattributes'}: {line}")
        print(f"configured git merge driver {merge.DRIVER_NAME!r}: {merge.DRIVER_COMMAND}")
        print(
            "commit .gitattributes; every other clone runs `llmjudge merge --install` once (git config is not "
            "committed)"
        )
        return 0
    if len(args.files) != 3:
        raise CliError("merge takes BASE OURS THEIRS (git passes %O %A %B), or --install")
    return merge.main(args.files)


# -- questions -------------------------------------------------------------------------------------


def cmd_questions(args: argparse.Namespace) -> int:
    from .assessment.generator import generate_question_set
    from .errors import JudgeError
    from .settings import SettingError
    from .standalone import judge_cli_values, load_settings

    spec = Path(args.spec)
    out = Path(args.out) if args.out else spec.with_name(f"{spec.stem}.questions.json")
    try:
        settings = load_settings(judge_cli_values(args)).settings
        result = generate_question_set(spec, args.n, args.focus, args.kind, out=out, settings=settings)
    except (JudgeError, SettingError) as exc:
        raise CliError(str(exc)) from None
    for note in result.notes:
        print(note)
    if result.source == "recorded":
        print(f"{out}: {len(result.questions)} questions recorded for this spec and these options; no call made")
    else:
        print(f"wrote {len(result.questions)} questions to {out} ({result.model}, key {result.key[:12]})")
    for i, question in enumerate(result.questions, 1):
        print(f"  {i}. {question}")
    if len(result.questions) < result.asked:
        print(f"the model wrote {len(result.questions)} usable questions of the {result.asked} asked for")
    if result.dropped:
        print(f"dropped {len(result.dropped)} malformed or repeated questions:")
        for dropped in result.dropped:
            print(f"  - {dropped.question[:200]!r}: {dropped.reason}")
    print(f"review the file, then: Questions.from_file({str(out)!r})")
    return 0


# -- entry point -----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llmjudge", description="Inspect and maintain pytest-llmjudge's stored verdicts."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    paths_help = "files or directories to scan for verdict files (default: .)"

    stats = commands.add_parser(
        "stats", help="count stored verdicts per model and test module; find unparseable replies"
    )
    stats.add_argument("paths", nargs="*", metavar="PATH", help=paths_help)
    stats.set_defaults(run=cmd_stats)

    reparse = commands.add_parser(
        "reparse", help="run the current parser over every stored reply and list changed scores"
    )
    reparse.add_argument("paths", nargs="*", metavar="PATH", help=paths_help)
    reparse.add_argument(
        "--write", action="store_true", help="update the stored score, verdict, confidence and reasoning"
    )
    reparse.add_argument(
        "--check", action="store_true", help="exit 1 when any score changed or a reply became unparseable"
    )
    reparse.set_defaults(run=cmd_reparse)

    show = commands.add_parser("show", help="show one stored judgment in full")
    show.add_argument("key", metavar="KEY", help="the verdict key, or a prefix of it (at least 4 hex digits)")
    show.add_argument("paths", nargs="*", metavar="PATH", help=paths_help)
    show.add_argument("--json", action="store_true", help="print the stored entry as JSON")
    show.set_defaults(run=cmd_show)

    prune = commands.add_parser("prune", help="remove stored verdicts that the last full pytest run did not use")
    prune.add_argument("--dry-run", action="store_true", help="list what would be removed, change nothing")
    prune.add_argument(
        "--cache-dir", metavar="DIR", help="pytest's cache directory (default: .pytest_cache here or above)"
    )
    prune.add_argument(
        "--manifest",
        action="append",
        metavar="PATH",
        help="a used-keys manifest file, or a directory of them (the shards' manifests, pytest's cache "
        "llmjudge/shards folder); repeat to combine: only what no run used, in folders every run covered, goes",
    )
    prune.set_defaults(run=cmd_prune)

    merge = commands.add_parser(
        "merge",
        help="git merge driver for verdict files (union by key; `llmjudge merge %%O %%A %%B`), "
        "or --install it in this repository",
    )
    merge.add_argument("files", nargs="*", metavar="FILE", help="BASE OURS THEIRS, as git passes %%O %%A %%B")
    merge.add_argument("--install", action="store_true", help="add the .gitattributes line and the git config settings")
    merge.add_argument("--repo", default=".", metavar="DIR", help="the repository to install into (default: .)")
    merge.add_argument(
        "--store", metavar="DIR", help="with --install: also cover this --judge-store directory (relative to the repo)"
    )
    merge.set_defaults(run=cmd_merge)

    from .standalone import add_judge_options

    questions = commands.add_parser(
        "questions",
        help="have the judge model write assessment questions from a specification, into a reviewable file",
        description="Have the judge model write N single-focus assessment questions about a specification, "
        "each with its pass criterion: binary '<question>? (Pass = ..., Fail = ...)', scaled "
        "'<question>? (1 = ..., 5 = ...)' or multiple-choice '<question>? (A = ..., B = ...; Pass = A)'. "
        "Malformed and repeated questions are dropped and counted. The file holds the questions, the model's "
        "raw reply, the call's key and what was dropped: re-running with the same spec and options makes no "
        "call; on CI (replay) a missing record fails. Load it with Questions.from_file(FILE). Takes the same "
        "judge options, ini file and environment as a pytest run.",
    )
    questions.add_argument("--spec", required=True, metavar="FILE", help="the specification (any text file)")
    questions.add_argument("--focus", metavar="TEXT", help='what every question is about, e.g. "hallucinations"')
    questions.add_argument("-n", type=int, default=10, metavar="N", help="how many questions (default 10)")
    questions.add_argument(
        "--kind", choices=("binary", "scaled", "multiple-choice"), default="binary", help="the form (default binary)"
    )
    questions.add_argument(
        "--out",
        metavar="FILE",
        help="the questions file, .json (or .yaml/.yml with PyYAML) (default: <spec stem>.questions.json beside it)",
    )
    add_judge_options(questions.add_argument_group("judge options (as for pytest)"))
    questions.set_defaults(run=cmd_questions)

    from .diff import command as diff_command

    diff_command.add_parser(commands)

    from .calibration import command as calibrate_command

    calibrate_command.add_parser(commands)

    from .qualification import command as qualify_command

    qualify_command.add_parser(commands)

    from .doctor import add_parser as add_doctor_parser

    add_doctor_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except CliError as exc:
        print(f"llmjudge: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `llmjudge stats | head`
        return 0
    except KeyboardInterrupt:
        return 130
