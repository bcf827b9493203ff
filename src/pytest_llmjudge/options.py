"""The plugin's option table, alone: pytest reads it at every start-up to register the options.

Kept apart from `settings` (which parses and resolves the values) so that registering options
costs next to nothing in a run that never judges.  Each option exists three times: `--judge-x` on
the command line, `judge_x` in the ini file and `LLMJUDGE_X` in the environment.
"""

from __future__ import annotations

# (name, help, metavar, flag: a CLI switch without a value, marker: @pytest.mark.judge may set it)
OPTION_TABLE: tuple[tuple[str, str, str, bool, bool], ...] = (
    (
        "model",
        "judge model as LiteLLM names it (e.g. gpt-4o-mini, openai/llama3); several, comma-separated, form a panel",
        "MODEL",
        False,
        True,
    ),
    (
        "mode",
        "auto: stored verdict, else judge and store; replay: stored only, a miss fails; "
        "refresh: judge again and overwrite; live: judge, store nothing (default: replay on CI, else auto)",
        "MODE",
        False,
        False,
    ),
    ("threshold", "score a judgment needs to pass, in [0, 1] (default 0.5)", "SCORE", False, True),
    ("api_base", "base URL of the judge's API, e.g. http://127.0.0.1:8000/v1", "URL", False, True),
    ("temperature", "sampling temperature for the judge (default 0)", "T", False, True),
    ("timeout", "deadline in seconds for one judgment, retries included (default 120)", "SECONDS", False, False),
    (
        "retries",
        "retries after a rate limit, server error, timeout or dropped connection (default 3)",
        "N",
        False,
        False,
    ),
    ("concurrency", "judge calls in flight at once in this process (default 8)", "N", False, False),
    ("samples", "judge each prompt N times and combine the samples (default 1)", "N", False, True),
    (
        "store",
        "directory of the committed verdict files (default: judge_verdicts/ beside each test module)",
        "DIR",
        False,
        False,
    ),
    ("cache_dir", "directory of the local verdict cache (default: under pytest's cache dir)", "DIR", False, False),
    ("budget", "stop live judge calls once this many US dollars are spent", "USD", False, False),
    ("report", "write every judgment of the run to this JSON file", "PATH", False, False),
    ("html", "write a self-contained HTML report of the run to this file", "PATH", False, False),
    (
        "drift",
        "in refresh mode, report verdicts whose score moved by more than this (default 0.1)",
        "DELTA",
        False,
        False,
    ),
    ("prune", "after a full, successful run, remove stored verdicts no test used", "VALUE", True, False),
    (
        "structured",
        "ask the judge for a JSON reply through response_format: auto (where the model takes it, falling back "
        "where the server refuses it), on (always ask for the rubric's JSON schema), off (default auto)",
        "MODE",
        False,
        True,
    ),
    (
        "parse_retries",
        "on a live reply that holds no verdict, ask again for the required format this many times (default 1, 0: off)",
        "N",
        False,
        False,
    ),
    # The model under test, for `generate`: named apart from the judge (--generate-*, generate_*).
    (
        "generate_model",
        "default model under test for generate() as LiteLLM names it (the app's model, not the judge)",
        "MODEL",
        False,
        False,
    ),
    (
        "generate_api_base",
        "base URL of the API of the model under test, e.g. http://127.0.0.1:8000/v1",
        "URL",
        False,
        False,
    ),
    (
        "budget_tokens",
        "stop live judge calls once they have used this many tokens (prompt + completion) in this run",
        "N",
        False,
        False,
    ),
    (
        "price",
        "the judge's price in US dollars per million tokens, for calls LiteLLM cannot price, "
        "e.g. input=0.15,output=0.60 (one number: both)",
        "PRICE",
        False,
        False,
    ),
    (
        "max_tokens",
        "cap on the judge's reply, in tokens (default 2048; none when --judge-reasoning-effort is set)",
        "N",
        False,
        True,
    ),
    (
        "reasoning_effort",
        "reasoning effort for reasoning models: minimal, low, medium or high (not sent to models without it)",
        "EFFORT",
        False,
        True,
    ),
    (
        "params",
        'further request parameters as a JSON object, e.g. \'{"seed": 7, "top_p": 0.9}\' (part of the key)',
        "JSON",
        False,
        True,
    ),
    (
        "instructions_in_user",
        "put the judge's instructions into the user message (for chat templates that drop the system message)",
        "VALUE",
        True,
        True,
    ),
    (
        "redact_env",
        "further environment variables whose values never reach a verdict file, report or message, "
        "comma-separated (those named like a key, token, secret, password or credential always are)",
        "NAMES",
        False,
        False,
    ),
)

# Options of the model under test are spelled --generate-x and generate_x (LLMJUDGE_GENERATE_X in the environment).
_OWN_PREFIX = "generate_"


def cli_name(name: str) -> str:
    prefix = "--" if name.startswith(_OWN_PREFIX) else "--judge-"
    return prefix + name.replace("_", "-")


def ini_name(name: str) -> str:
    return name if name.startswith(_OWN_PREFIX) else "judge_" + name


def env_name(name: str) -> str:
    return "LLMJUDGE_" + name.upper()


def dest_name(name: str) -> str:
    return "judge_" + name
