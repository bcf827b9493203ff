"""Why a replay found no recorded turn of a simulated user: which of the app's replies differs from the
conversation the verdict file recorded for the same persona.

A user turn's key holds the conversation before it, so a miss means the conversation went another way
than when it was recorded.  The user's turns are replayed as recorded; the app runs for real, so the
first message that differs is one of the app's replies (or the run goes on past the recording).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import ReplayMiss
from .redact import redact
from .store.verdict_file import redact_entry

if TYPE_CHECKING:
    from .pipeline.generations import GenerationPlan

EXCERPT = 160  # characters of each differing reply shown


def turn_miss(miss: ReplayMiss, persona: str, taken: int, plan: GenerationPlan) -> ReplayMiss:
    """The miss of user turn `taken + 1` of the simulated user playing `persona`, naming the app's reply
    that differs from the recording; the pipeline's own `miss` where the conversation is as recorded
    (another model, say)."""
    (generation,) = plan.calls
    wanted = redact_entry(generation.record())["messages"]  # stored entries are redacted too
    stored = plan.verdict_file.entries("generation").values() if plan.verdict_file is not None else ()
    alike = [e for e in stored if isinstance(e.get("messages"), list) and e["messages"][:2] == wanted[:2]]
    same = [e["messages"] for e in alike]
    now = _unflipped(wanted[2:])
    test = plan.context.nodeid if plan.context is not None else "(outside a test)"
    persona = persona if len(persona) <= EXCERPT else persona[: EXCERPT - 3] + "..."
    lines = [
        f"simulate(): no recorded user turn {taken + 1} for this conversation (mode replay: "
        f"{plan.settings.mode_reason})",
        f"  test:    {test}",
        f"  persona: {_one_line(persona)}",
    ]
    run = plan.context.run_text() if plan.context is not None else None
    if run is not None:  # a repeated test's run: each run's conversation is recorded as its own
        lines.append(f"  run:     {run}")
    if not same:
        lines.append("  no conversation with this persona is recorded for this test (was the persona changed?)")
    else:
        recorded = max((_unflipped(m[2:]) for m in same), key=lambda r: (_shared(r, now), len(r)))
        found = _first_difference(recorded, now)
        if found is None:
            if len(now) <= len(recorded):
                return miss  # the conversation is as recorded: the miss is in something else (the model)
            lines.append(
                f"  the recording ends before user turn {taken + 1}: this run goes on longer (more turns, "
                "or a stop or done signal that came earlier when it was recorded)"
            )
        else:
            index, reply = found
            lines += [
                f"  the app's reply to user turn {reply} differs from the recorded conversation, so the user's "
                f"turns after it were never recorded:",
                f"    recorded: {_excerpt(recorded, index)}",
                f"    now:      {_excerpt(now, index)}",
            ]
    command, note = _record_command(plan, test, [str(e.get("model")) for e in alike])
    lines.append(f"  record it with a reachable judge: {command}  (then commit the verdict file)")
    if note:
        lines.append(f"  ({note})")
    return ReplayMiss(redact("\n".join(lines)), key=miss.key)


def _record_command(plan: GenerationPlan, test: str, recorded: Sequence[str]) -> tuple[str, str | None]:
    """The command that records the user's turns as they were recorded: the user runs on the judge's
    model (the one its recorded turns name, where the run configures none) at the judge's api base; a
    model named by `simulate(model=...)`, or a backend of the test's own, needs no flag."""
    from .backends.litellm import LiteLLMBackend
    from .pipeline.generations import NO_MODEL
    from .pipeline.replay_miss import record_command

    settings = plan.settings
    (generation,) = plan.calls
    if not isinstance(plan.target.backend, LiteLLMBackend):
        models: tuple[str, ...] | None = None
    elif generation.model_id == NO_MODEL:  # none configured: the model its recorded turns ran on
        models = tuple(dict.fromkeys(recorded))[:1]
    else:
        models = settings.model if settings.model and generation.model_id == settings.model[0] else None
    through = "api_base" if isinstance(plan.target.backend, LiteLLMBackend) else None
    return record_command(test, settings, models, api_base_option=through)


def _unflipped(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The conversation as the app saw it: the user's model wrote the user's turns as its assistant."""
    roles = {"assistant": "user", "user": "assistant"}
    return [{"role": roles.get(str(m.get("role")), m.get("role")), "content": m.get("content")} for m in messages]


def _shared(recorded: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> int:
    """How many messages the two conversations share from the start (the closest recording shares most)."""
    both = min(len(recorded), len(now))
    return next((i for i in range(both) if recorded[i] != now[i]), both)


def _first_difference(
    recorded: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]
) -> tuple[int, int] | None:
    """The index of the first of the app's replies that differs, and which user turn it answered; None
    where every message both hold is the same (or a user turn differs: not the app's doing)."""
    index = _shared(recorded, now)
    if index >= min(len(recorded), len(now)) or now[index].get("role") != "assistant":
        return None
    return index, sum(1 for m in now[:index] if m.get("role") == "user")


def _excerpt(messages: Sequence[Mapping[str, Any]], index: int) -> str:
    if index >= len(messages):
        return "(none)"
    text = _one_line(str(messages[index].get("content")))
    return repr(text if len(text) <= EXCERPT else text[: EXCERPT - 3] + "...")


def _one_line(text: str) -> str:
    return " ".join(text.split())
