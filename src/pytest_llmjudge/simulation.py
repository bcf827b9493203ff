"""A simulated user: a model playing a persona with a goal, talking to the app under test.

`simulate(app, persona, turns=...)` lets the user speak first, then the app, turn after turn, until
`turns` user turns were taken, `stop(messages)` is true, or the user says it is done (it ends its
message with `[DONE]`).  It returns the conversation as `{"role", "content"}` dicts.

Each user turn is a recorded generation of the simulated user's model (the judge's, unless
`model=` names another), kept in the test's verdict file beside the generations of `generate`.
Its key holds the model, the persona's prompt and the conversation so far, so the app, which runs
for real in every mode, decides which turn comes next: where its reply differs from the recorded
one, the next user turn is not recorded, and a replay says which of the app's replies changed.  A
turn is stored as what it adds to the turn before it (`Generation.follows`), so a long conversation's
file grows with its turns, not with their square.

The user's model sees the conversation from the user's side (as openevals' simulated user does):
its own earlier turns as the assistant's, the app's replies as the user's.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

from .conversation import messages_of
from .errors import JudgeError, ReplayMiss
from .judge import user_facing
from .pipeline.generations import Generation, GenerationPlan, Target, generation_key, plan_generations
from .pipeline.run import agenerate as arun_generations
from .pipeline.run import generate as run_generations
from .runtime import JudgeRuntime, TestContext, active, standalone_runtime

__all__ = ["DONE", "asimulate", "simulate"]

App = Callable[[list[dict[str, str]]], Any]
Stop = Callable[[list[dict[str, str]]], bool]

DONE = "[DONE]"  # what the simulated user ends its message with when the conversation is over for it
_DONE = re.compile(r"\s*\[DONE\][\s.!]*$", re.IGNORECASE)

USER_PROMPT = (
    "You are role-playing a user of an application, in a conversation with the application's assistant. "
    "The user you play:\n\n{persona}\n\n"
    "Write only the next message this user sends: one message, in the first person, as the user would type "
    "it, with no narration, no quotation marks and no label. Stay in character: pursue the user's goal, "
    "answer the assistant's questions as this user would, and never write the assistant's part. "
    f"When the goal is reached, or the assistant has made clear that it cannot be, end your message with "
    f"{DONE} on a line of its own (or reply {DONE} alone if the user has nothing more to say)."
)
# The user's model writes the assistant's part of its own chat: this first message asks for the opening.
OPENING = "(The conversation starts now. Write the user's first message to the assistant.)"

SEVERAL_USERS = (
    "this simulated user's turn was recorded with several models ({models}) and none is configured: pass "
    "model=... to simulate(), or --judge-model=MODEL"
)
NO_USER_MODEL = (
    "simulate() has no model for the simulated user: pass model=..., or --judge-model=MODEL (the simulated "
    "user runs on the judge model). The model is part of every user turn's key."
)


@user_facing
def simulate(
    app: App, persona: str, *, turns: int, stop: Stop | None = None, model: str | None = None
) -> list[dict[str, str]]:
    """The conversation of `app` with a simulated user playing `persona`, as `{"role", "content"}` dicts.

    `app` takes the messages so far and returns its reply: text, a chat message, or an SDK response.
    The user speaks first; the conversation runs for up to `turns` user turns, until `stop(messages)`
    is true after a reply of the app, or until the user says it is done.  Each user turn is recorded
    in the test's verdict file and replayed offline; the app runs for real.
    """
    __tracebackhide__ = True
    talk = _Conversation(app, persona, turns, stop, model)
    while not talk.over:
        plan = talk.plan()
        with talk.asking(plan):
            (text,) = run_generations(plan, talk.runtime)
        talk.heard(text, plan)
        if not talk.over:
            talk.replied(talk.app(talk.messages()))
    return talk.messages()


@user_facing
async def asimulate(
    app: App, persona: str, *, turns: int, stop: Stop | None = None, model: str | None = None
) -> list[dict[str, str]]:
    """`simulate`, awaitable: the user's live turns are awaited, and so is `app` where it returns an awaitable."""
    __tracebackhide__ = True
    talk = _Conversation(app, persona, turns, stop, model)
    while not talk.over:
        plan = talk.plan()
        with talk.asking(plan):
            (text,) = await arun_generations(plan, talk.runtime)
        talk.heard(text, plan)
        if not talk.over:
            reply = talk.app(talk.messages())
            talk.replied(await reply if inspect.isawaitable(reply) else reply)
    return talk.messages()


class _Conversation:
    """One simulation: its arguments checked, whom the user's turns ask, the conversation so far, and
    whether it is over."""

    def __init__(self, app: object, persona: object, turns: object, stop: object, model: object) -> None:
        if not callable(app):
            raise JudgeError(f"simulate() takes the app as a callable (messages -> reply); got {type(app).__name__}")
        if not isinstance(persona, str) or not persona.strip():
            raise JudgeError("simulate() persona must describe the user and their goal, as a non-empty str")
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
            raise JudgeError(f"simulate() turns must be a whole number >= 1 (the most user turns); got {turns!r}")
        if stop is not None and not callable(stop):
            raise JudgeError(f"simulate() stop must be a callable (messages -> bool) or None; got {stop!r}")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise JudgeError(f"simulate() model must name a model, got {model!r}")
        self.app: App = app
        self.stop: Stop | None = stop
        self.turns, self.model = turns, model
        self.persona = persona.strip()
        self.system = USER_PROMPT.format(persona=self.persona)
        self.runtime = active() or standalone_runtime()
        self.context = self.runtime.current
        self.target, self.sends = _user_target(self.runtime, self.context, model)
        self.conversation: list[dict[str, str]] = []
        self.taken = 0  # user turns taken
        self.over = False
        # The last user turn asked of each model: its key and how many messages it was asked with (the next
        # turn continues it, and is stored as what it adds).
        self.last: dict[str, tuple[str, int]] = {}

    def messages(self) -> list[dict[str, str]]:
        """The conversation so far, a copy (the app may change what it is given)."""
        return [dict(m) for m in self.conversation]

    def plan(self) -> GenerationPlan:
        """The next user turn, keyed by the model, the persona's prompt and the conversation so far."""
        return plan_generations(self.runtime, self.context, self.model, self._turn, self.target)

    def _turn(self, model: str, api_base: str | None) -> list[Generation]:
        from .backends.protocol import CallRequest

        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": OPENING}]
        messages += [{"role": _FLIPPED[m["role"]], "content": m["content"]} for m in self.conversation]
        sent = self.sends.get(model, model)
        request = CallRequest(model=sent, messages=messages, api_base=api_base, temperature=None)
        key = generation_key(model, messages, {}, 0)
        return [Generation(model, tuple(messages), {}, 0, key, request, follows=self.last.get(model))]

    @contextlib.contextmanager
    def asking(self, plan: GenerationPlan) -> Iterator[None]:
        """Ask for a user turn: a replay that misses says which of the app's replies changed."""
        try:
            yield
        except ReplayMiss as miss:
            from .simulation_miss import turn_miss  # the diagnosis loads only when a replay misses

            raise turn_miss(miss, self.persona, self.taken, plan) from None

    def heard(self, reply: str, plan: GenerationPlan) -> None:
        """The user's turn: its text joins the conversation, without the done signal that may end it."""
        (asked,) = plan.calls
        self.last[asked.model_id] = (asked.key, len(asked.messages))
        self.taken += 1
        said = reply.strip()
        if not said:
            raise JudgeError(
                f"simulate(): the simulated user's turn {self.taken} is empty (model {plan.calls[0].model_id}): "
                "check the model with `llmjudge doctor`, or name another with model=..."
            )
        text = _DONE.sub("", said).strip()
        if text:
            self.conversation.append({"role": "user", "content": text})
        self.over = text != said or not text

    def replied(self, reply: object) -> None:
        """The app's reply joins the conversation; then `stop`, or the number of turns, may end it."""
        if inspect.isawaitable(reply):
            close = getattr(reply, "close", None)
            if callable(close):
                close()  # never awaited: said here, not in a warning at garbage collection
            raise JudgeError("simulate() got an awaitable from the app: an async app needs `await asimulate(...)`")
        self.conversation.append({"role": "assistant", "content": reply_text(reply, self.taken)})
        self.over = self.taken >= self.turns or (self.stop is not None and bool(self.stop(self.messages())))


_FLIPPED = {"user": "assistant", "assistant": "user"}  # the user's model plays the user as its assistant


def reply_text(reply: object, turn: int) -> str:
    """The text of the app's reply: a str, or the last assistant text of a chat message, an SDK response
    or a list of messages."""
    if isinstance(reply, str):
        return reply
    what = f"the app's reply to user turn {turn}"
    messages = messages_of(reply, what)
    texts = [m.content for m in messages or () if m.role == "assistant" and m.content.strip()]
    if texts:
        return texts[-1]
    shape = "holds no assistant text" if messages else f"is a {type(reply).__name__}"
    raise JudgeError(
        f"simulate(): {what} {shape}: return the reply as text, a chat message "
        '({"role": "assistant", "content": ...}), or the response of an LLM SDK'
    )


def _user_target(
    runtime: JudgeRuntime, context: TestContext | None, model: str | None
) -> tuple[Target, dict[str, str]]:
    """Whom the user's turns ask: `model=` through LiteLLM, else the test's judge (its first model, or its own
    backend), served where the judge is; and the model each key's model id sends (a custom judge's name
    keys its turns, as it keys its verdicts)."""
    from .backends.litellm import LiteLLMBackend
    from .pipeline.plan import as_backend, judge_ids
    from .settings import MARKER_KEYS, SettingError

    marker = {k: v for k, v in (context.marker if context is not None else {}).items() if k in MARKER_KEYS}
    try:
        settings = runtime.settings.with_marker(marker) if marker else runtime.settings
    except SettingError as exc:
        raise JudgeError(str(exc)) from None
    backend = LiteLLMBackend() if model is not None else as_backend(context.judge_backend() if context else None)
    sends: dict[str, str] = {}
    if isinstance(backend, LiteLLMBackend):
        default, api_base = model or (settings.model[0] if settings.model else None), settings.api_base
    else:
        (default, send), api_base = judge_ids(settings, backend)[0], None
        sends[default] = send or default
    target = Target("simulate()", default, api_base, backend, NO_USER_MODEL, SEVERAL_USERS, True, ("replay", "auto"))
    return target, sends
