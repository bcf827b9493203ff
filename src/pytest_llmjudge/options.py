"""The plugin's options, one row each: everything about an option is declared here and derived from it.

From the rows come the flags of pytest and the `llmjudge` commands, the ini names, the parsing and
defaults of `settings.Settings`, the marker's keys, what a subprocess inherits, how a stored verdict
holds a judge setting and how a replay miss names it, and the options page of the docs
(docs/gen_options.py).

A row: `Option(name, help, metavar, kind, default, *, marker=, keyed=, inherited=, stored=, missed=)`.

- `name` is the `Settings` field (and the flag `--judge-<name>`, ini `judge_<name>`, variable
  `LLMJUDGE_<NAME>`; a name starting `generate_` is spelled `--generate-...`).
- `kind` names its parser in `settings` and the parser's arguments: `("whole", 1)` is a whole
  number >= 1, `("choice", "a", "b")` one of the words, `("switch",)` a flag without a value.
- `marker=True`: `@pytest.mark.judge(<name>=...)`, a `Judge`'s and an assertion's arguments set it.
- `keyed`: its value joins the verdict key: `"judge"` (who judges and how: a run that leaves it unset
  adopts the recorded value) or `"test"` (the test's own decision: it must match).
- `inherited=True`: a test's subprocess (`LLMJUDGE_TEST`) judges with it too.
- A judge setting (`keyed="judge"`) also says where a verdict file entry holds its value, `stored`,
  as a reader's name in `pipeline.judge_settings` and its arguments (`("field", "max_tokens")`: the
  entry's own field; `("param", "temperature")`: a parameter the call asked for), and `missed`: the
  words a replay miss names it by, before its flag ("max tokens (--judge-max-tokens)").

A new option is a row, its `Settings` field (same name, same place) and the code that uses it; a new
judge setting adds `stored` and `missed`, and what sends it (`pipeline.plan.requested`).

pytest imports this module at every start-up, judging or not: it holds names, texts and flags only
and imports nothing of the plugin's.  A row names its parser by kind; the parsers are in `settings`,
above this module, and load when a value is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

# Options of the model under test are spelled --generate-x and generate_x (LLMJUDGE_GENERATE_X in the environment).
_OWN_PREFIX = "generate_"


class Option:
    """One option: its names, help, type (and so its parser) and default, and where it applies.  Read only.

    A plain class: a NamedTuple or dataclass takes a tenth of a millisecond to define, at every start-up.
    """

    def __init__(
        self,
        name: str,
        help: str,
        metavar: str,
        kind: tuple[Any, ...],
        default: Any = None,
        *,
        marker: bool = False,
        keyed: str | None = None,
        inherited: bool = False,
        stored: tuple[str, ...] | None = None,
        missed: str | None = None,
    ) -> None:
        self.name = name  # the Settings field, e.g. "model"
        self.help = help
        self.metavar = metavar
        self.kind = kind  # its type and parser: a reader's name in `settings` and its arguments
        self.default = default  # None: not set (the help says what happens then)
        self.flag = kind[0] == "switch"  # a yes/no option is a CLI switch without a value (a bool in the ini file)
        self.marker = marker  # @pytest.mark.judge(name=...), a Judge's and an assertion's arguments may set it
        # Its value joins the verdict key: another value is another judgment.  "judge": a setting of who
        # judges and how, which a run that does not set it adopts from the recording (see pipeline.recorded);
        # "test": the test's own decision, which must match.
        self.keyed = keyed
        self.inherited = inherited  # a test's subprocess (LLMJUDGE_TEST) judges with it too; never a path
        # A judge setting: where a stored entry holds it (a reader in `pipeline.judge_settings` and its
        # arguments), and the words a replay miss names it by.
        self.stored = stored
        self.missed = missed
        own = name.startswith(_OWN_PREFIX)
        self.cli = ("--" if own else "--judge-") + name.replace("_", "-")
        self.ini = name if own else "judge_" + name
        self.env = "LLMJUDGE_" + name.upper()
        self.dest = "judge_" + name

    @property
    def described(self) -> str:
        """The help as `--help` shows it, with the option's other spellings."""
        return f"{self.help} [ini: {self.ini}, env: {self.env}]"


OPTIONS: tuple[Option, ...] = (
    Option(
        "model",
        "judge model as LiteLLM names it (e.g. gpt-4o-mini, openai/llama3); several, comma-separated, form a panel",
        "MODEL",
        ("models",),
        marker=True,
        keyed="judge",
        stored=("field", "model"),
        missed="model",
        inherited=True,
    ),
    Option(
        "mode",
        "auto: stored verdict, else judge and store; replay: stored only, a miss fails; "
        "refresh: judge again and overwrite; live: judge, store nothing (default: replay on CI, else auto)",
        "MODE",
        ("choice", "auto", "replay", "refresh", "live"),
        "auto",  # off CI: a detected CI makes replay the default (see settings.resolve)
        inherited=True,
    ),
    Option(
        "threshold",
        "score a judgment needs to pass, in [0, 1] (default 0.5)",
        "SCORE",
        ("number", 0.0, 1.0),
        0.5,
        marker=True,
        inherited=True,
    ),
    Option(
        "api_base",
        "base URL of the judge's API, e.g. http://127.0.0.1:8000/v1",
        "URL",
        ("text",),
        marker=True,
        inherited=True,
    ),
    Option(
        "temperature",
        "sampling temperature for the judge (default 0)",
        "T",
        ("number", 0.0, 2.0),
        0.0,
        marker=True,
        keyed="judge",
        stored=("param", "temperature"),
        missed="temperature",
        inherited=True,
    ),
    Option(
        "timeout",
        "deadline in seconds for one judgment, retries included (default 120)",
        "SECONDS",
        ("above", 0.0),
        120.0,
        inherited=True,
    ),
    Option(
        "retries",
        "retries after a rate limit, server error, timeout or dropped connection (default 3)",
        "N",
        ("whole", 0),
        3,
        inherited=True,
    ),
    Option("concurrency", "judge calls in flight at once in this process (default 8)", "N", ("whole", 1), 8),
    Option(
        "samples",
        "judge each prompt N times and combine the samples (default 1)",
        "N",
        ("whole", 1),
        1,
        marker=True,
        keyed="test",
        inherited=True,
    ),
    Option(
        "store",
        "directory of the committed verdict files (default: judge_verdicts/ beside each test module)",
        "DIR",
        ("text",),
    ),
    Option("cache_dir", "directory of the local verdict cache (default: under pytest's cache dir)", "DIR", ("text",)),
    Option(
        "budget", "stop live judge calls once this many US dollars are spent", "USD", ("number", 0.0), inherited=True
    ),
    Option("report", "write every judgment of the run to this JSON file", "PATH", ("text",)),
    Option("html", "write a self-contained HTML report of the run to this file", "PATH", ("text",)),
    Option(
        "drift",
        "in refresh mode, report verdicts whose score moved by more than this (default 0.1)",
        "DELTA",
        ("number", 0.0, 1.0),
        0.1,
    ),
    Option("prune", "after a full, successful run, remove stored verdicts no test used", "VALUE", ("switch",), False),
    Option(
        "structured",
        "ask the judge for a JSON reply through response_format: auto (where the model takes it, falling back "
        "where the server refuses it), on (always ask for the rubric's JSON schema), off (default auto)",
        "MODE",
        ("choice", "auto", "on", "off"),
        "auto",
        marker=True,
        keyed="judge",
        stored=("asks", "response_format", "auto", "off"),
        missed="structured output",
        inherited=True,
    ),
    Option(
        "parse_retries",
        "on a live reply that holds no verdict, ask again for the required format this many times (default 1, 0: off)",
        "N",
        ("whole", 0),
        1,
        inherited=True,
    ),
    # The model under test, for `generate`: named apart from the judge (--generate-*, generate_*).
    Option(
        "generate_model",
        "default model under test for generate() as LiteLLM names it (the app's model, not the judge)",
        "MODEL",
        ("text",),
        inherited=True,
    ),
    Option(
        "generate_api_base",
        "base URL of the API of the model under test, e.g. http://127.0.0.1:8000/v1",
        "URL",
        ("text",),
        inherited=True,
    ),
    Option(
        "budget_tokens",
        "stop live judge calls once they have used this many tokens (prompt + completion) in this run",
        "N",
        ("whole", 1),
        inherited=True,
    ),
    Option(
        "price",
        "the judge's price in US dollars per million tokens, for calls LiteLLM cannot price, "
        "e.g. input=0.15,output=0.60 (one number: both)",
        "PRICE",
        ("price",),
        inherited=True,
    ),
    Option(
        "max_tokens",
        "cap on the judge's reply, in tokens (default 2048; none when --judge-reasoning-effort is set)",
        "N",
        ("whole", 1),
        marker=True,
        keyed="judge",
        stored=("field", "max_tokens"),
        missed="max tokens",
        inherited=True,
    ),
    Option(
        "reasoning_effort",
        "reasoning effort for reasoning models: minimal, low, medium or high (not sent to models without it)",
        "EFFORT",
        ("choice", "minimal", "low", "medium", "high"),
        marker=True,
        keyed="judge",
        stored=("field", "reasoning_effort"),
        missed="reasoning effort",
        inherited=True,
    ),
    Option(
        "params",
        'further request parameters as a JSON object, e.g. \'{"seed": 7, "top_p": 0.9}\' (part of the key)',
        "JSON",
        ("params",),
        marker=True,
        keyed="judge",
        stored=("object", "extra_params"),
        missed="request parameters",
        inherited=True,
    ),
    Option(
        "instructions_in_user",
        "put the judge's instructions into the user message (for chat templates that drop the system message)",
        "VALUE",
        ("switch",),
        False,
        marker=True,
        keyed="judge",
        stored=("flag", "instructions_in_user"),
        missed="where the instructions go",
        inherited=True,
    ),
    Option(
        "max_items",
        "most items (claims, passages, turns, questions, constraints, dimensions) one judgment rules on, counted "
        "over its judges, samples and nested rubrics, each a judge call or part of one; more is an error before "
        "the first call that would rule on them (default 32)",
        "N",
        ("whole", 1),
        32,
        marker=True,
        inherited=True,
    ),
    Option(
        "redact_env",
        "further environment variables whose values never reach a verdict file, report or message, "
        "comma-separated (those named like a key, token, secret, password or credential always are)",
        "NAMES",
        ("names",),
        (),
        inherited=True,
    ),
    Option(
        "summary",
        "append a Markdown summary of the run (counts, failed judgments with their reasoning, gates, cost, replay "
        "misses and the command that records them) to this file; where unset, to the file GITHUB_STEP_SUMMARY "
        "names (GitHub Actions' job summary) when the run judged anything",
        "PATH",
        ("text",),
    ),
    Option(
        "runs",
        "run each judged test N times, each run recorded under its own keys (run 0 keeps the test's usual ones); "
        "it passes when every run does (the marker's runs= and min_passes= say otherwise; default 1)",
        "N",
        ("whole", 1),
        1,
    ),
)

OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
# What the marker (and a Judge's or an assertion's arguments) take besides settings: how one test
# judges, which no session-wide option sets.
MARKER_ONLY = ("rubric", "aggregate", "band")
MARKER_KEYS = (*(o.name for o in OPTIONS if o.marker), *MARKER_ONLY)
# What the marker alone takes besides: how a test is repeated (runs=, min_passes= or min_pass_rate=) and the
# pass-rate gate of the group where it is placed (pass_rate=, mean_score=, confidence=); see `suites`.
SUITE_KEYS = ("runs", "min_passes", "min_pass_rate", "pass_rate", "mean_score", "confidence")
# The settings a test's subprocess (LLMJUDGE_TEST) judges with, as the test would.
INHERITED = tuple(o.name for o in OPTIONS if o.inherited)


def add_options(add: Callable[..., object]) -> None:
    """Declare every option's flag with `add` (pytest's `addoption`, argparse's `add_argument`); None: not given."""
    for option in OPTIONS:
        text = option.described.replace("%", "%%")  # argparse formats help with %, under pytest too
        if option.flag:
            add(option.cli, action="store_true", dest=option.dest, default=None, help=text)
        else:
            add(option.cli, dest=option.dest, metavar=option.metavar, default=None, help=text)


def judge_values(config: pytest.Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every option as given on the command line (addopts included) and in the ini file, by name.

    The one reader of pytest's configuration for the judge: a run's and the `llmjudge` commands'.
    """
    return (
        {option.name: config.getoption(option.dest) for option in OPTIONS},
        {option.name: config.getini(option.ini) for option in OPTIONS},
    )
