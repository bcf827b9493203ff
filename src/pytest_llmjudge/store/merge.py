"""A git merge driver for verdict files: `llmjudge merge %O %A %B`.

Two branches that recorded verdicts for the same tests change the same lines, and
`git merge-file --union` writes invalid JSON.  Verdict files merge by key instead: a key is a
content hash of the judgment, so the same key on both branches is the same judgment.  Per key,
verdicts, recorded generations and unreadable replies on record alike, with the common ancestor (%O)
telling a deletion from an addition:

* changed (added, modified, deleted) on one side only, or the same on both: that side's entry.
  Changed on one side and deleted on the other: the changed entry (`llmjudge prune` removes stale ones).
* changed on both sides with the same `reply`: the sides differ only in what was derived from it
  (re-parsed by another parser version) or in other details.  Entries are taken whole, never mixed
  field by field: **ours** (%A) is kept, with a note on stderr.
* different replies where both sides changed it (or both added the key): a true conflict.  Nothing
  is written, so %A stays as ours; each conflict is described on stderr (test, key prefix, the
  first line of both replies) and the driver exits 1, so git marks the file conflicted.

Outcomes (what each judgment decided, see `store.outcomes`) merge by key the same way, but never
conflict: where both sides changed one, ours is kept (the next recording decides it again), and of
two outcomes that take one judgment's place, ours stays.

The `test` field is taken from ours (theirs' when ours has none).  An empty or missing file is an
empty verdict file (git passes an empty ancestor for a file both branches added).  A file that is not a
verdict file exits 2 with a one-line message.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .verdict_file import Section, VerdictDocument, as_written

__all__ = [
    "ATTRIBUTES_LINE",
    "DRIVER_COMMAND",
    "DRIVER_NAME",
    "Conflict",
    "MergeResult",
    "install",
    "install_instructions",
    "main",
    "merge_verdict_files",
]

DRIVER_NAME = "llmjudge"
DRIVER_COMMAND = "llmjudge merge %O %A %B"
DRIVER_DESCRIPTION = "pytest-llmjudge verdict files (union by key)"
ATTRIBUTES_LINE = f"**/judge_verdicts/**/*.json merge={DRIVER_NAME}"

Entry = dict[str, Any]
# Each section of a verdict file as written, and as `VerdictDocument.section` names it.
SECTIONS: tuple[tuple[str, Section], ...] = (
    ("verdicts", "verdict"),
    ("generations", "generation"),
    ("unreadable", "unreadable"),
)


@dataclass(frozen=True)
class Conflict:
    """One key whose two sides hold different judge replies."""

    key: str
    ours_reply: str
    theirs_reply: str
    section: str = "verdicts"  # or "generations" (the model under test's reply differs), or "unreadable"

    def describe(self, test: str) -> str:
        """Several lines for stderr: where, which key, and what each side's judge (or model) said."""
        whose = "model reply (a recorded generation)" if self.section == "generations" else "judge reply"
        return (
            f"llmjudge merge: CONFLICT in {test or '(unnamed test)'}: key {self.key[:12]} holds a different {whose}"
            f" on each branch\n"
            f"  ours:   {_first_line(self.ours_reply)}\n"
            f"  theirs: {_first_line(self.theirs_reply)}\n"
            f"  The file is left as your branch's version, without the other branch's entries: settle this key"
            f" (one reply on both branches, or re-record it) and merge again, or edit the file and `git add` it."
        )


@dataclass
class MergeResult:
    """The merged verdict file (meaningful only without conflicts), its conflicts, and notes on choices made."""

    test: str
    entries: dict[str, Entry]
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    generations: dict[str, Entry] = field(default_factory=dict)
    outcomes: dict[str, Entry] = field(default_factory=dict)
    unreadable: dict[str, Entry] = field(default_factory=dict)  # judge replies that held no verdict, on record

    def section(self, name: str) -> dict[str, Entry]:
        """The merged section of that name ("verdicts", "generations" or "unreadable")."""
        return {"generations": self.generations, "unreadable": self.unreadable}.get(name, self.entries)

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _first_line(text: str, limit: int = 100) -> str:
    lines = text.strip().splitlines()
    line = lines[0] if lines else ""
    return repr(line if len(line) <= limit else line[:limit] + "...")


def _read(path: Path) -> VerdictDocument:
    """Read one side; an empty or missing file is an empty verdict file (git's %O for a file added on both sides)."""
    try:
        if not path.read_bytes().strip():
            return VerdictDocument(path, "", {})
    except FileNotFoundError:
        return VerdictDocument(path, "", {})
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the verdict file ({exc.__class__.__name__})") from None
    return VerdictDocument.read(path)


def _merge_key(
    result: MergeResult, section: str, key: str, base: Entry | None, ours: Entry | None, theirs: Entry | None
) -> None:
    merged = result.section(section)
    if ours == theirs or theirs == base:  # the same on both sides (or deleted on both), or only ours changed it
        kept = ours
    elif ours == base:  # only theirs changed it (added, modified or deleted)
        kept = theirs
    elif ours is None or theirs is None:  # changed on one side, deleted on the other: keep the change
        kept, side = (theirs, "theirs") if ours is None else (ours, "ours")
        what = "generation" if section == "generations" else "entry"
        result.notes.append(f"key {key[:12]}: changed on {side}, deleted on the other branch; kept the changed {what}")
    elif ours["reply"] == theirs["reply"]:
        kept = ours
        result.notes.append(f"key {key[:12]}: same reply, other fields differ on both branches; kept ours")
    elif ours["reply"] == (base_reply := (base or {}).get("reply")):
        kept = theirs
    else:  # theirs kept the ancestor's reply (its fields belong to the old one), or a true conflict
        if theirs["reply"] != base_reply:
            result.conflicts.append(Conflict(key, ours["reply"], theirs["reply"], section))
        kept = ours
    if kept is not None:
        merged[key] = kept


def merge_verdict_files(base: Path, ours: Path, theirs: Path, *, write: bool = True) -> MergeResult:
    """Merge three versions of one verdict file by key (see the module docstring for the policy).

    `base` is the common ancestor (%O), `ours` the current branch's version (%A), `theirs` the other
    branch's (%B).  Without conflicts, and unless `write=False`, the result is written into `ours`
    through `VerdictDocument`, as git's merge-driver contract requires; with conflicts nothing is
    written.  Raises `StoreError` when a file is not a verdict file.
    """
    docs = _read(base), _read(ours), _read(theirs)
    base_doc, ours_doc, theirs_doc = docs
    result = MergeResult(ours_doc.test or theirs_doc.test or base_doc.test, {})
    if ours_doc.test and theirs_doc.test and ours_doc.test != theirs_doc.test:
        result.notes.append(f"the test is named {ours_doc.test!r} on ours, {theirs_doc.test!r} on theirs; kept ours")
    for section, what in SECTIONS:
        # Compared as written (None-valued fields dropped).
        sides = [as_written(doc.section(what)) for doc in docs]
        for key in sorted(set().union(*sides)):
            _merge_key(result, section, key, *(side.get(key) for side in sides))
    result.outcomes = _merged_outcomes(*(doc.outcomes for doc in docs))
    # A key both branches recorded, one as a verdict and one as unreadable: the verdict stands (a file keeps
    # a key in one of the two; an unreadable reply is no answer to prefer over one).
    for key in set(result.entries) & set(result.unreadable):
        del result.unreadable[key]
        result.notes.append(f"key {key[:12]}: a verdict on one branch, unreadable on the other; kept the verdict")
    if write and result.clean:
        VerdictDocument(
            ours,
            result.test,
            result.entries,
            result.generations,
            outcomes=result.outcomes,
            unreadable=result.unreadable,
        ).write()
    return result


def _merged_outcomes(base: dict[str, Entry], ours: dict[str, Entry], theirs: dict[str, Entry]) -> dict[str, Entry]:
    """The outcomes by key as entries merge, ours kept where both changed one; ours stays in a judgment's place."""
    from .outcomes import stale_outcomes

    merged: dict[str, Entry] = {}
    for key in sorted({*base, *ours, *theirs}):
        old, mine, other = base.get(key), ours.get(key), theirs.get(key)
        kept = other if mine == old and other != old else mine if mine is not None or other == old else other
        if kept is not None:
            merged[key] = kept
    kept_ours = {key: outcome for key, outcome in merged.items() if ours.get(key) == outcome}
    for key in stale_outcomes(merged, kept_ours):
        del merged[key]
    return merged


def main(argv: Sequence[str]) -> int:
    """`llmjudge merge BASE OURS THEIRS`: 0 merged into OURS, 1 a true conflict, 2 an unreadable file."""
    parser = argparse.ArgumentParser(
        prog="llmjudge merge",
        description="Git merge driver for verdict files: union of entries by key. "
        "Configure it as `llmjudge merge %O %A %B`; the result is written into OURS.",
    )
    parser.add_argument("base", type=Path, help="the common ancestor's version (%%O; may be empty)")
    parser.add_argument("ours", type=Path, help="the current branch's version (%%A); the result is written here")
    parser.add_argument("theirs", type=Path, help="the other branch's version (%%B)")
    args = parser.parse_args(list(argv))
    try:
        result = merge_verdict_files(args.base, args.ours, args.theirs)
    except StoreError as exc:
        print(f"llmjudge merge: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"llmjudge merge: cannot write {args.ours} ({exc.__class__.__name__}: {exc.strerror})", file=sys.stderr)
        return 2
    for note in result.notes:
        print(f"llmjudge merge: {result.test or '(unnamed test)'}: {note}", file=sys.stderr)
    for conflict in result.conflicts:
        print(conflict.describe(result.test), file=sys.stderr)
    return 0 if result.clean else 1


def install_instructions(store: str | None = None) -> str:
    """How to install the merge driver by hand (what `install` does)."""
    lines = "\n".join(f"    {p}" for p in _attribute_lines(store))
    return (
        "Merge verdict files by key instead of by line, so branches that recorded verdicts for the same\n"
        "tests merge without conflicts:\n"
        "\n"
        "1. Add to .gitattributes at the repository root, and commit it:\n"
        f"{lines}\n"
        "   The first line covers the default layout (judge_verdicts/ beside each test module). With\n"
        "   --judge-store DIR (or LLMJUDGE_STORE), add a line for that directory, relative to the\n"
        f"   repository root: `DIR/**/*.json merge={DRIVER_NAME}`.\n"
        "\n"
        "2. Define the driver, once in every clone (git does not commit its configuration):\n"
        f'    git config merge.{DRIVER_NAME}.name "{DRIVER_DESCRIPTION}"\n'
        f'    git config merge.{DRIVER_NAME}.driver "{DRIVER_COMMAND}"\n'
        "\n"
        "A clone without step 2 merges these files line by line, as before. A true conflict (the same\n"
        "judgment with a different judge reply on each branch) stops the merge: the file keeps your\n"
        "branch's version and the conflicting keys are printed.\n"
    )


def _attribute_lines(store: str | None) -> list[str]:
    """The `.gitattributes` lines: the default layout's, and one for a `--judge-store` directory."""
    if store is None:
        return [ATTRIBUTES_LINE]
    folder = store.replace("\\", "/").strip("/")
    return [ATTRIBUTES_LINE, f"{'' if folder in ('', '.') else folder + '/'}**/*.json merge={DRIVER_NAME}"]


def install(repo: Path, *, store: str | None = None, command: str = DRIVER_COMMAND) -> list[str]:
    """Install the driver in `repo`: the `.gitattributes` line(s) and the `git config` settings.

    Idempotent: lines already in `.gitattributes` are not added again.  `store` is a `--judge-store`
    directory relative to the repository root, covered by its own line.  `command` replaces the
    driver command (for example to run the driver with a particular Python).  Returns the lines
    added to `.gitattributes`.  Raises `subprocess.CalledProcessError` when `git config` fails.
    """
    attributes = repo / ".gitattributes"
    text = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    added = [line for line in _attribute_lines(store) if line not in present]
    if added:
        prefix = text if not text or text.endswith("\n") else text + "\n"
        attributes.write_text(prefix + "".join(f"{line}\n" for line in added), encoding="utf-8")
    for name, value in (("name", DRIVER_DESCRIPTION), ("driver", command)):
        subprocess.run(
            ["git", "config", f"merge.{DRIVER_NAME}.{name}", value], cwd=repo, check=True, capture_output=True
        )
    return added


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
