"""A git merge driver for verdict files: `llmjudge merge %O %A %B`.

Two branches that recorded verdicts for the same tests (say, one per judge model) change the same
files in the same places, so git's line merge conflicts in nearly every file, and
`git merge-file --union` writes invalid JSON.  Verdict files merge by key instead: a key is a
content hash of the judgment, so the same key on both branches is the same judgment.

Per key, with the common ancestor (%O) telling a deletion from an addition:

* present on one side only: kept if that side added it; deleted if the other side deleted it and
  this side left it as it was in the ancestor.  Changed on one side and deleted on the other: the
  changed entry is kept (a verdict is never lost in a merge; `llmjudge prune` removes stale ones).
* the same entry on both sides, or changed on one side only: that entry.
* changed on both sides with the same `reply`: the judge said the same thing, and the sides differ
  only in what was derived from it (score, verdict, confidence, reasoning re-parsed by another
  parser version) or in other stored details.  Entries are taken whole, never mixed field by
  field, so the derived fields always belong together: **ours** (%A, the branch being merged
  into) is kept, with a note on stderr; `llmjudge reparse` recomputes the derived fields either way.
* different `reply` texts where both sides changed it (or both added the key): a true conflict.
  The driver writes nothing, so %A stays as ours, describes each conflict on stderr (test, key
  prefix, the first line of both replies) and exits 1; git then marks the file conflicted.

Recorded generations (the "generations" section: replies of the model under test) merge by the
same rules, apart from the verdicts; a conflict there is the same key with a different model reply.

The `test` field is taken from ours (theirs' when ours has none).  An empty or missing file is an
empty ledger: git passes an empty ancestor for a file both branches added.  A file that is not a
verdict file exits 2 with a one-line message, and git marks the file conflicted.

Install it with `install(repo)` (see `install_instructions()`): a `.gitattributes` line, which is
committed, and two `git config` settings, which every clone needs once.
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
from .ledger import LedgerDocument

__all__ = [
    "ATTRIBUTES_LINE",
    "DRIVER_COMMAND",
    "DRIVER_NAME",
    "Conflict",
    "MergeResult",
    "install",
    "install_instructions",
    "main",
    "merge_ledgers",
]

DRIVER_NAME = "llmjudge"
DRIVER_COMMAND = "llmjudge merge %O %A %B"
DRIVER_DESCRIPTION = "pytest-llmjudge verdict files (union by key)"
ATTRIBUTES_LINE = f"**/judge_verdicts/**/*.json merge={DRIVER_NAME}"

Entry = dict[str, Any]


@dataclass(frozen=True)
class Conflict:
    """One key whose two sides hold different judge replies."""

    key: str
    ours_reply: str
    theirs_reply: str
    section: str = "verdicts"  # or "generations": the model under test's reply differs

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
    """The merged ledger (meaningful only without conflicts), its conflicts, and notes on choices made."""

    test: str
    entries: dict[str, Entry]
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    generations: dict[str, Entry] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _first_line(text: str, limit: int = 100) -> str:
    lines = text.strip().splitlines()
    line = lines[0] if lines else ""
    return repr(line if len(line) <= limit else line[:limit] + "...")


def _read(path: Path) -> LedgerDocument:
    """Read one side; an empty or missing file is an empty ledger (git's %O for a file added on both sides)."""
    try:
        if not path.read_bytes().strip():
            return LedgerDocument(path, "", {})
    except FileNotFoundError:
        return LedgerDocument(path, "", {})
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the verdict file ({exc.__class__.__name__})") from None
    return LedgerDocument.read(path)


def _normal(entry: Entry | None) -> Entry | None:
    """An entry as it would be written (None-valued fields dropped), for comparison."""
    return None if entry is None else {k: v for k, v in entry.items() if v is not None}


def _merge_key(
    key: str,
    base: Entry | None,
    ours: Entry | None,
    theirs: Entry | None,
    result: MergeResult,
    section: str = "verdicts",
) -> None:
    merged = result.generations if section == "generations" else result.entries
    what = "generation" if section == "generations" else "entry"
    if ours == theirs:  # same entry, or deleted on both sides
        if ours is not None:
            merged[key] = ours
        return
    if ours == base:  # only theirs changed it (added, modified or deleted)
        if theirs is not None:
            merged[key] = theirs
        return
    if theirs == base:  # only ours changed it
        if ours is not None:
            merged[key] = ours
        return
    if ours is None or theirs is None:  # changed on one side, deleted on the other: keep the change
        kept, side = (theirs, "theirs") if ours is None else (ours, "ours")
        assert kept is not None
        merged[key] = kept
        result.notes.append(f"key {key[:12]}: changed on {side}, deleted on the other branch; kept the changed {what}")
        return
    ours_reply, theirs_reply = ours["reply"], theirs["reply"]
    base_reply = None if base is None else base.get("reply")
    if ours_reply == theirs_reply:
        merged[key] = ours
        result.notes.append(f"key {key[:12]}: same reply, other fields differ on both branches; kept ours")
    elif theirs_reply == base_reply:  # ours re-recorded the reply; theirs' fields belong to the old one
        merged[key] = ours
    elif ours_reply == base_reply:
        merged[key] = theirs
    else:
        result.conflicts.append(Conflict(key, ours_reply, theirs_reply, section))
        merged[key] = ours


def merge_ledgers(base: Path, ours: Path, theirs: Path, *, write: bool = True) -> MergeResult:
    """Merge three versions of one verdict file by key (see the module docstring for the policy).

    `base` is the common ancestor (%O), `ours` the current branch's version (%A), `theirs` the other
    branch's (%B).  Without conflicts, and unless `write=False`, the result is written into `ours`
    through `LedgerDocument`, as git's merge-driver contract requires; with conflicts nothing is
    written.  Raises `StoreError` when a file is not a verdict file.
    """
    base_doc, ours_doc, theirs_doc = _read(base), _read(ours), _read(theirs)
    result = MergeResult(ours_doc.test or theirs_doc.test or base_doc.test, {})
    if ours_doc.test and theirs_doc.test and ours_doc.test != theirs_doc.test:
        result.notes.append(f"the test is named {ours_doc.test!r} on ours, {theirs_doc.test!r} on theirs; kept ours")
    for key in sorted(set(base_doc.entries) | set(ours_doc.entries) | set(theirs_doc.entries)):
        _merge_key(
            key,
            _normal(base_doc.entries.get(key)),
            _normal(ours_doc.entries.get(key)),
            _normal(theirs_doc.entries.get(key)),
            result,
        )
    sides = (base_doc.generations, ours_doc.generations, theirs_doc.generations)
    for key in sorted(set().union(*sides)):
        base_entry, ours_entry, theirs_entry = (_normal(side.get(key)) for side in sides)
        _merge_key(key, base_entry, ours_entry, theirs_entry, result, "generations")
    if write and result.clean:
        LedgerDocument(ours, result.test, result.entries, result.generations).write()
    return result


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
        result = merge_ledgers(args.base, args.ours, args.theirs)
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
    patterns = [ATTRIBUTES_LINE]
    if store is not None:
        patterns.append(_store_line(store))
    lines = "\n".join(f"    {p}" for p in patterns)
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


def _store_line(store: str) -> str:
    folder = store.replace("\\", "/").strip("/")
    return f"{folder}/**/*.json merge={DRIVER_NAME}" if folder not in ("", ".") else f"**/*.json merge={DRIVER_NAME}"


def install(repo: Path, *, store: str | None = None, command: str = DRIVER_COMMAND) -> list[str]:
    """Install the driver in `repo`: the `.gitattributes` line(s) and the `git config` settings.

    Idempotent: lines already in `.gitattributes` are not added again.  `store` is a `--judge-store`
    directory relative to the repository root, covered by its own line.  `command` replaces the
    driver command (for example to run the driver with a particular Python).  Returns the lines
    added to `.gitattributes`.  Raises `subprocess.CalledProcessError` when `git config` fails.
    """
    wanted = [ATTRIBUTES_LINE] + ([_store_line(store)] if store is not None else [])
    attributes = repo / ".gitattributes"
    text = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    added = [line for line in wanted if line not in present]
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
