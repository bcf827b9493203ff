"""Judging from a command run outside pytest, with the settings a pytest run in the same folder would use.

`load_settings` lets pytest itself read its configuration in the folder (ini file, rootdir, addopts,
`-o`), stopping before anything is configured, and reads the judge options from it as the plugin does;
the command's own `--judge-*` values win.  `command_context` gives a command's judgments a verdict file
of their own (`<store>/<command>/<input file stem>.json`), so they record and replay like a test's.
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .options import OPTIONS, add_options, judge_values
from .runtime import JudgeRuntime, TestContext, activate, deactivate
from .settings import SettingError, Settings, resolve, under

if TYPE_CHECKING:
    from .judge import Judge


PYTEST_CACHE_DIR = ".pytest_cache"  # pytest's `cache_dir` default
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by pytest.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/spec.html\n"
)


@dataclass(frozen=True)
class CommandSettings:
    """A command's resolved judge settings, the rootdir pytest would use, and where things live."""

    settings: Settings
    rootdir: Path
    inifile: Path | None = None
    pytest_cache_dir: Path | None = None  # pytest's cache folder (its `cache_dir`), for the local verdict cache

    @property
    def store_root(self) -> Path | None:
        """The `--judge-store` folder, made absolute against the rootdir (None: the default layout)."""
        return under(self.rootdir, self.settings.store) if self.settings.store else None

    @property
    def cache_dir(self) -> Path | None:
        """The local verdict cache: `--judge-cache-dir`, else the folder pytest's cache gives it."""
        if self.settings.cache_dir:
            return under(self.rootdir, self.settings.cache_dir)
        if self.pytest_cache_dir is None:
            return None
        return self.pytest_cache_dir / "d" / "llmjudge"


# -- the command line ----------------------------------------------------------------------------


def add_judge_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add every `--judge-*` option to `parser`, as pytest has them; each defaults to None (not given)."""
    add_options(parser.add_argument)


def judge_cli_values(args: argparse.Namespace) -> dict[str, Any]:
    """The `--judge-*` values in parsed arguments, by option name (None: not given)."""
    return {option.name: getattr(args, option.dest, None) for option in OPTIONS}


# -- pytest's configuration ------------------------------------------------------------------------


class _TakeConfig:
    """A plugin for `pytest.main` that keeps the parsed `Config` and ends the run before it configures."""

    def __init__(self) -> None:
        self.config: pytest.Config | None = None

    @pytest.hookimpl(tryfirst=True)  # before `--judge-doctor`'s, which would configure the run
    def pytest_cmdline_main(self, config: pytest.Config) -> int:
        self.config = config
        return 0


@contextmanager
def _invoked_in(folder: Path, environ: Mapping[str, str]) -> Iterator[list[str]]:
    """The working folder pytest is invoked in, and `environ`'s PYTEST_ADDOPTS as leading arguments.

    pytest reads PYTEST_ADDOPTS from the process environment and puts it before the arguments (the
    ini `addopts` before both): passing it as arguments keeps that order for any `environ`.
    """
    before_dir = Path.cwd()
    before_addopts = os.environ.pop("PYTEST_ADDOPTS", None)
    os.chdir(folder)
    try:
        yield shlex.split(environ.get("PYTEST_ADDOPTS", ""))
    finally:
        os.chdir(before_dir)
        if before_addopts is not None:
            os.environ["PYTEST_ADDOPTS"] = before_addopts


def pytest_config(folder: Path, environ: Mapping[str, str]) -> pytest.Config:
    """The `Config` a plain `pytest` run in `folder` would use (conftest files are not imported)."""
    taker = _TakeConfig()
    with _invoked_in(folder, environ) as addopts:
        args = [*addopts, "--noconftest"]
        if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
            args += ["-p", "pytest_llmjudge.plugin"]
        code = pytest.main(args, plugins=[taker])
    if taker.config is None:
        raise SettingError(f"pytest could not read its configuration in {folder} (pytest exit status {int(code)})")
    return taker.config


def load_settings(
    cli: Mapping[str, Any] | None = None,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> CommandSettings:
    """Resolve the judge settings as a pytest run in `cwd` would (see the module docstring).

    `cli` maps option names to the values given on the command line (None: not given).  Raises
    `SettingError` naming the bad value and where it came from.
    """
    start = (cwd or Path.cwd()).resolve()
    environ = os.environ if environ is None else environ
    config = pytest_config(start, environ)
    try:
        given, ini = judge_values(config)
    except ValueError:  # the options are not registered: `-p no:llmjudge` in this configuration
        raise SettingError(f"pytest-llmjudge is disabled in the pytest configuration of {start}") from None
    given.update({k: v for k, v in (cli or {}).items() if v is not None})
    settings = resolve(given, ini, environ)
    rootdir = Path(config.rootpath)
    try:
        cache = str(config.getini("cache_dir") or PYTEST_CACHE_DIR)
    except ValueError:  # `-p no:cacheprovider`: pytest keeps no cache folder
        cache = PYTEST_CACHE_DIR
    pytest_cache = under(rootdir, os.path.expandvars(cache))
    inifile = Path(config.inipath) if config.inipath is not None else None
    return CommandSettings(settings, rootdir, inifile, pytest_cache)


# -- a command's verdict file ------------------------------------------------------------------------


@dataclass
class CommandContext:
    """A command's judging session: the runtime, the test context standing for the command, its verdict file."""

    runtime: JudgeRuntime
    context: TestContext
    verdict_file: Path

    def judge(self, **overrides: Any) -> Judge:
        """A `Judge` bound to this command's runtime and verdict file."""
        from .judge import Judge

        return Judge(runtime=self.runtime, context=self.context, **overrides)


def verdict_file(command: str, input_file: Path, config: CommandSettings) -> Path:
    """Where a command's verdicts for `input_file` live: `<command>/<stem>.json` in the store."""
    return command_file(command, input_file.stem, config.rootdir, config.store_root)


def command_file(command: str, name: str, rootdir: Path, store_root: Path | None) -> Path:
    """A command's verdict file `name` (`<command>/<name>.json`) in the store: under `--judge-store`, else in
    `judge_verdicts/` at the rootdir.  A pytest run finds it there too (`assert_judge_qualified`)."""
    from .store.verdict_file import verdict_filename

    base = store_root if store_root is not None else rootdir / "judge_verdicts"
    return base / command / verdict_filename(name)


def _pytest_cache_dir(config: CommandSettings) -> Path | None:
    """The local cache folder, made as pytest makes its cache folder (git-ignored, tagged) when it is inside it."""
    path = config.cache_dir
    if path is None:
        return None
    cache_root = config.pytest_cache_dir
    try:
        if not config.settings.cache_dir and cache_root is not None and not cache_root.is_dir():
            cache_root.mkdir(parents=True)
            (cache_root / ".gitignore").write_text("# Created by pytest automatically.\n*\n", encoding="utf-8")
            (cache_root / "CACHEDIR.TAG").write_text(_CACHEDIR_TAG, encoding="utf-8")
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # as in pytest: no cache rather than no run
    return path


@contextmanager
def command_runtime(config: CommandSettings) -> Iterator[JudgeRuntime]:
    """A runtime for a command's judgments, with the command's settings and store; active (as a pytest
    session's is) until the block ends, then closed."""
    runtime = JudgeRuntime(
        config.settings,
        rootdir=config.rootdir,
        cache_dir=lambda: _pytest_cache_dir(config),
        store_root=config.store_root,
    )
    activate(runtime)
    try:
        yield runtime
    finally:
        runtime.current = None
        runtime.close()
        deactivate(runtime)


@contextmanager
def command_context(
    command: str, input_file: str | os.PathLike[str], config: CommandSettings
) -> Iterator[CommandContext]:
    """A runtime whose judgments record into, and replay from, the command's own verdict file.

    The runtime is active (as a pytest session's is) until the block ends; then it is closed.
    """
    source = Path(input_file)
    path = verdict_file(command, source, config)
    try:
        shown = source.resolve().relative_to(config.rootdir).as_posix()
    except ValueError:
        shown = source.as_posix()
    nodeid = f"{command}::{shown}"
    with command_runtime(config) as runtime:
        context = TestContext(nodeid, source, source.stem)
        context.verdict_file = runtime.verdict_file_at(path, nodeid)
        runtime.current = context
        yield CommandContext(runtime, context, path)
