"""Which stored verdicts a run used, and removing the ones no test uses any more.

After every full, successful run that judged (`full_run_refusal` says what counts as full), the
plugin writes a *used-keys manifest* into pytest's cache (`config.cache.set(MANIFEST_KEY, ...)`):
each test's outcome, its verdict file and the keys it read or wrote, plus the verdict directories
the run covered.  `pytest --judge-prune` applies the plan at the end of such a run; `llmjudge
prune` applies it later from the manifest (`find_manifest`).  Both go through `plan_prune`.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import StoreError
from .store import LedgerDocument, ledger_path

if TYPE_CHECKING:  # the CLI imports this module too, and runs without pytest
    import pytest

MANIFEST_KEY = "llmjudge/used-keys"
MANIFEST_FORMAT = 1
# pytest's defaults, for the CLI that runs without a pytest config: the `cache_dir` ini value, and
# the folder under it where `config.cache.set(key, ...)` keeps values.
PYTEST_CACHE_DIR = ".pytest_cache"
_CACHE_VALUES = "v"


class ManifestError(Exception):
    """No usable used-keys manifest: the message says where it was looked for, and what to do."""


# -- the run: was it full, and what did it use -------------------------------------------------


def full_run_refusal(
    config: pytest.Config, exitstatus: int | None, deselected: int, mode: str, outcomes: Mapping[str, str]
) -> str | None:
    """Why this run cannot tell which stored verdicts are unused, or None when it can.

    A run counts as full when: it judged in auto, replay or refresh mode (live reads nothing); it
    ran tests (not --collect-only) and exited 0 (no failures, errors, crashed xdist workers, or
    interruption); nothing narrowed the selection inside a module (no -k, -m, node ids, --deselect,
    --lf, --sw, and no plugin deselected anything).  File and directory arguments are fine: prune
    then covers only the modules that ran.  Tests skipped or xfailed keep all their verdicts.
    """
    option = config.option
    if mode == "live":
        return "live mode reads no stored verdicts"
    if getattr(option, "collectonly", False):
        return "--collect-only ran no test"
    if exitstatus != 0:
        return f"the run did not pass (exit status {exitstatus}); prune needs a full, successful run"
    if getattr(option, "keyword", "") or getattr(option, "markexpr", ""):
        return "-k/-m selected a subset of the tests"
    if any("::" in str(arg) for arg in config.args):
        return "node ids selected a subset of the tests"
    if getattr(option, "deselect", None) or getattr(option, "lf", False) or getattr(option, "stepwise", False):
        return "--deselect/--lf/--sw selected a subset of the tests"
    if deselected:
        return f"{deselected} tests were deselected"
    if not outcomes:
        return "no test ran"
    return None


def run_manifest(
    rootdir: Path,
    store_root: Path | None,
    outcomes: Mapping[str, str],
    locations: Mapping[str, str],
    used: Mapping[str, Iterable[str]],
) -> dict[str, Any]:
    """What a full run used: per test its outcome, ledger file and keys; and the directories covered."""
    tests: dict[str, Any] = {}
    dirs: set[Path] = set()
    module_dirs: set[Path] = set()
    for nodeid, outcome in outcomes.items():
        location = locations.get(nodeid)
        if not location or "::" not in nodeid:
            continue
        module = (rootdir / location).resolve()
        if module.suffix != ".py":
            continue
        path = ledger_path(module, nodeid.split("::", 1)[1], store_root=store_root, rootdir=rootdir)
        dirs.add(path.parent)
        module_dirs.add(module.parent)
        tests[nodeid] = {"outcome": outcome, "ledger": _rel(path, rootdir), "used": sorted(used.get(str(path), ()))}
    if store_root is None:  # verdicts of modules that no longer exist, beside modules that ran
        for folder in module_dirs:
            verdicts = folder / "judge_verdicts"
            if verdicts.is_dir():
                dirs.update(d for d in verdicts.iterdir() if d.is_dir() and not (folder / f"{d.name}.py").exists())
    return {
        "format": MANIFEST_FORMAT,
        "rootdir": str(rootdir),
        "written": time.time(),
        "dirs": sorted(_rel(d, rootdir) for d in dirs),
        "tests": dict(sorted(tests.items())),
    }


def _rel(path: Path, rootdir: Path) -> str:
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(_resolved(rootdir)))
    except ValueError:
        return str(resolved)


@functools.lru_cache(maxsize=8)
def _resolved(rootdir: Path) -> Path:
    """rootdir, resolved once: _rel runs for every test of a run."""
    return rootdir.resolve()


def save_manifest(config: pytest.Config, manifest: Mapping[str, Any]) -> None:
    """Keep the manifest in pytest's cache (nothing, with the cache provider off)."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        cache.set(MANIFEST_KEY, dict(manifest))


# -- finding a manifest outside pytest ---------------------------------------------------------


def manifest_file(cache_dir: Path) -> Path:
    """Where `config.cache.set(MANIFEST_KEY, ...)` writes the manifest in a pytest cache directory."""
    return cache_dir / _CACHE_VALUES / MANIFEST_KEY


def find_manifest(cache_dir: str | Path | None, start: Path) -> Path:
    """The manifest in `cache_dir`, else in the nearest `.pytest_cache` at or above `start`."""
    if cache_dir:
        path = manifest_file(Path(cache_dir))
        if not path.is_file():
            raise ManifestError(
                f"no used-keys manifest at {path}: run the whole test suite once (pytest, cache provider on)"
            )
        return path
    here = start.resolve()
    for folder in (here, *here.parents):
        path = manifest_file(folder / PYTEST_CACHE_DIR)
        if path.is_file():
            return path
    raise ManifestError(
        f"no used-keys manifest ({manifest_file(Path(PYTEST_CACHE_DIR))}) here or above: run the whole test suite "
        "once (pytest, with the cache provider on), or pass --cache-dir"
    )


def project_root(manifest_path: Path) -> Path:
    """The project a manifest belongs to, by where it sits: the folder holding the pytest cache directory."""
    cache_dir = manifest_path
    for _ in Path(_CACHE_VALUES, MANIFEST_KEY).parts:
        cache_dir = cache_dir.parent
    return cache_dir.parent


def load_manifest(path: Path) -> dict[str, Any]:
    """A manifest file, checked for its format; ManifestError when it is not one."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: unreadable used-keys manifest ({exc.__class__.__name__})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise ManifestError(f"{path}: not a used-keys manifest of format {MANIFEST_FORMAT}")
    return manifest


# -- the plan ------------------------------------------------------------------------------------


@dataclass
class PruneAction:
    """One verdict file to rewrite with only `kept`, or to delete when nothing is kept."""

    path: Path
    test: str
    removed: list[str]
    kept: dict[str, dict[str, Any]]
    reason: str

    @property
    def deletes_file(self) -> bool:
        return not self.kept


@dataclass
class PrunePlan:
    """Every file prune changes, the notes on files it skipped, and how many verdicts stay."""

    actions: list[PruneAction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept: int = 0

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
        for path in sorted(directory.glob("*.json")):
            try:
                ledger = LedgerDocument.read(path)
            except StoreError as exc:
                plan.notes.append(f"skipped {exc}")
                continue
            if path.stat().st_mtime > written + 1:
                plan.notes.append(f"skipped {path}: changed since the run that wrote the manifest")
                plan.kept += len(ledger.entries)
                continue
            test = tests.get(ledger.test)
            if test is None:
                action = PruneAction(path, ledger.test, sorted(ledger.entries), {}, "its test no longer exists")
            elif test.get("outcome") != "passed":
                plan.kept += len(ledger.entries)
                continue
            else:
                used = set(test.get("used") or ())
                kept = {k: v for k, v in ledger.entries.items() if k in used}
                removed = sorted(k for k in ledger.entries if k not in used)
                if not removed:
                    plan.kept += len(kept)
                    continue
                action = PruneAction(path, ledger.test, removed, kept, "not used by its test")
            plan.kept += len(action.kept)
            plan.actions.append(action)
    return plan


def apply_prune(plan: PrunePlan) -> None:
    """Rewrite or delete the files the plan names (an emptied verdict directory goes too)."""
    for action in plan.actions:
        if action.deletes_file:
            action.path.unlink(missing_ok=True)
            try:
                action.path.parent.rmdir()  # only when empty
            except OSError:
                pass
        else:
            LedgerDocument(action.path, action.test, action.kept).write()
