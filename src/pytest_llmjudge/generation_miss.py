"""Why a replay found no stored generation: the nearest stored one, and the fields in which it differs.

In the style of `replay_miss` (vcrpy's matchers): one small function per field, each returning the
field's name when the stored generation and the wanted one differ in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .errors import ReplayMiss
from .replay_miss import miss_error, nearest
from .settings import Settings
from .store.ledger import redact_generation

Entry = Mapping[str, Any]

NO_MODEL = "(no model under test configured)"  # names the generations of a replay that found no recorded model


def _message(entry: Entry, role: str, last: bool = False) -> Any:
    messages = [m for m in entry.get("messages") or [] if isinstance(m, dict) and m.get("role") == role]
    if not messages:
        return None
    return (messages[-1] if last else messages[0]).get("content")


def model(stored: Entry, wanted: Entry) -> str | None:
    """Another model under test."""
    return "model" if stored.get("model") != wanted["model"] else None


def prompt(stored: Entry, wanted: Entry) -> str | None:
    """The prompt (the last user message) changed."""
    return "prompt" if _message(stored, "user", last=True) != _message(wanted, "user", last=True) else None


def system(stored: Entry, wanted: Entry) -> str | None:
    """The system prompt changed, was added or was removed."""
    return "system" if _message(stored, "system") != _message(wanted, "system") else None


def params(stored: Entry, wanted: Entry) -> str | None:
    """The parameters sent (temperature, max_tokens, ...) changed."""
    return "params" if (stored.get("params") or {}) != (wanted.get("params") or {}) else None


def index(stored: Entry, wanted: Entry) -> str | None:
    """Another member of a batch (more members asked for than were recorded)."""
    return "index" if stored.get("index", 0) != wanted.get("index", 0) else None


def messages(stored: Entry, wanted: Entry) -> str | None:
    """The messages differ otherwise (when every field above matches)."""
    return "messages" if stored.get("messages") != wanted.get("messages") else None


MATCHERS: tuple[Callable[[Entry, Entry], str | None], ...] = (model, prompt, system, params, index)
DESCRIBED = {"params": "parameters (temperature, ...)", "index": "batch index"}


def differences(stored: Entry, wanted: Entry) -> list[str]:
    """The fields in which a stored generation differs from the wanted one, in MATCHERS order."""
    found = [field for field in (match(stored, wanted) for match in MATCHERS) if field is not None]
    if not found:
        found = [f for f in (messages(stored, wanted),) if f is not None] or ["key scheme (record it again)"]
    return found


def generation_miss(
    key: str,
    wanted: Entry,
    *,
    test: str | None,
    stored: Mapping[str, Entry] | None,
    ledger_path: Path | None,
    settings: Settings,
) -> ReplayMiss:
    """The error a replay miss of `generate` raises: what is missing, the nearest stored one, how to record it.

    `wanted` is the generation as it would be stored (before redaction); `stored` the test's stored
    generations (None outside a pytest test).
    """

    def nearest_to(entries: Mapping[str, Entry]) -> tuple[str, str]:
        compared = redact_generation(wanted)  # stored entries are redacted: compare like with like
        best_key, best = nearest(entries, compared, differences)
        return best_key, ", ".join(DESCRIBED.get(field, field) for field in best)

    return miss_error(
        key,
        headline=f"no stored generation for this call of generate() (mode replay: {settings.mode_reason})",
        test=test,
        facts=[("model", wanted["model"])],
        stored=stored,
        ledger_path=ledger_path,
        nouns="generations",
        nearest_to=nearest_to,
        recorder="model",
        flags=" --generate-model=MODEL" if wanted["model"] == NO_MODEL else "",
    )
