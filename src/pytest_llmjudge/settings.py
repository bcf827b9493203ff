"""The plugin's options: one table, resolved once per session into a frozen `Settings`.

Each option exists three times: `--judge-x` on the command line, `judge_x` in the ini file and
`LLMJUDGE_X` in the environment.  Precedence, as pytest-timeout's: default < ini < environment <
CLI < the `@pytest.mark.judge` marker on the test (the most specific setting) < the arguments passed
to `assert_judged` itself.  `parser.addini` has no
environment fallback, so the order is resolved here rather than left to pytest.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from .options import OPTION_TABLE, cli_name, dest_name, env_name, ini_name

MODES = ("auto", "replay", "refresh", "live")
STRUCTURED_MODES = ("auto", "on", "off")  # --judge-structured: see `structured`
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# The cap on a judge's reply when --judge-max-tokens is not set.  A verdict (reasoning and a score)
# takes 50-400 tokens; 2048 leaves five times that, yet stops a small local model that runs on (one
# wrote 3,252 tokens in JSON mode until the timeout) within about a minute.  With a reasoning effort
# set no default cap is sent: a reasoning model's thinking counts against it, and the effort bounds it.
# Only the request carries it: a key names the configured value, so keys made without one never change.
DEFAULT_MAX_TOKENS = 2048
# The temperature samples are drawn at when several are asked for and none is configured: the
# providers' own default (OpenAI, Anthropic, Gemini), the model's distribution as trained.
SAMPLING_TEMPERATURE = 1.0

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


class SamplesWarning(UserWarning):
    """Several samples were asked for, but the settings make every sample the same request."""


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


class Price(NamedTuple):
    """A judge's price in US dollars per million tokens (--judge-price)."""

    input: float
    output: float

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The dollars a call with these token counts costs at this price."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


def _parse_price(name: str) -> Callable[[Any], Price]:
    usage = f"{name} takes dollars per million tokens as input=X,output=Y (or one number for both)"

    def number(text: Any) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise SettingError(f"{usage}; got {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise SettingError(f"{usage}, each a finite number >= 0; got {text!r}")
        return value

    def parse(raw: Any) -> Price:
        if isinstance(raw, (list, tuple)) and len(raw) == 2:  # a Price handed to a test's subprocess as JSON
            return Price(number(raw[0]), number(raw[1]))
        text = str(raw).strip()
        if "=" not in text:
            value = number(text)
            return Price(value, value)
        parts: dict[str, float] = {}
        for item in text.split(","):
            name, sep, amount = item.partition("=")
            name = name.strip().lower()
            if not sep or name not in ("input", "output") or name in parts:
                raise SettingError(f"{usage}; got {raw!r}")
            parts[name] = number(amount.strip())
        if set(parts) != {"input", "output"}:
            raise SettingError(f"{usage}: give both input= and output=; got {raw!r}")
        return Price(parts["input"], parts["output"])

    return parse


# Parameters `--judge-params` may not set: each has its own option, or the plugin or a rubric sets it,
# or it is transport (never part of a key, and a secret would end up in the verdict files).
RESERVED_PARAMS = {
    "model": "--judge-model",
    "messages": "the rubric",
    "temperature": "--judge-temperature",
    "max_tokens": "--judge-max-tokens",
    "max_completion_tokens": "--judge-max-tokens",
    "reasoning_effort": "--judge-reasoning-effort",
    "logprobs": "the rubric",
    "top_logprobs": "the rubric",
    "response_format": "the rubric",
    "stream": "the plugin (it reads whole replies)",
    "n": "--judge-samples",
    "timeout": "--judge-timeout",
    "num_retries": "--judge-retries",
    "max_retries": "--judge-retries",
    "api_base": "--judge-api-base",
    "base_url": "--judge-api-base",
    "api_key": "the provider's key variable (a key must never be stored in a verdict file)",
    "extra_headers": "LiteLLM's own configuration (headers may hold credentials)",
    "headers": "LiteLLM's own configuration (headers may hold credentials)",
}


def _parse_names(name: str) -> Callable[[Any], tuple[str, ...]]:
    def parse(raw: Any) -> tuple[str, ...]:
        parts = [str(p).strip() for p in raw] if isinstance(raw, (list, tuple)) else str(raw).split(",")
        names = tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
        for each in names:
            if not each.isidentifier() or not each.isascii():
                raise SettingError(f"{name} takes environment variable names separated by commas; got {each!r}")
        return names

    return parse


def _parse_params(name: str) -> Callable[[Any], dict[str, Any]]:
    def parse(raw: Any) -> dict[str, Any]:
        if isinstance(raw, Mapping):
            value: Any = dict(raw)
        else:
            try:
                value = json.loads(str(raw))
            except ValueError as exc:
                example = '{"seed": 7}'
                raise SettingError(f"{name} must be a JSON object, e.g. '{example}'; got {raw!r} ({exc})") from None
        if not isinstance(value, dict):
            raise SettingError(f"{name} must be a JSON object (name: value), got {raw!r}")
        for key in value:
            if not isinstance(key, str) or not key:
                raise SettingError(f"{name}: parameter names must be non-empty strings, got {key!r}")
            if key in RESERVED_PARAMS:
                raise SettingError(f"{name} may not set {key!r}: that is {RESERVED_PARAMS[key]}'s to set")
        try:  # part of the verdict key: it must be plain JSON
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise SettingError(f"{name} must hold plain JSON values (text, numbers, lists, objects): {exc}") from None
        return value

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
        return cli_name(self.name)

    @property
    def ini(self) -> str:
        return ini_name(self.name)

    @property
    def env(self) -> str:
        return env_name(self.name)

    @property
    def dest(self) -> str:
        return dest_name(self.name)


# Each option's parser and default, by name; the names, help and metavars are in `options`.
_PARSE_AND_DEFAULT: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "model": (_parse_models("--judge-model"), None),
    "mode": (_parse_choice("--judge-mode", MODES), None),
    "threshold": (_parse_float("--judge-threshold", 0.0, 1.0), 0.5),
    "api_base": (_parse_text("--judge-api-base"), None),
    "temperature": (_parse_float("--judge-temperature", 0.0, 2.0), 0.0),
    "timeout": (_parse_float("--judge-timeout", 0.0, low_open=True), 120.0),
    "retries": (_parse_int("--judge-retries", 0), 3),
    "concurrency": (_parse_int("--judge-concurrency", 1), 8),
    "samples": (_parse_int("--judge-samples", 1), 1),
    "store": (_parse_text("--judge-store"), None),
    "cache_dir": (_parse_text("--judge-cache-dir"), None),
    "budget": (_parse_float("--judge-budget", 0.0), None),
    "report": (_parse_text("--judge-report"), None),
    "html": (_parse_text("--judge-html"), None),
    "drift": (_parse_float("--judge-drift", 0.0, 1.0), 0.1),
    "prune": (_parse_bool("--judge-prune"), False),
    "structured": (_parse_choice("--judge-structured", STRUCTURED_MODES), "auto"),
    "parse_retries": (_parse_int("--judge-parse-retries", 0), 1),
    "generate_model": (_parse_text("--generate-model"), None),
    "generate_api_base": (_parse_text("--generate-api-base"), None),
    "budget_tokens": (_parse_int("--judge-budget-tokens", 1), None),
    "price": (_parse_price("--judge-price"), None),
    "max_tokens": (_parse_int("--judge-max-tokens", 1), None),
    "reasoning_effort": (_parse_choice("--judge-reasoning-effort", REASONING_EFFORTS), None),
    "params": (_parse_params("--judge-params"), None),
    "instructions_in_user": (_parse_bool("--judge-instructions-in-user"), False),
    "redact_env": (_parse_names("--judge-redact-env"), ()),
}

OPTIONS: tuple[Option, ...] = tuple(
    Option(name, help_text, *_PARSE_AND_DEFAULT[name], metavar, flag, marker)
    for name, help_text, metavar, flag, marker in OPTION_TABLE
)

OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
MARKER_KEYS = (*(o.name for o in OPTIONS if o.marker), "rubric")


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
    structured: str = "auto"
    parse_retries: int = 1
    generate_model: str | None = None  # the model under test, for `generate`
    generate_api_base: str | None = None
    budget_tokens: int | None = None
    price: Price | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    params: Mapping[str, Any] | None = None  # the user's further request parameters (seed, penalties, ...)
    instructions_in_user: bool = False
    redact_env: tuple[str, ...] = ()  # variables redacted besides the credential-like ones
    mode_reason: str = "default"
    sources: Mapping[str, str] = {}  # option name -> "cli", "env", "ini" or "default"; never mutated
    overridden: frozenset[str] = frozenset()  # options a marker or `assert_judged` argument set

    def configured(self, name: str) -> bool:
        """Whether option `name` was set anywhere (CLI, marker, argument, environment, ini), not defaulted."""
        return name in self.overridden or self.sources.get(name, "default") != "default"

    def reply_cap(self) -> int | None:
        """The max_tokens a judge call sends: as configured, else DEFAULT_MAX_TOKENS, except with a reasoning
        effort set (then none: the model's thinking counts against the cap, and the effort bounds it)."""
        if self.max_tokens is not None:
            return self.max_tokens
        return None if self.reasoning_effort is not None else DEFAULT_MAX_TOKENS

    def judge_temperature(self) -> float:
        """The temperature judgments ask for: as configured; several samples with none configured are
        drawn at SAMPLING_TEMPERATURE, so they are independent rather than one reply repeated."""
        if self.samples > 1 and not self.configured("temperature"):
            return SAMPLING_TEMPERATURE
        return self.temperature

    def with_marker(self, overrides: Mapping[str, Any], *, where: str = "@pytest.mark.judge") -> Settings:
        """Apply `@pytest.mark.judge(...)` values (or a call's own arguments): the test's own settings
        win over the session's, the command line's included, as pytest-timeout's marker does."""
        changes: dict[str, Any] = {}
        for name, raw in overrides.items():
            if name == "rubric":
                continue
            option = OPTIONS_BY_NAME[name]
            try:
                changes[name] = option.parse(raw)
            except SettingError as exc:
                raise SettingError(f"{where}({name}=...): {exc}") from None
        if not changes:
            return self
        return self._replace(**changes, overridden=self.overridden | changes.keys())


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
