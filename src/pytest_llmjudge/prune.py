"""Which stored verdicts a run used, and removing the ones no test uses any more.

After every full, successful run that judged (`full_run_refusal` says what counts as full), the
plugin writes a *used-keys manifest* into pytest's cache (`config.cache.set(MANIFEST_KEY, ...)`):
each test's outcome, its verdict file and the keys it read or wrote, plus the verdict directories
the run covered.  `pytest --judge-prune` applies the plan at the end of such a run; `llmjudge
prune` applies it later from the manifest (`find_manifest`).  Both go through `plan_prune`.
Recorded generations and unreadable replies on record follow the same rules as verdicts: their keys are
in the same used set.
A run that writes no manifest keeps why (`save_refusal`), so `llmjudge prune`, run later, says the
real reason rather than "run the whole suite once".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import StoreError
from .runtime import COMMAND_FOLDERS, STORED_SUFFIXES
from .store.verdict_file import Section, VerdictDocument, read_regular_file, verdict_file_path, verdict_filename

SECTIONS: tuple[Section, ...] = ("verdict", "generation", "unreadable")  # a verdict file's sections

if TYPE_CHECKING:  # the CLI imports this module too, and runs without pytest
    import pytest

MANIFEST_KEY = "llmjudge/used-keys"
REFUSAL_KEY = "llmjudge/no-manifest"  # why the last run left no manifest (see `save_refusal`)
SHARDS_KEY = "llmjudge/shards"  # a partial run's manifest: SHARDS_KEY/<shard_name(...)>
NOT_RUN = "not run"  # a test's outcome in a manifest when it was collected and did not run
MANIFEST_FORMAT = 1
# pytest's defaults, for the CLI that runs without a pytest config: the `cache_dir` ini value, and
# the folder under it where `config.cache.set(key, ...)` keeps values.
PYTEST_CACHE_DIR = ".pytest_cache"
_CACHE_VALUES = "v"


class ManifestError(Exception):
    """No usable used-keys manifest: the message says where it was looked for, and what to do."""


# -- the run: was it full, and what did it use -------------------------------------------------


def full_run_refusal(
    config: pytest.Config, exitstatus: int | None, mode: str, outcomes: Mapping[str, str]
) -> str | None:
    """Why this run cannot say which stored verdicts it used, or None when it can.

    It can when: it judged in auto, replay or refresh mode (live reads nothing); it ran tests (not
    --collect-only) and exited 0 (no failures, errors, crashed xdist workers, or interruption); and
    it collected every test of the modules it covers (no node ids, --lf or --sw, which narrow the
    collection itself).  File and directory arguments are fine: prune then covers only the modules
    that ran.  Tests skipped or xfailed keep all their verdicts.  A run that collected everything
    but ran a part of it (`narrowed` says why) still writes a partial manifest.
    """
    option = config.option
    if mode == "live":
        return "live mode reads no stored verdicts"
    if getattr(option, "collectonly", False):
        return "--collect-only ran no test"
    if exitstatus != 0:
        return f"the run did not pass (exit status {exitstatus}); prune needs a full, successful run"
    if any("::" in str(arg) for arg in config.args):
        return "node ids selected a subset of the tests"
    if getattr(option, "lf", False) or getattr(option, "stepwise", False):
        return "--lf/--sw selected a subset of the tests"
    if not outcomes:
        return "no test ran"
    return None


def narrowed(config: pytest.Config, not_run: int) -> str | None:
    """Why this run ran only part of what it collected (-k, -m, --deselect, a sharding plugin), or None."""
    option = config.option
    if getattr(option, "keyword", "") or getattr(option, "markexpr", ""):
        return "-k/-m selected a subset of the tests"
    if getattr(option, "deselect", None):
        return "--deselect selected a subset of the tests"
    if not_run:
        return f"{not_run} collected tests did not run (deselected, or another shard's)"
    return None


def run_manifest(
    rootdir: Path,
    store_root: Path | None,
    outcomes: Mapping[str, str],
    used: Mapping[str, Iterable[str]],
    not_run: Iterable[str] = (),
) -> dict[str, Any]:
    """What a run used: per test its outcome, verdict file and keys; and the verdict directories covered.

    A test is filed by its node id's path (the module that collected it, `item.path`, also for a test
    inherited from a base class in another module).  Tests collected but not run are listed with the
    outcome "not run": prune keeps every verdict of theirs.
    """
    root = rootdir.resolve()
    tests: dict[str, Any] = {}
    dirs: set[str] = set()
    module_dirs: set[Path] = set()
    # A module's tests share its verdict folder (a file name holds no "/"): paths are worked out once per module.
    folders: dict[str, str | None] = {}
    everything = [*((n, o) for n, o in outcomes.items()), *((n, NOT_RUN) for n in not_run if n not in outcomes)]
    for nodeid, outcome in everything:
        if "::" not in nodeid:
            continue
        location, name = nodeid.split("::", 1)
        if location not in folders:
            module = Path(os.path.normpath(root / location))
            shared = None
            if module.suffix in STORED_SUFFIXES:
                shared = _rel(verdict_file_path(module, name, store_root=store_root, rootdir=root).parent, root)
                dirs.add(shared)
                module_dirs.add(module.parent)
            folders[location] = shared
        verdict_folder = folders[location]
        if verdict_folder is None:
            continue
        verdict_file = f"{verdict_folder}/{verdict_filename(name)}"
        tests[nodeid] = {"outcome": outcome, "ledger": verdict_file, "used": sorted(used.get(nodeid, ()))}
    if store_root is None:  # verdicts of modules that no longer exist, beside modules that ran
        for folder in module_dirs:
            verdicts = folder / "judge_verdicts"
            # At the rootdir the commands keep their own verdict files, which no test uses.
            commands = COMMAND_FOLDERS if folder == root else ()
            if verdicts.is_dir():
                dirs.update(
                    _rel(d, root)
                    for d in verdicts.iterdir()
                    if d.is_dir()
                    and d.name not in commands
                    and not any((folder / f"{d.name}{suffix}").exists() for suffix in STORED_SUFFIXES)
                )
    return {
        "format": MANIFEST_FORMAT,
        "rootdir": str(rootdir),
        "written": time.time(),
        "dirs": sorted(dirs),
        "tests": dict(sorted(tests.items())),
    }


def _rel(path: Path, root: Path) -> str:
    """`path` relative to the (resolved) rootdir, with "/" separators; absolute when outside it.  No syscalls."""
    text = os.path.normpath(path if path.is_absolute() else root / path)
    prefix = str(root).rstrip(os.sep) + os.sep
    if text.startswith(prefix):
        text = text[len(prefix) :]
    return text.replace(os.sep, "/")


def shard_name(not_run: Iterable[str]) -> str:
    """A partial run's manifest name: the same for every run of one shard (it depends on what did not run)."""
    digest = hashlib.sha256("\n".join(sorted(not_run)).encode("utf-8", "surrogatepass")).hexdigest()
    return f"shard-{digest[:12]}"


def save_manifest(config: pytest.Config, manifest: Mapping[str, Any], *, shard: str | None = None) -> Path | None:
    """Keep the manifest in pytest's cache (a partial run's under SHARDS_KEY/<shard>); return its file
    (None with the cache provider off)."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    _wait_for_file_clocks()
    key = MANIFEST_KEY if shard is None else f"{SHARDS_KEY}/{shard}"
    cache.set(key, dict(manifest))
    return manifest_file(cache_dir_of(config), key)


# Linux stamps a written file from a coarse clock that lags time.time() by up to one tick.
_COARSE_REALTIME = 5  # CLOCK_REALTIME_COARSE; the time module has no name for it


def _wait_for_file_clocks() -> None:
    """Sleep until any file written from now on has a later time than the manifest's "written": prune
    skips a file at or after it (recorded into since the run).  One tick (4 ms on most Linux kernels)."""
    if sys.platform.startswith("linux"):
        try:
            time.sleep(time.clock_getres(_COARSE_REALTIME))
        except OSError:
            time.sleep(0.01)


def cache_dir_of(config: pytest.Config) -> Path:
    """pytest's cache directory, as pytest finds it: the `cache_dir` ini value, against rootdir."""
    value = os.path.expandvars(os.path.expanduser(str(config.getini("cache_dir") or PYTEST_CACHE_DIR)))
    return Path(config.rootpath) / value


# -- finding a manifest outside pytest ---------------------------------------------------------


def manifest_file(cache_dir: Path, key: str = MANIFEST_KEY) -> Path:
    """Where `config.cache.set(key, ...)` writes a manifest in a pytest cache directory."""
    return cache_dir / _CACHE_VALUES / key


def _in_cache(cache_dir: str | Path | None, start: Path, key: str) -> Path | None:
    """The file of `config.cache.set(key, ...)` in `cache_dir`, else in the nearest pytest cache at or above `start`."""
    here = start.resolve()
    folders = [Path(cache_dir)] if cache_dir else [folder / PYTEST_CACHE_DIR for folder in (here, *here.parents)]
    return next((path for folder in folders if (path := manifest_file(folder, key)).is_file()), None)


def find_manifest(cache_dir: str | Path | None, start: Path) -> Path:
    """The manifest in `cache_dir`, else in the nearest `.pytest_cache` at or above `start`."""
    path = _in_cache(cache_dir, start, MANIFEST_KEY)
    if path is not None:
        return path
    if cache_dir:
        raise ManifestError(
            f"no used-keys manifest at {manifest_file(Path(cache_dir))}: run the whole test suite once "
            "(pytest, cache provider on)"
        )
    raise ManifestError(
        f"no used-keys manifest ({manifest_file(Path(PYTEST_CACHE_DIR))}) here or above: run the whole test suite "
        "once (pytest, with the cache provider on), or pass --cache-dir"
    )


class Refusal(NamedTuple):
    """Why the last refused run left no manifest, and when it ended (seconds since the epoch)."""

    reason: str
    written: float


def save_refusal(config: pytest.Config, reason: str) -> None:
    """Keep why this run wrote no manifest, for `llmjudge prune`, which runs later (nothing with the cache off)."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        cache.set(REFUSAL_KEY, {"reason": reason, "written": time.time()})


def last_refusal(cache_dir: str | Path | None, start: Path) -> Refusal | None:
    """The reason the last refused run left, found as `find_manifest` finds a manifest; None without one."""
    path = _in_cache(cache_dir, start, REFUSAL_KEY)
    try:  # the cache directory is untrusted: a reason is one line, anything bigger is not one this plugin wrote
        note: Any = None if path is None else json.loads(read_regular_file(path, 64 * 1024))
    except (OSError, ValueError):
        return None
    reason, written = (note.get("reason"), note.get("written")) if isinstance(note, dict) else (None, None)
    if not isinstance(reason, str) or isinstance(written, bool) or not isinstance(written, (int, float)):
        return None
    return Refusal(" ".join(reason.split())[:500], float(written))


def project_root(manifest_path: Path) -> Path:
    """The project a manifest belongs to, by where it sits: the folder holding the pytest cache directory."""
    cache_dir = manifest_path
    for _ in Path(_CACHE_VALUES, MANIFEST_KEY).parts:
        cache_dir = cache_dir.parent
    return cache_dir.parent


def load_manifest(path: Path) -> dict[str, Any]:
    """A manifest file, checked for its format; ManifestError when it is not one."""
    try:
        manifest = json.loads(read_regular_file(path))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: unreadable used-keys manifest ({exc.__class__.__name__})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise ManifestError(f"{path}: not a used-keys manifest of format {MANIFEST_FORMAT}")
    return manifest


def load_manifests(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every manifest in `paths`: files as given, directories searched for manifest files (shards' artifacts)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")))
        elif path.is_file():
            files.append(path)
        else:
            raise ManifestError(f"{path}: no such manifest file or directory")
    if not files:
        raise ManifestError(f"no used-keys manifest in {', '.join(map(str, paths))}")
    return [load_manifest(f) for f in files]


_OUTCOME_RANK = {NOT_RUN: 0, "passed": 1}  # anything else (failed, skipped) ranks above: it keeps every verdict


def combine_manifests(manifests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One manifest from several runs (the shards of one suite): prune then removes only what no run
    used, in the verdict directories every run covered.

    A test's keys are the union of what each run used; its outcome is "passed" only when some run ran
    it and passed and none failed or skipped it; a test no run ran stays "not run" (all kept).  The
    oldest run's time guards against files changed since.
    """
    if not manifests:
        raise ManifestError("no used-keys manifest to combine")
    if len(manifests) == 1:
        return dict(manifests[0])
    tests: dict[str, dict[str, Any]] = {}
    for manifest in manifests:
        for nodeid, test in (manifest.get("tests") or {}).items():
            combined = tests.setdefault(nodeid, {"outcome": NOT_RUN, "ledger": test.get("ledger"), "used": set()})
            combined["used"].update(test.get("used") or ())
            outcome = str(test.get("outcome"))
            if _OUTCOME_RANK.get(outcome, 2) > _OUTCOME_RANK.get(combined["outcome"], 2):
                combined["outcome"] = outcome
    covered = set.intersection(*(set(m.get("dirs") or ()) for m in manifests))
    return {
        "format": MANIFEST_FORMAT,
        "rootdir": str(manifests[0].get("rootdir") or "."),
        "written": min(float(m.get("written") or 0) for m in manifests),
        "dirs": sorted(covered),
        "tests": {n: {**t, "used": sorted(t["used"])} for n, t in sorted(tests.items())},
        "combined": len(manifests),
    }


# -- the plan ------------------------------------------------------------------------------------


@dataclass
class PruneAction:
    """One verdict file as planned (`seen`), the keys to remove (of every section alike), and why.

    `kept`, `kept_generations` and `kept_unreadable` are what stays; the file is deleted when nothing does.
    """

    seen: VerdictDocument
    removed: list[str]
    reason: str

    @property
    def kept(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.seen.entries.items() if k not in self.removed}

    @property
    def kept_generations(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.seen.generations.items() if k not in self.removed}

    @property
    def kept_unreadable(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.seen.unreadable.items() if k not in self.removed}

    def stays(self) -> int:
        """How many entries stay, of every section."""
        return len(self.kept) + len(self.kept_generations) + len(self.kept_unreadable)

    @property
    def path(self) -> Path:
        return self.seen.path

    @property
    def test(self) -> str:
        return self.seen.test

    @property
    def deletes_file(self) -> bool:
        return not self.stays()


@dataclass
class PrunePlan:
    """Every file prune changes, the notes on files it skipped, and how many verdicts stay."""

    actions: list[PruneAction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept: int = 0
    folders: list[Path] = field(default_factory=list)  # the verdict folders covered (swept of stale temporary files)

    def describe(self) -> str:
        removed = sum(len(a.removed) for a in self.actions)
        if not removed:
            return f"nothing to remove ({self.kept} stored verdicts in use)"
        deleted = sum(a.deletes_file for a in self.actions)
        files = len(self.actions)
        return (
            f"removed {removed} unused verdict{'s' if removed != 1 else ''} from {files} "
            f"file{'s' if files != 1 else ''} ({deleted} deleted); {self.kept} kept"
        )


def plan_prune(manifest: Mapping[str, Any], *, root: Path | None = None) -> PrunePlan:
    """Which stored verdicts the run that wrote `manifest` did not use, file by file.

    `root` stands in for the manifest's rootdir when that no longer exists (the project moved).
    """
    rootdir = Path(manifest.get("rootdir") or ".")
    if root is not None and not rootdir.is_dir():
        rootdir = root
    written = float(manifest.get("written") or 0)
    tests = manifest.get("tests") or {}
    plan = PrunePlan()
    for folder in manifest.get("dirs") or []:
        directory = rootdir / folder
        if not directory.is_dir():
            continue
        plan.folders.append(directory)
        for path in sorted(directory.glob("*.json")):
            try:
                verdict_file = VerdictDocument.read(path)
            except StoreError as exc:
                plan.notes.append(f"skipped {exc}")
                continue
            # A file written after the run says so by its time (see `_wait_for_file_clocks`).
            changed = path.stat().st_mtime >= written
            if changed:
                plan.notes.append(f"skipped {path}: changed since the run that wrote the manifest")
            test = tests.get(verdict_file.test)  # a test that did not pass keeps every verdict
            used = set(test.get("used") or ()) if test is not None else set()
            stored = {*verdict_file.entries, *verdict_file.generations, *verdict_file.unreadable}
            removed = sorted(k for k in stored if k not in used)
            if changed or (test is not None and test.get("outcome") != "passed"):
                removed = []
            plan.kept += len(stored) - len(removed)
            if removed:
                why = "its test no longer exists" if test is None else "not used by its test"
                plan.actions.append(PruneAction(verdict_file, removed, why))
    return plan


def apply_prune(plan: PrunePlan, *, lock_dir: Path | None = None) -> None:
    """Rewrite or delete the files the plan names (an emptied verdict directory goes too).

    Each file is re-read under the lock its recorders take (`lock_dir`: theirs, when not the
    default), and only entries unchanged since the plan are removed.  A file that cannot be re-read
    or locked is left as it is, with a note; the actions and counts are updated to what was done.
    """
    from .store.atomic import TEMP_DIR, remove_stale_temps, remove_temp_dir
    from .store.locks import LockTimeout, verdict_file_lock

    for action in plan.actions:
        planned = action.stays()
        try:
            with verdict_file_lock(action.path, lock_dir):
                _apply(action)
        except (StoreError, OSError, LockTimeout) as exc:
            plan.notes.append(f"skipped {action.path}: {exc}")
            action.removed = []
        plan.kept += action.stays() - planned
    plan.actions = [a for a in plan.actions if a.removed]
    for folder in plan.folders:  # left by a process killed mid-write
        remove_stale_temps(folder)
        remove_temp_dir(folder / TEMP_DIR)
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty


def _apply(action: PruneAction) -> None:
    """Remove the action's entries that are still as planned, keeping everything else now in the file."""
    now = VerdictDocument.read(action.path)
    planned, action.seen = action.seen, now
    # A key goes only while its entry is as planned: what another process recorded meanwhile stays.
    action.removed = sorted(
        k
        for k in action.removed
        if any(k in now.section(what) and planned.section(what).get(k) == now.section(what)[k] for what in SECTIONS)
    )
    if not action.removed:
        return
    if action.deletes_file:
        action.path.unlink(missing_ok=True)
    else:
        # The outcomes of the judgments whose entries stay are kept (the writer drops the others).
        VerdictDocument(
            action.path,
            now.test or planned.test,
            action.kept,
            action.kept_generations,
            outcomes=now.outcomes,
            unreadable=action.kept_unreadable,
        ).write()
