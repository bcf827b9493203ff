"""What the xdist workers of one run learn about a judge's rate limit, shared through a small file under a lock.

Each worker sends its own calls, so without sharing each learns the limit alone: every worker's
calls are refused in turn, and when a pause ends they all go at once into the same refusal.  Here
the workers of one run (as `store.spend` shares the run's spend) keep, per judge (model and api
base): the calls the judge accepted lately, the pause the last refusal asked for, and, once a call
was refused, the pace that stays under the limit: the accepted calls of the last window, spread over
that window.  Every call then takes the next free moment of that pace, whichever worker sends it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .atomic import write_atomically
from .spend import locked, number, prune_old, read_object, run_file

__all__ = ["SharedPace"]

MARGIN = 1.05  # pace a little under the limit learned: a call's network delay varies
HISTORY_S = 60.0  # accepted calls remembered this long (a per-minute limit's window)
MAX_CALLS = 2000  # at most this many remembered per judge, however fast it is
MAX_WAIT_S = 120.0  # the limiter's longest pause (AdaptiveLimiter.max_pause_s)


class SharedPace:
    """One judge's pace, shared by the run's xdist workers (`for_run`: None outside a worker)."""

    def __init__(self, path: Path, route: str, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.route = route
        self._clock = clock
        self._pruned = False  # older runs' files are removed once, on this judge's first update

    @classmethod
    def for_run(
        cls,
        cache_dir: Path | Callable[[], Path | None] | None,
        model: str,
        api_base: str | None,
        environ: Mapping[str, str] | None = None,
    ) -> SharedPace | None:
        """The pace of judge `model` at `api_base` in this xdist run (None outside a worker: nothing to share)."""
        path = run_file(cache_dir, "pace", environ)
        return None if path is None else cls(path, f"{model} {api_base or ''}")

    def _update(self, change: Callable[[dict[str, Any], float], float]) -> float:
        """Apply `change(state, now)` to this judge's state under the lock; its result (0 on a failure:
        sharing is an optimisation, never a reason for a call to fail)."""
        try:
            with locked(self.path):
                document = read_object(self.path)
                state = document.get(self.route)
                if not isinstance(state, dict):
                    state = document[self.route] = {}
                result = change(state, self._clock())
                write_atomically(self.path, json.dumps(document))
                if not self._pruned:
                    self._pruned = True
                    prune_old(self.path)
                return result
        except (OSError, TypeError, ValueError):
            return 0.0

    def wait(self) -> float:
        """Seconds this call should wait before it is sent: until the last refusal's pause has passed
        and, once a pace is known, until the next moment of it (which it takes)."""

        def take(state: dict[str, Any], now: float) -> float:
            start = max(now, number(state.get("paused_until")))
            gap = number(state.get("gap"))
            if gap > 0:
                start = max(start, number(state.get("next")))
                state["next"] = start + gap
            return start - now

        # The file is another process's writing: a wait is never longer than any pause a server may ask for.
        return min(MAX_WAIT_S, self._update(take))

    def accepted(self) -> None:
        """The judge accepted a call."""

        def note(state: dict[str, Any], now: float) -> float:
            calls = [t for t in _numbers(state.get("ok")) if t > now - HISTORY_S][-MAX_CALLS:]
            state["ok"] = [*calls, now]
            return 0.0

        self._update(note)

    def refused(self, retry_after: float | None) -> None:
        """The judge refused a call for its rate (HTTP 429), asking to wait `retry_after` seconds."""

        def learn(state: dict[str, Any], now: float) -> float:
            if retry_after is not None and retry_after > 0:
                state["paused_until"] = max(number(state.get("paused_until")), now + retry_after)
            # A wait of a second or less is a per-second limit; a longer one, a per-minute limit.
            window = 1.0 if retry_after is None or retry_after <= 1.0 else HISTORY_S
            recent = sum(1 for t in _numbers(state.get("ok")) if t > now - window)
            learned = MARGIN * window / max(1, recent)
            gap = number(state.get("gap"))
            if gap <= 0:
                state["gap"] = learned
            elif now - number(state.get("learned_at")) > window:  # still refused at this pace: slow down
                state["gap"] = max(learned, gap * 1.2)
            else:
                return 0.0
            state["learned_at"] = now
            return 0.0

        self._update(learn)


def _numbers(value: Any) -> list[float]:
    return [float(v) for v in value if isinstance(v, (int, float))] if isinstance(value, list) else []
