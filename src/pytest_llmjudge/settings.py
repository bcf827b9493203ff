"""The options of `options.OPTIONS`: the parsers their kinds name, resolved once per session into a `Settings`.

Precedence, as pytest-timeout's: default < ini < environment < CLI < the `@pytest.mark.judge` marker
(the most specific setting) < the arguments passed to `assert_judged` itself.  `parser.addini` has no
environment fallback, so the order is resolved here rather than left to pytest.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

# Declared with the option table; importers of the settings find them here too.
from .errors import Redacted
from .options import MARKER_KEYS as MARKER_KEYS
from .options import MARKER_ONLY, Option
from .options import OPTIONS as OPTIONS
from .options import OPTIONS_BY_NAME as OPTIONS_BY_NAME

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


class SamplesWarning(Redacted, UserWarning):
    """Several samples were asked for, but the settings make every sample the same request."""


class Price(NamedTuple):
    """A judge's price in US dollars per million tokens (--judge-price)."""

    input: float
    output: float

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The dollars a call with these token counts costs at this price."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


# -- the readers an option's kind names: (raw value, the option as spelled, the kind's arguments) -> value


def _number(raw: Any, name: str, low: float | None = None, high: float | None = None, low_open: bool = False) -> float:
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


def _above(raw: Any, name: str, low: float) -> float:
    return _number(raw, name, low, low_open=True)


def _whole(raw: Any, name: str, low: int) -> int:
    try:
        if isinstance(raw, bool):
            raise ValueError
        value = raw if isinstance(raw, int) else int(str(raw).strip())
        if value < low:
            raise ValueError
    except ValueError:
        raise SettingError(f"{name} must be a whole number >= {low}, got {raw!r}") from None
    return value


def _choice(raw: Any, name: str, *choices: str) -> str:
    value = str(raw).strip().lower()
    if value not in choices:
        raise SettingError(f"{name} must be one of {', '.join(choices)}; got {raw!r}")
    return value


def _items(raw: Any) -> list[str]:
    """A list's items, or a text's comma-separated parts, stripped."""
    return [str(p).strip() for p in (raw if isinstance(raw, (list, tuple)) else str(raw).split(","))]


def _models(raw: Any, name: str) -> tuple[str, ...]:
    parts = _items(raw)
    if not parts or any(not p for p in parts):
        raise SettingError(f"{name} must name a model, or several separated by commas; got {raw!r}")
    return tuple(parts)


def _text(raw: Any, name: str) -> str:
    value = str(raw).strip()
    if not value:
        raise SettingError(f"{name} must not be empty")
    return value


def _switch(raw: Any, name: str) -> bool:
    if isinstance(raw, bool):
        return raw
    value = str(raw).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise SettingError(f"{name} must be true or false, got {raw!r}")


def _names(raw: Any, name: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(p for p in _items(raw) if p))
    for each in names:
        if not each.isidentifier() or not each.isascii():
            raise SettingError(f"{name} takes environment variable names separated by commas; got {each!r}")
    return names


def _price(raw: Any, name: str) -> Price:
    usage = f"{name} takes dollars per million tokens as input=X,output=Y (or one number for both)"

    def number(text: Any) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise SettingError(f"{usage}; got {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise SettingError(f"{usage}, each a finite number >= 0; got {text!r}")
        return value

    if isinstance(raw, (list, tuple)) and len(raw) == 2:  # a Price handed to a test's subprocess as JSON
        return Price(number(raw[0]), number(raw[1]))
    text = str(raw).strip()
    if "=" not in text:
        value = number(text)
        return Price(value, value)
    parts: dict[str, float] = {}
    for item in text.split(","):
        side, sep, amount = item.partition("=")
        side = side.strip().lower()
        if not sep or side not in ("input", "output") or side in parts:
            raise SettingError(f"{usage}; got {raw!r}")
        parts[side] = number(amount.strip())
    if set(parts) != {"input", "output"}:
        raise SettingError(f"{usage}: give both input= and output=; got {raw!r}")
    return Price(parts["input"], parts["output"])


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


def _params(raw: Any, name: str) -> dict[str, Any]:
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


_READERS: dict[str, Callable[..., Any]] = {
    "number": _number,
    "above": _above,
    "whole": _whole,
    "choice": _choice,
    "models": _models,
    "text": _text,
    "switch": _switch,
    "names": _names,
    "price": _price,
    "params": _params,
}


def read(option: Option, raw: Any, where: str | None = None) -> Any:
    """The value of `raw` for `option`, or a SettingError naming it as `where` spells it (default: its flag)."""
    kind, *arguments = option.kind
    return _READERS[kind](raw, where or option.cli, *arguments)


def spelled(option: Option, value: Any) -> str | None:
    """The command-line argument that sets `option` to `value`, as `read` reads it back, quoted for a
    POSIX shell; None for a switch that is off (or a value that is unset)."""
    import shlex  # a replay miss's hint needs it, no run's start-up

    kind = option.kind[0]
    if value is None or (kind == "switch" and not value):
        return None
    if kind == "switch":
        return option.cli
    if kind in ("models", "names"):
        text = ",".join(value)
    elif kind == "params":
        text = json.dumps(dict(value), ensure_ascii=False)
    elif kind == "price":
        text = f"input={value.input!r},output={value.output!r}"
    else:
        text = str(value)
    return shlex.quote(f"{option.cli}={text}")


class Settings(NamedTuple):
    """Every option's resolved value, plus where the mode came from (for the header).

    One field per row of the option table, in its order (the types are here for the type checker;
    the defaults are the table's, set below).  Immutable.  A NamedTuple rather than a frozen
    dataclass: a configured run defines it at start-up, and a dataclass of this size takes
    milliseconds to define.
    """

    model: tuple[str, ...] | None
    mode: str
    threshold: float
    api_base: str | None
    temperature: float
    timeout: float
    retries: int
    concurrency: int
    samples: int
    store: str | None
    cache_dir: str | None
    budget: float | None
    report: str | None
    html: str | None
    drift: float
    prune: bool
    structured: str
    parse_retries: int
    generate_model: str | None  # the model under test, for `generate`
    generate_api_base: str | None
    budget_tokens: int | None
    price: Price | None
    max_tokens: int | None
    reasoning_effort: str | None
    params: Mapping[str, Any] | None  # the user's further request parameters (seed, penalties, ...)
    instructions_in_user: bool
    max_items: int  # items one judgment may rule on (claims, passages, turns): calls are checked against it
    redact_env: tuple[str, ...]  # variables redacted besides the credential-like ones
    summary: str | None  # where the run's Markdown summary is appended (else GITHUB_STEP_SUMMARY's file)
    runs: int  # runs of each judged test (--judge-runs); a marker's runs= wins (see `suites`)
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
            if name in MARKER_ONLY:  # the judgment's own (rubric, aggregate, band): not a setting
                continue
            option = OPTIONS_BY_NAME[name]
            try:
                changes[name] = read(option, raw)
            except SettingError as exc:
                raise SettingError(f"{where}({name}=...): {exc}") from None
        if not changes:
            return self
        return self._replace(**changes, overridden=self.overridden | changes.keys())


def under(rootdir: Path, value: str) -> Path:
    """A configured path (`--judge-store`, `--judge-cache-dir`), made absolute against the rootdir."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else rootdir / path


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
            values[option.name] = read(option, raw, label)  # a bad value is named as it was spelled there
            sources[option.name] = source
            break
        else:
            values[option.name] = option.default
            sources[option.name] = "default"

    mode = OPTIONS_BY_NAME["mode"]
    if sources["mode"] == "default":  # off CI the table's default (auto); on CI, replay
        ci = detect_ci(environ)
        values["mode"] = "replay" if ci else "auto"
        reason = f"CI detected: {ci} is set" if ci else "default"
    else:
        reason = {"cli": mode.cli, "env": mode.env, "ini": f"{mode.ini} in ini"}[sources["mode"]]
    return Settings(**values, mode_reason=reason, sources=sources)


# The option fields' defaults are the table's (one definition); a NamedTuple keeps them on __new__,
# as collections.namedtuple(defaults=...) does.  A Settings made without some (a test's subprocess
# is handed only the inherited ones) gets the table's.
Settings._field_defaults = {**{o.name: o.default for o in OPTIONS}, **Settings._field_defaults}
Settings.__new__.__defaults__ = tuple(Settings._field_defaults.values())
