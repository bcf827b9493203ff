"""Judging from a command run outside pytest, with the settings a pytest run in the same folder would use.

`load_settings` resolves every judge option as `pytest` would: the `--judge-*` values given on the
command line, then the environment (`LLMJUDGE_*`), then the ini file pytest would read, with the
mode defaulting to replay on CI.  The ini file is found as pytest finds it: walking up from the
current directory, the first folder holding `pytest.toml`, `.pytest.toml`, `pytest.ini` or
`.pytest.ini` (used even without a pytest section), `pyproject.toml` with `[tool.pytest]` or
`[tool.pytest.ini_options]`, `tox.ini` with `[pytest]` or `setup.cfg` with `[tool:pytest]`; failing
that, a `pyproject.toml` without a pytest table still roots the run.  The ini `addopts` and
`PYTEST_ADDOPTS` are applied too (their `--judge-*` and `-o judge_*=` parts), in pytest's order.
The rootdir is the ini file's folder, else the folder of the nearest `setup.py`, else the current
directory.

`add_judge_options` adds every `--judge-*` option of `settings.OPTIONS` to an argparse parser, and
`command_context` gives a command's judgments a verdict file of their own, so that they record
and replay like any test's: `judge_verdicts/<command>/<input file stem>.json` under the rootdir,
or `<--judge-store>/<command>/<input file stem>.json`.
"""

from __future__ import annotations

import argparse
import configparser
import os
import shlex
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import first_line
from .runtime import JudgeRuntime, TestContext, activate, deactivate
from .settings import OPTIONS, SettingError, Settings, resolve

if TYPE_CHECKING:
    from .judge import Judge

__all__ = [
    "CommandContext",
    "CommandSettings",
    "IniFile",
    "add_judge_options",
    "command_context",
    "find_inifile",
    "judge_cli_values",
    "load_settings",
]

# pytest's own order (pytest 9; pytest 8 knows the same names but the .toml ones).
INI_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
PYTEST_CACHE_DIR = ".pytest_cache"  # pytest's `cache_dir` default
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by pytest.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/spec.html\n"
)


@dataclass(frozen=True)
class IniFile:
    """The configuration file pytest would use (`path` None: none) and its pytest values."""

    path: Path | None
    values: Mapping[str, Any]


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
        return _under(self.rootdir, self.settings.store) if self.settings.store else None

    @property
    def cache_dir(self) -> Path | None:
        """The local verdict cache: `--judge-cache-dir`, else the folder pytest's cache gives it."""
        if self.settings.cache_dir:
            return _under(self.rootdir, self.settings.cache_dir)
        if self.pytest_cache_dir is None:
            return None
        return self.pytest_cache_dir / "d" / "llmjudge"


def _under(rootdir: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else rootdir / path


# -- the command line ----------------------------------------------------------------------------


def add_judge_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add every `--judge-*` option (from `settings.OPTIONS`) to `parser`; each defaults to None (not given)."""
    for option in OPTIONS:
        text = f"{option.help} [ini: {option.ini}, env: {option.env}]".replace("%", "%%")
        if option.flag:
            parser.add_argument(option.cli, action="store_true", dest=option.dest, default=None, help=text)
        else:
            parser.add_argument(option.cli, dest=option.dest, metavar=option.metavar, default=None, help=text)


def judge_cli_values(args: argparse.Namespace) -> dict[str, Any]:
    """The `--judge-*` values in parsed arguments, by option name (None: not given)."""
    return {option.name: getattr(args, option.dest, None) for option in OPTIONS}


def _addopts_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_judge_options(parser)
    parser.add_argument("-o", "--override-ini", dest="override_ini", action="append", default=[])
    return parser


def _addopts(words: Sequence[str], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The `--judge-*` values and `-o judge_*=` overrides in pytest options; everything else is pytest's."""
    known, _ = _addopts_parser().parse_known_args(list(words))
    overrides: dict[str, str] = {}
    for item in known.override_ini:
        name, sep, value = str(item).partition("=")
        if not sep:
            raise SettingError(f"{where}: -o/--override-ini expects option=value, got {item!r}")
        overrides[name.strip()] = value
    return {k: v for k, v in judge_cli_values(known).items() if v is not None}, overrides


def _split(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return shlex.split(str(value)) if value else []


# -- the ini file ----------------------------------------------------------------------------------


def _read_ini(path: Path, section: str) -> dict[str, Any] | None:
    parser = configparser.RawConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep the keys' case, as pytest does
    try:
        parser.read_string(path.read_text(encoding="utf-8"), source=str(path))
    except (configparser.Error, OSError, UnicodeDecodeError) as exc:
        raise SettingError(f"{path}: cannot read the ini file ({first_line(exc)})") from None
    if not parser.has_section(section):
        return None
    return dict(parser.items(section))


def _read_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - pytest depends on tomli below 3.11
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        document: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        return document
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise SettingError(f"{path}: cannot read the TOML file ({exc})") from None


def _pyproject_values(document: Mapping[str, Any]) -> dict[str, Any] | None:
    tool = document.get("tool")
    table = tool.get("pytest") if isinstance(tool, Mapping) else None
    if not isinstance(table, Mapping):
        return None
    native = {k: v for k, v in table.items() if k != "ini_options"}
    if native:
        return native
    ini_options = table.get("ini_options")
    if isinstance(ini_options, Mapping):
        # ini mode: pytest reads scalars as their text, lists as lists.
        return {k: v if isinstance(v, list) else str(v) for k, v in ini_options.items()}
    return None


def _load(path: Path) -> dict[str, Any] | None:
    name = path.name
    if name in ("pytest.toml", ".pytest.toml"):
        table = _read_toml(path).get("pytest")
        return dict(table) if isinstance(table, Mapping) else {}
    if name in ("pytest.ini", ".pytest.ini"):
        return _read_ini(path, "pytest") or {}
    if name == "pyproject.toml":
        return _pyproject_values(_read_toml(path))
    if name == "tox.ini":
        return _read_ini(path, "pytest")
    return _read_ini(path, "tool:pytest")  # setup.cfg


def find_inifile(start: Path) -> IniFile:
    """The configuration file pytest would use when run in `start` with no arguments, and its values."""
    first_pyproject: Path | None = None
    for folder in (start, *start.parents):
        for name in INI_NAMES:
            path = folder / name
            if not path.is_file():
                continue
            if name == "pyproject.toml" and first_pyproject is None:
                first_pyproject = path
            values = _load(path)
            if values is not None:
                return IniFile(path, values)
    if first_pyproject is not None:
        return IniFile(first_pyproject, {})
    return IniFile(None, {})


def _rootdir(start: Path, inifile: Path | None) -> Path:
    if inifile is not None:
        return inifile.parent
    for folder in (start, *start.parents):
        if (folder / "setup.py").is_file():
            return folder
    return start


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
    ini = find_inifile(start)
    rootdir = _rootdir(start, ini.path)
    ini_values: dict[str, Any] = dict(ini.values)

    # pytest prepends the ini addopts, then PYTEST_ADDOPTS, to the command line: later ones win.
    given: dict[str, Any] = {}
    for words, where in (
        (_split(ini_values.get("addopts")), f"{ini.path}: addopts"),
        (shlex.split(environ.get("PYTEST_ADDOPTS", "")), "PYTEST_ADDOPTS"),
    ):
        values, overrides = _addopts(words, where)
        given.update(values)
        ini_values.update(overrides)
    given.update({k: v for k, v in (cli or {}).items() if v is not None})

    settings = resolve(given, {o.name: ini_values.get(o.ini) for o in OPTIONS}, environ)
    cache = ini_values.get("cache_dir")
    pytest_cache = _under(rootdir, os.path.expandvars(str(cache))) if cache else rootdir / PYTEST_CACHE_DIR
    return CommandSettings(settings, rootdir, ini.path, pytest_cache)


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
    from .store import ledger_filename

    base = config.store_root if config.store_root is not None else config.rootdir / "judge_verdicts"
    return base / command / ledger_filename(input_file.stem)


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
    runtime = JudgeRuntime(
        config.settings,
        rootdir=config.rootdir,
        cache_dir=lambda: _pytest_cache_dir(config),
        store_root=config.store_root,
    )
    context = TestContext(nodeid, source, source.stem)
    context.ledger = runtime.ledger_at(path, nodeid)
    runtime.current = context
    activate(runtime)
    try:
        yield CommandContext(runtime, context, path)
    finally:
        runtime.current = None
        runtime.close()
        deactivate(runtime)
