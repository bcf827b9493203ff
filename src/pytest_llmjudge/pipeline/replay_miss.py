"""Why a replay found no stored verdict or generation: the nearest stored entry, and the fields in
which it differs.

As in vcrpy's matchers, each field has a matcher comparing what is stored with what the call wants
(most alike: `_differs`); each returns the field's name when the two differ, else None.  A verdict's and a
generation's record different fields, so each kind of call has its own list (`KINDS`); the message
around them is one.  A stored verdict that differs in none of its fields differs in the prompt
template (or the rubric's parameters).  How the call travels (the api base) is not part of a key, so
a transport change never misses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..errors import ReplayMiss
from ..options import OPTIONS, OPTIONS_BY_NAME, Option
from ..redact import redact
from ..settings import Settings
from . import judge_settings

Entry = Mapping[str, Any]
Matcher = Callable[[Entry, Entry], "str | None"]

# -- a verdict's fields ----------------------------------------------------------------------------


def _differs(field: str, default: Any = None) -> Matcher:
    """The matcher of a field that differs when its stored and wanted values do (`default`: absent)."""
    return lambda stored, wanted: field if stored.get(field, default) != wanted.get(field, default) else None


def _setting(option: Option) -> Matcher:
    """The matcher of a judge setting, as its row says an entry holds it (see `judge_settings`)."""
    return lambda stored, wanted: judge_settings.differs(option, stored, wanted)


def params(stored: Entry, wanted: Entry) -> str | None:
    """The parameters the call asked for changed; older entries lack them."""
    if "params" not in stored or "params" not in wanted:
        return None
    return "params" if stored.get("params") != wanted["params"] else None


def rubric_params(stored: Entry, wanted: Entry) -> str | None:
    """The parameters a judge call asked for beside those of a judge setting that differs (the rubric's
    own: log-probabilities, its reply schema); older entries lack them."""
    if "params" not in stored or "params" not in wanted:
        return None
    named = {judge_settings.in_params(o) for o in _SETTINGS if judge_settings.differs(o, stored, wanted)}
    old = {k: v for k, v in (stored.get("params") or {}).items() if k not in named}
    new = {k: v for k, v in (wanted.get("params") or {}).items() if k not in named}
    return "rubric_params" if old != new else None


# The judge's settings besides its model, each compared as its row says (the model comes first, below).
_SETTINGS = judge_settings.JUDGE_SETTINGS


# -- a generation's fields (its model and parameters are compared as a verdict's) ------------------


def _message(entry: Entry, role: str, last: bool = False) -> Any:
    messages = [m for m in entry.get("messages") or [] if isinstance(m, dict) and m.get("role") == role]
    if not messages:
        return None
    return (messages[-1] if last else messages[0]).get("content")


def prompt(stored: Entry, wanted: Entry) -> str | None:
    """The prompt (the last user message) changed."""
    return "prompt" if _message(stored, "user", last=True) != _message(wanted, "user", last=True) else None


def system(stored: Entry, wanted: Entry) -> str | None:
    """The system prompt changed, was added or was removed."""
    return "system" if _message(stored, "system") != _message(wanted, "system") else None


def generation_messages(stored: Entry, wanted: Entry) -> str | None:
    """The messages differ otherwise (asked when every field above matches); else only the key scheme can."""
    return "messages" if stored.get("messages") != wanted.get("messages") else "key scheme (record it again)"


# In the order a miss names them; an absent step, context or request option: the judgment had none.
MATCHERS: tuple[Matcher, ...] = (
    _setting(OPTIONS_BY_NAME["model"]),  # another judge model (or custom backend name)
    _differs("criteria"),
    _differs("output"),  # the usual cause: the application answers differently
    _differs("input"),  # what was given to the application
    _differs("expected"),
    _differs("context"),  # the retrieved context
    _differs("rubric"),
    _differs("step"),  # another step of a rubric that asks in steps
    _differs("sample"),  # more samples asked for than were recorded
    _differs("run", 0),  # more runs of a repeated test asked for than were recorded
    *(_setting(option) for option in _SETTINGS),  # the judge's settings, from the option table's rows
    rubric_params,
    _differs("messages_sha256"),  # the prompt template, when every field above matches
    _differs("key_version", 1),  # an entry without one predates version 2
)

# index: a batch's; run: a repeated test's
GENERATION_MATCHERS: tuple[Matcher, ...] = (
    _differs("model"),
    prompt,
    system,
    params,
    _differs("index", 0),
    _differs("run", 0),
)

# How a field is named in the miss's message, where its name alone would not say it (a judge setting's
# field, `name` or `name:what`, is named by its row: its words and its flag).
DESCRIBED = {
    "rubric_params": "request parameters the rubric sets",
    "run": "run (a repeated test's)",
    "key_version": "key scheme (recorded by an earlier version of the plugin, whose keys also held the api base: "
    "record it again)",
}
JUDGE_ROWS: Mapping[str, Option] = {option.name: option for option in OPTIONS if option.keyed == "judge"}


def describe(field: str, described: Mapping[str, str] = DESCRIBED, rows: Mapping[str, Option] = JUDGE_ROWS) -> str:
    """How the miss's message names a differing field: a setting by its row in `rows`, else as `described`."""
    name, _, what = field.partition(":")
    if name in rows:
        return judge_settings.described(rows[name], what)
    return described.get(field, field)


class Kind(NamedTuple):
    """What a miss compares and says for one kind of recorded call."""

    matchers: tuple[Matcher, ...]
    otherwise: tuple[Matcher, ...]  # asked only when none of `matchers` names a field
    unnamed: str  # what differs when no field does
    described: Mapping[str, str]  # how a field is named, where its name alone would not say it
    rows: Mapping[str, Option]  # the option rows that name its fields of settings
    headline: str  # with the mode's reason in place of {reason}
    nouns: str
    recorder: str


KINDS = {
    "verdict": Kind(
        MATCHERS,
        (),
        "the prompt template",
        DESCRIBED,
        JUDGE_ROWS,
        "no stored verdict for this judgment (mode replay: {reason})",
        "verdicts",
        "judge",
    ),
    "generation": Kind(
        GENERATION_MATCHERS,
        (generation_messages,),
        "key scheme (record it again)",
        {"params": "parameters (temperature, ...)", "index": "batch index", "run": "run (a repeated test's)"},
        {},
        "no stored generation for this call of generate() (mode replay: {reason})",
        "generations",
        "model",
    ),
}


def differences(stored: Entry, wanted: Entry, kind: Kind = KINDS["verdict"]) -> list[str]:
    """The names of the fields in which a stored entry differs from the wanted one, in `kind`'s order."""
    for matchers in (kind.matchers, kind.otherwise):
        found = [field for field in (match(stored, wanted) for match in matchers) if field is not None]
        if found:
            return found
    return []


def nearest(entries: Mapping[str, Entry], wanted: Entry, kind: Kind = KINDS["verdict"]) -> tuple[str, list[str]]:
    """The stored key that differs from `wanted` in the fewest fields, and those fields."""
    return min(((key, differences(entry, wanted, kind)) for key, entry in entries.items()), key=lambda kv: len(kv[1]))


def replay_miss(
    key: str,
    wanted: Entry,
    *,
    test: str | None,
    stored: Mapping[str, Entry] | None,
    verdict_file_path: Path | None,
    settings: Settings,
    what: Literal["verdict", "generation"] = "verdict",
    run: str | None = None,
    litellm: bool = True,
) -> ReplayMiss:
    """The error a replay miss raises: what is missing, the nearest stored entry, how to record it; for
    a verdict, or (`what`) a generation.  Redacted.

    `wanted` is the entry as it would be stored (before redaction); `stored` the test's stored entries
    of that kind (None outside a pytest test, where nothing is stored); `run`: which run of a repeated
    test missed, as the message names it.  `litellm`: the call goes through LiteLLM, not a backend of the
    test's own (the command then names the model and api base).
    """
    kind = KINDS[what]
    if what == "generation":
        from ..store.verdict_file import redact_entry
        from .generations import NO_MODEL

        wanted = redact_entry(wanted)  # stored entries are redacted: compare like with like
        facts = [("model", str(wanted["model"]))]
        configured: tuple[str, ...] = (settings.generate_model,) if settings.generate_model else ()
        model_option, api_base_option = "generate_model", "generate_api_base"
    else:
        from .plan import NO_MODEL

        # A later step's miss says which step: its messages carry what the earlier steps replied.
        facts = [("step", str(wanted["step"]))] if wanted.get("step") else []
        configured, model_option, api_base_option = settings.model or (), "model", "api_base"
    test = test or "(outside a test)"
    if run is not None:
        facts.append(("run", run))
    labelled = [("test", test), *facts, ("key", key[:12])]
    width = max(len(label) for label, _ in labelled) + 1  # the values line up
    headline = kind.headline.format(reason=settings.mode_reason)
    lines = [headline, *(f"  {label + ':':<{width}} {value}" for label, value in labelled)]
    model = wanted["model"] if wanted.get("model") != NO_MODEL else None  # the recorded model, where known
    if stored is None:
        lines.append("  nothing is stored outside a pytest test")
    elif not stored:
        lines.append(f"  no {kind.nouns} are stored for this test (looked in {verdict_file_path})")
    else:
        best_key, fields = nearest(stored, wanted, kind)
        differs = ", ".join(describe(field, kind.described, kind.rows) for field in fields) or kind.unnamed
        lines.append(f"  nearest stored: key {best_key[:12]}, which differs in {differs}")
        model = model or stored[best_key].get("model")
    models = tuple(configured) or ((str(model),) if model else ())
    command, note = record_command(
        test,
        settings,
        models if litellm else tuple(configured) or None,
        model_option=model_option,
        api_base_option=api_base_option if litellm else None,
        recorder=kind.recorder,
    )
    lines.append(f"  record it with a reachable {kind.recorder}: {command}  (then commit the verdict file)")
    if note:
        lines.append(f"  ({note})")
    return ReplayMiss(redact("\n".join(lines)), key=key)


def record_command(
    tests: str | Sequence[str],
    settings: Settings,
    models: Sequence[str] | None,
    *,
    model_option: str = "model",
    api_base_option: str | None = "api_base",
    recorder: str = "judge",
) -> tuple[str, str | None]:
    """The command that records a missed call as the recording was made, for a POSIX shell; and a note
    where it cannot say all (the api base is never recorded).

    It names `models` (None: none is needed, a backend of the test's own judges; empty: none is known),
    the api base where the run has one (`api_base_option` None: not asked through LiteLLM), each
    setting that joins the key with the value the missed call was keyed with (where the run adopted
    it from the recording, or set it but in the ini file or the environment, which the command
    inherits), and what the run was given on the command line that decides how a test judges.
    """
    from ..settings import spelled

    tests = [tests] if isinstance(tests, str) else tests
    words = ["pytest", *("'" + test.replace("'", "'\"'\"'") + "'" for test in tests), "--judge-mode=auto"]
    model = OPTIONS_BY_NAME[model_option]
    if models is not None:  # the judge's option takes a panel; the model under test's, one
        named = spelled(model, tuple(models) if model.kind[0] == "models" else models[0]) if models else None
        words.append(named or f"{model.cli}=MODEL")
    note = None
    if api_base_option is not None:
        option = OPTIONS_BY_NAME[api_base_option]
        api_base = spelled(option, getattr(settings, api_base_option))
        if api_base is not None:
            words.append(api_base)
        else:
            note = (
                f"verdict files do not record the api base: add {option.cli}=URL if the {recorder} is served at a "
                "URL of its own"
            )
    for option in OPTIONS:
        if option.name in ("mode", model_option, api_base_option):
            continue
        value, source = getattr(settings, option.name), settings.sources.get(option.name, "default")
        keyed = option.keyed is not None and value != option.default and source not in ("env", "ini")
        # What a test judges with (a subprocess inherits it), where its verdicts are stored, how often it runs.
        given = source == "cli" and (option.inherited or option.name in ("store", "runs"))
        argument = spelled(option, value) if keyed or given else None
        if argument is not None:
            words.append(argument)
    return " ".join(words), note
