"""The plugin's options: one table, resolved once per session into a frozen `Settings`.

Each option exists three times: `--judge-x` on the command line, `judge_x` in the ini file and
`LLMJUDGE_X` in the environment.  Precedence is CLI > marker > environment > ini > default;
arguments passed to `assert_judged` itself are the most specific of all.  `parser.addini` has no
environment fallback, so the order is resolved here rather than left to pytest.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

MODES = ("auto", "replay", "refresh", "live")

# Environment variables that CI services set; the first one present and truthy names the reason
# replay becomes the default mode.
CI_VARIABLES = (
    "CI",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "JENKINS_URL",
    "TF_BUILD",
    "TEAMCITY_VERSION",
    "TRAVIS",
    "BITBUCKET_BUILD_NUMBER",
)


class SettingError(ValueError):
    """A setting has a value outside what it allows; the message names both."""


def _parse_float(
    name: str, low: float | None = None, high: float | None = None, *, low_open: bool = False
) -> Callable[[Any], float]:
    def parse(raw: Any) -> float:
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise SettingError(f"{name} must be a number, got {raw!r}") from None
        if not math.isfinite(value):
            raise SettingError(f"{name} must be a finite number, got {raw!r}")
        if low is not None and (value <= low if low_open else value < low):
            bound = f"> {low:g}" if low_open else f">= {low:g}"
            raise SettingError(
                f"{name} must be {bound}" + (f" and <= {high:g}" if high is not None else "") + f", got {raw!r}"
            )
        if high is not None and value > high:
            raise SettingError(f"{name} must be between {low or 0:g} and {high:g}, got {raw!r}")
        return value

    return parse


def _parse_int(name: str, low: int) -> Callable[[Any], int]:
    def parse(raw: Any) -> int:
        if isinstance(raw, bool):
            raise SettingError(f"{name} must be a whole number >= {low}, got {raw!r}")
        try:
            value = int(str(raw).strip()) if not isinstance(raw, int) else raw
        except ValueError:
            raise SettingError(f"{name} must be a whole number >= {low}, got {raw!r}") from None
        if value < low:
            raise SettingError(f"{name} must be a whole number >= {low}, got {raw!r}")
        return value

    return parse


def _parse_choice(name: str, choices: tuple[str, ...]) -> Callable[[Any], str]:
    def parse(raw: Any) -> str:
        value = str(raw).strip().lower()
        if value not in choices:
            raise SettingError(f"{name} must be one of {', '.join(choices)}; got {raw!r}")
        return value

    return parse


def _parse_models(name: str) -> Callable[[Any], tuple[str, ...]]:
    def parse(raw: Any) -> tuple[str, ...]:
        if isinstance(raw, (list, tuple)):
            parts = [str(p).strip() for p in raw]
        else:
            parts = [p.strip() for p in str(raw).split(",")]
        if not parts or any(not p for p in parts):
            raise SettingError(f"{name} must name a model, or several separated by commas; got {raw!r}")
        return tuple(parts)

    return parse


def _parse_text(name: str) -> Callable[[Any], str]:
    def parse(raw: Any) -> str:
        value = str(raw).strip()
        if not value:
            raise SettingError(f"{name} must not be empty")
        return value

    return parse


def _parse_bool(name: str) -> Callable[[Any], bool]:
    def parse(raw: Any) -> bool:
        if isinstance(raw, bool):
            return raw
        value = str(raw).strip().lower()
        if value in ("1", "true", "yes", "on"):
            return True
        if value in ("0", "false", "no", "off", ""):
            return False
        raise SettingError(f"{name} must be true or false, got {raw!r}")

    return parse


class Option(NamedTuple):
    """One setting: its name in each place it can be given, its parser and its help."""

    name: str  # the Settings field, e.g. "model"
    help: str
    parse: Callable[[Any], Any]
    default: Any = None
    metavar: str = "VALUE"
    flag: bool = False  # a CLI switch without a value
    marker: bool = False  # may be overridden by @pytest.mark.judge(...)

    @property
    def cli(self) -> str:
        return "--judge-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "judge_" + self.name

    @property
    def env(self) -> str:
        return "LLMJUDGE_" + self.name.upper()

    @property
    def dest(self) -> str:
        return "judge_" + self.name


OPTIONS: tuple[Option, ...] = (
    Option(
        "model",
        "judge model as LiteLLM names it (e.g. gpt-4o-mini, openai/llama3); several, comma-separated, form a panel",
        _parse_models("--judge-model"),
        None,
        "MODEL",
        marker=True,
    ),
    Option(
        "mode",
        "auto: stored verdict, else judge and store; replay: stored only, a miss fails; "
        "refresh: judge again and overwrite; live: judge, store nothing (default: replay on CI, else auto)",
        _parse_choice("--judge-mode", MODES),
        None,
        "MODE",
    ),
    Option(
        "threshold",
        "score a judgment needs to pass, in [0, 1] (default 0.5)",
        _parse_float("--judge-threshold", 0.0, 1.0),
        0.5,
        "SCORE",
        marker=True,
    ),
    Option(
        "api_base",
        "base URL of the judge's API, e.g. http://127.0.0.1:8000/v1",
        _parse_text("--judge-api-base"),
        None,
        "URL",
        marker=True,
    ),
    Option(
        "temperature",
        "sampling temperature for the judge (default 0)",
        _parse_float("--judge-temperature", 0.0, 2.0),
        0.0,
        "T",
        marker=True,
    ),
    Option(
        "timeout",
        "deadline in seconds for one judgment, retries included (default 120)",
        _parse_float("--judge-timeout", 0.0, low_open=True),
        120.0,
        "SECONDS",
    ),
    Option(
        "retries",
        "retries after a rate limit, server error, timeout or dropped connection (default 3)",
        _parse_int("--judge-retries", 0),
        3,
        "N",
    ),
    Option(
        "concurrency",
        "judge calls in flight at once in this process (default 8)",
        _parse_int("--judge-concurrency", 1),
        8,
        "N",
    ),
    Option(
        "samples",
        "judge each prompt N times and combine the samples (default 1)",
        _parse_int("--judge-samples", 1),
        1,
        "N",
        marker=True,
    ),
    Option(
        "store",
        "directory of the committed verdict files (default: judge_verdicts/ beside each test module)",
        _parse_text("--judge-store"),
        None,
        "DIR",
    ),
    Option(
        "cache_dir",
        "directory of the local verdict cache (default: under pytest's cache dir)",
        _parse_text("--judge-cache-dir"),
        None,
        "DIR",
    ),
    Option(
        "budget",
        "stop live judge calls once this many US dollars are spent",
        _parse_float("--judge-budget", 0.0),
        None,
        "USD",
    ),
    Option("report", "write every judgment of the run to this JSON file", _parse_text("--judge-report"), None, "PATH"),
    Option(
        "html", "write a self-contained HTML report of the run to this file", _parse_text("--judge-html"), None, "PATH"
    ),
    Option(
        "drift",
        "in refresh mode, report verdicts whose score moved by more than this (default 0.1)",
        _parse_float("--judge-drift", 0.0, 1.0),
        0.1,
        "DELTA",
    ),
    Option(
        "prune",
        "after a full, successful run, remove stored verdicts no test used",
        _parse_bool("--judge-prune"),
        False,
        flag=True,
    ),
)

OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
MARKER_KEYS = tuple(o.name for o in OPTIONS if o.marker) + ("rubric",)


class Settings(NamedTuple):
    """Every option's resolved value, plus where the mode came from (for the header).

    Immutable.  A NamedTuple rather than a frozen dataclass: every pytest start-up defines it, and
    a dataclass of this size takes milliseconds to define.
    """

    model: tuple[str, ...] | None = None
    mode: str = "auto"
    threshold: float = 0.5
    api_base: str | None = None
    temperature: float = 0.0
    timeout: float = 120.0
    retries: int = 3
    concurrency: int = 8
    samples: int = 1
    store: str | None = None
    cache_dir: str | None = None
    budget: float | None = None
    report: str | None = None
    html: str | None = None
    drift: float = 0.1
    prune: bool = False
    mode_reason: str = "default"
    sources: Mapping[str, str] = {}  # option name -> "cli", "env", "ini" or "default"; never mutated

    def with_marker(
        self, overrides: Mapping[str, Any], *, force: bool = False, where: str = "@pytest.mark.judge"
    ) -> Settings:
        """Apply `@pytest.mark.judge(...)` values, except where the command line already set one.

        `force` applies them regardless: arguments passed to `assert_judged` itself win over all.
        """
        changes: dict[str, Any] = {}
        for name, raw in overrides.items():
            if name == "rubric" or (self.sources.get(name) == "cli" and not force):
                continue
            option = OPTIONS_BY_NAME[name]
            try:
                changes[name] = option.parse(raw)
            except SettingError as exc:
                raise SettingError(f"{where}({name}=...): {exc}") from None
        return self._replace(**changes) if changes else self


def detect_ci(environ: Mapping[str, str]) -> str | None:
    """Name the CI variable that is set (and not false-ish), or None off CI."""
    for name in CI_VARIABLES:
        value = environ.get(name, "").strip().lower()
        if value and value not in ("0", "false", "no", "off"):
            return name
    return None


def resolve(
    cli: Mapping[str, Any],
    ini: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve every option from the CLI, environment and ini values; raise SettingError if bad.

    `cli` and `ini` map option names to raw values, None (or "") meaning not given.
    """
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for option in OPTIONS:
        for source, raw, label in (
            ("cli", cli.get(option.name), option.cli),
            ("env", environ.get(option.env), option.env),
            ("ini", ini.get(option.name), option.ini),
        ):
            if raw is None or raw == "" or (option.flag and raw is False):
                continue
            try:
                values[option.name] = option.parse(raw)
            except SettingError as exc:
                # Name the place the bad value came from, in the spelling used there.
                message = str(exc).replace(option.cli, label, 1)
                raise SettingError(message) from None
            sources[option.name] = source
            break
        else:
            values[option.name] = option.default
            sources[option.name] = "default"

    if values["mode"] is None:
        ci = detect_ci(environ)
        values["mode"] = "replay" if ci else "auto"
        reason = f"CI detected: {ci} is set" if ci else "default"
    else:
        reason = {"cli": "--judge-mode", "env": "LLMJUDGE_MODE", "ini": "judge_mode in ini"}[sources["mode"]]
    return Settings(**values, mode_reason=reason, sources=sources)
