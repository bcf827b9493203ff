"""`llmjudge doctor` and `pytest --judge-doctor`: check the configured judge before a suite pays for it.

With the settings a pytest run would use, one line per check: routing, parameters, credentials, what
LiteLLM reports of the model, then a live probe per rubric family (a clear pass and a clear fail,
through a test's pipeline, nothing stored) and what it cost.  A failed check exits non-zero.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import BackendError, BudgetExceeded, JudgeError, VerdictParseError, first_line
from .runtime import JudgeRuntime
from .settings import SettingError, Settings
from .standalone import add_judge_options, judge_cli_values, load_settings

if TYPE_CHECKING:
    from .verdict import Verdict


# One case any judge reads alike: the pass must pass and the fail must fail at any sane threshold.
CRITERIA = "States correctly which city is the capital of France"
CLEAR_PASS = "The capital of France is Paris."
CLEAR_FAIL = "The capital of France is Berlin."


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    status: str  # "ok", "FAIL", "info" or "skip"
    name: str
    text: str

    @property
    def failed(self) -> bool:
        return self.status == "FAIL"

    def line(self) -> str:
        return f"{self.status:<4}  {self.name:<18} {self.text}"


def diagnose(settings: Settings, *, rootdir: Path) -> list[Check]:
    """Every check of the configured judge (one block per model of a panel); makes live calls."""
    if not settings.model:
        return [
            Check(
                "FAIL",
                "model",
                "no judge model configured: pass --judge-model=MODEL (or judge_model in the ini file, or "
                "LLMJUDGE_MODEL). A judge_backend fixture of your own is not checked by the doctor.",
            )
        ]
    # Live: the probe is judged for real and nothing is stored, whatever the configured mode.
    runtime = JudgeRuntime(settings._replace(mode="live"), rootdir=rootdir)
    checks = [Check("info", "settings", _settings_text(settings))]
    try:
        for model in settings.model:
            checks.extend(_check_model(runtime, model))
    finally:
        runtime.close()
    return checks


def _settings_text(settings: Settings) -> str:
    text = f"mode {settings.mode} ({settings.mode_reason}), threshold {settings.threshold:g}"
    if settings.api_base:
        text += f", api base {settings.api_base}"
    if settings.mode == "replay":
        text += "; a replay run makes no live call, the doctor's probe does"
    return text


def _check_model(runtime: JudgeRuntime, model: str) -> list[Check]:
    from .backends.litellm import key_variable, placeholder_key
    from .backends.litellm_import import import_litellm
    from .backends.request import plan_request
    from .pipeline.plan import Options, plan

    litellm = import_litellm()
    settings = runtime.settings
    api_base = settings.api_base
    try:
        bare, provider, _, _ = litellm.get_llm_provider(model, api_base=api_base)
    except Exception as exc:  # noqa: BLE001 - LiteLLM says why in its own words
        return [Check("FAIL", "model", f"LiteLLM cannot route {model}: {first_line(exc)}")]
    checks = [Check("ok", "model", f"{model}: LiteLLM provider {provider}, model {bare}")]

    probe = plan(
        CLEAR_PASS, CRITERIA, Options(), runtime=runtime, context=None, backend=None, overrides={"model": model}
    )
    request = probe.calls[0].request
    sent = plan_request(request)
    notes = "; ".join(sent.notes())
    parameters = Check("ok", "parameters", f"would send {_params_text(sent.params)}" + (f"; {notes}" if notes else ""))
    checks.append(parameters)

    try:
        environment = litellm.validate_environment(model=model, api_base=api_base)
        missing = [str(k) for k in environment.get("missing_keys") or []]
    except Exception:  # noqa: BLE001 - LiteLLM cannot tell: the probe will
        environment, missing = {}, []
    if missing and placeholder_key(model, api_base) is not None:
        checks.append(
            Check(
                "ok",
                "credentials",
                f"{key_variable(model)} is not set: a placeholder key is sent to {api_base} (a local server needs "
                f"no key; a server that wants one refuses it, and then {key_variable(model)} must be set)",
            )
        )
        missing = []
    elif missing:
        checks.append(
            Check(
                "FAIL",
                "credentials",
                f"not set: {' or '.join(missing)} (LiteLLM needs it for provider {provider}); export it before "
                "running the suite",
            )
        )
    else:
        variable = key_variable(model)
        found = f"{variable} is set" if os.environ.get(variable) else f"{variable} not needed or not set"
        checks.append(Check("ok", "credentials", f"LiteLLM finds what provider {provider} needs ({found})"))

    try:
        schema = bool(litellm.supports_response_schema(model=bare, custom_llm_provider=provider))
    except Exception:  # noqa: BLE001 - a model LiteLLM does not know
        schema = False
    checks.append(
        Check(
            "info",
            "structured output",
            "LiteLLM reports response-schema support"
            if schema
            else "LiteLLM reports no response-schema support for this model (local servers often have it all the same)",
        )
    )
    asking = plan_request(dataclasses.replace(request, params={"logprobs": True, "top_logprobs": 5}))
    refused = asking.refused.get("logprobs") or asking.refused.get("top_logprobs")
    checks.append(
        Check(
            "info",
            "logprobs",
            f"not taken ({refused}): Likert(logprobs=True) falls back to plain scoring"
            if refused
            else "sent where asked for (Likert(logprobs=True)); whether they come back is the server's to say",
        )
    )
    if missing:
        checks.append(Check("skip", "probe", "no live call without the credentials above"))
        return checks
    probed, went_out = _probe(runtime, model)
    if went_out is not None:  # what the probe's calls really sent (a server may take json_object only)
        text = f"sent {_params_text(went_out)}" + (f"; {notes}" if notes else "")
        checks[checks.index(parameters)] = Check("ok", "parameters", text)
    checks.extend(probed)
    return checks


def _probe(runtime: JudgeRuntime, model: str) -> tuple[list[Check], dict[str, Any] | None]:
    """A clear pass and a clear fail per rubric family, live; then what the probe cost.  Also what the
    first call that went out really sent (None if none did)."""
    from .pipeline.plan import Options, plan
    from .pipeline.run import run as judge
    from .rubrics.likert import Likert
    from .rubrics.passfail import PassFail
    from .rubrics.score import Score

    checks: list[Check] = []
    verdicts: list[Verdict] = []
    threshold = runtime.settings.threshold
    went_out: dict[str, Any] | None = None
    cut_off = False
    # Each probe judgment's judging time: its judge calls in flight, re-asks included, passed or failed (what
    # a verdict's latency_s is).  Both lines that speak of the slowest read it here.
    timed = Timings()
    for family, rubric in (("score", Score), ("pass/fail", PassFail), ("likert", Likert)):
        scores: list[Verdict] = []
        try:
            for output in (CLEAR_PASS, CLEAR_FAIL):
                planned = plan(
                    output,
                    CRITERIA,
                    Options(rubric=rubric()),
                    runtime=runtime,
                    context=None,
                    backend=None,
                    overrides={"model": model},
                )
                try:
                    verdict = judge(planned, runtime)
                except JudgeError:
                    timed.failed += 1
                    raise
                finally:
                    timed.calls.append(planned.live_s())
                    if went_out is None and planned.requests:
                        went_out = next(iter(planned.requests.values()))[0]
                verdicts.append(verdict)
                scores.append(verdict)
        except JudgeError as exc:
            checks.append(Check("FAIL", f"probe {family}", f"{type(exc).__name__}: {first_line(exc)}"))
            if isinstance(exc, VerdictParseError) and exc.text:
                checks.append(_replied(exc.text))
            # The live stage refuses a reply cut off at the cap (finish_reason=length) with this error.
            cut_off = cut_off or (isinstance(exc, VerdictParseError) and "finish_reason=length" in str(exc))
            if isinstance(exc, (BackendError, BudgetExceeded)):
                checks.append(Check("skip", "probe", "the remaining probes: the judge did not answer (see above)"))
                break
            continue
        good, bad = scores
        text = f"clear pass {good.score:.2f}, clear fail {bad.score:.2f} (threshold {threshold:g})"
        if good.score >= threshold > bad.score:
            checks.append(Check("ok", f"probe {family}", f"parsed and right: {text}"))
        else:
            wrong = "the clear pass failed" if good.score < threshold else "the clear fail passed"
            checks.append(Check("FAIL", f"probe {family}", f"parsed, but {wrong}: {text}"))
            checks.append(_replied((good if good.score < threshold else bad).raw))
    checks.append(Check("info", "probe cost", _cost_text(verdicts, timed, model)))
    advice = _max_tokens_advice(runtime.settings, cut_off=cut_off, slowest=timed.slowest)
    if advice is not None:
        checks.append(Check("info", "max tokens", advice))
    return checks, went_out


@dataclass
class Timings:
    """The probe's figures of time: each judgment's judge calls in flight, and the whole probe's wall time."""

    started: float = field(default_factory=time.monotonic)
    calls: list[float] = field(default_factory=list)  # each judgment's, in the order run
    failed: int = 0

    @property
    def slowest(self) -> float:
        return max(self.calls, default=0.0)


# Characters of a judge's reply a failed probe shows: enough to see what the judge does instead.
REPLY_SHOWN = 300


def _replied(reply: str) -> Check:
    """The judge's raw reply under a failed probe: redacted (before it is cut, so no secret is cut in two and
    missed), on one line, bounded."""
    from .redact import redact

    text = redact(reply)
    shown = repr(text[:REPLY_SHOWN])  # one line: its line breaks shown as \n
    if len(text) > REPLY_SHOWN:
        shown += f"... ({len(text):,} characters)"
    return Check("info", "  judge replied", shown)


# A probe judgment slower than this suggests a judge that writes on and on (or a slow server).
SLOW_PROBE_S = 20.0


def _max_tokens_advice(settings: Settings, *, cut_off: bool, slowest: float) -> str | None:
    """What to do about the reply cap, when a probe was cut off at it or was slow; None otherwise."""
    cap = settings.reply_cap()
    now = f"now {cap} tokens" if cap is not None else "now none"
    if cut_off:
        return (
            f"a probe's reply was cut off at max_tokens ({now}): a reasoning model needs more room "
            "(--judge-max-tokens=8192, or --judge-reasoning-effort, which sends no default cap); a model that "
            "writes on past a verdict is no judge to rely on"
        )
    if slowest >= SLOW_PROBE_S:
        return (
            f"the slowest probe judgment's calls took {slowest:.2f} s: a judge that writes long replies (small "
            f"local models run on) is bounded by --judge-max-tokens, e.g. --judge-max-tokens=512 ({now})"
        )
    return None


def _cost_text(verdicts: Sequence[Verdict], timed: Timings, model: str) -> str:
    """What the probe cost: its judgments, the time their judge calls were in flight (the slowest
    judgment's, failed ones included) beside the probe's wall time, tokens and money."""
    from .reporting.terminal import format_usd

    costs = [v.cost_usd for v in verdicts if v.cost_usd is not None]
    prompt = sum(v.prompt_tokens or 0 for v in verdicts)
    completion = sum(v.completion_tokens or 0 for v in verdicts)
    wall = time.monotonic() - timed.started
    text = f"{len(verdicts)} judged" + (f", {timed.failed} failed" if timed.failed else "")
    text += (
        f": the judge's calls took {sum(timed.calls):.2f} s, the slowest judgment's {timed.slowest:.2f} s "
        f"({wall:.2f} s in all, with planning and parsing)"
    )
    if prompt or completion:
        text += f", {prompt + completion:,} tokens ({prompt:,} prompt + {completion:,} completion)"
    if len(costs) == len(verdicts) and verdicts:
        text += f", {format_usd(sum(costs))}"
    elif verdicts:
        text += f", cost unknown (LiteLLM has no price for {model}; --judge-price gives one)"
    return text


def _params_text(params: Mapping[str, Any]) -> str:
    """`temperature=0.0, response_format=json_object`: the parameters a call sends beside the messages
    (a response_format by its kind, as the verdict file records it: the schema is long)."""
    from .backends.formats import format_of

    shown = [f"{k}={format_of(v) if k == 'response_format' else v}" for k, v in params.items()]
    return ", ".join(shown) or "nothing beyond the messages"


def doctor_lines(checks: Sequence[Check]) -> list[str]:
    """The report: one line per check, then a verdict line; redacted, whatever a check quotes (the api base's
    credentials, a server's error text)."""
    from .redact import redactor

    clean = redactor()
    failed = sum(c.failed for c in checks)
    verdict = f"llmjudge doctor: {failed} check{'s' if failed != 1 else ''} failed" if failed else "llmjudge doctor: ok"
    return [clean(c.line()) for c in checks] + [verdict]


# -- the command ---------------------------------------------------------------------------------------------

DESCRIPTION = (
    "Check the configured judge before a suite pays for hundreds of calls. Takes the same --judge-* options, "
    "ini file and environment as a pytest run (or run `pytest --judge-doctor`). Prints one line per check: the "
    "provider and model LiteLLM routes to, the parameters a call sends or drops, whether the key variable is "
    "set, structured output and logprobs support, then a live probe (a clear pass and a clear fail for the "
    "score, pass/fail and likert rubrics: parsed, and right?) with its latency, tokens and cost. Nothing is "
    "stored. Exit status: 0 when every check passed, 1 when one failed, 2 on a bad option."
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `doctor` to the `llmjudge` subcommands (`subparsers` from `add_subparsers`)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "doctor", help="check the configured judge with a few live calls", description=DESCRIPTION
    )
    add_judge_options(parser)
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """`llmjudge doctor`: the report on stdout; 0 when healthy, 1 on a failed check, 2 on a bad setting."""
    try:
        config = load_settings(judge_cli_values(args))
    except SettingError as exc:
        print(f"llmjudge doctor: error: {exc}", file=sys.stderr)
        return 2
    checks = diagnose(config.settings, rootdir=config.rootdir)
    print("\n".join(doctor_lines(checks)))
    return 1 if any(c.failed for c in checks) else 0
