"""A judge that allows so many requests per second: a responder for the local OpenAI server.

It admits at most `rate` requests in any sliding second and answers the rest with HTTP 429 and how
long until the window has room: `Retry-After` in whole seconds (rounded up), plus `retry-after-ms`
with the exact wait unless `hint="seconds"`.  Shared by the rate-limit tests and the benchmark.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import Any

from .openai_server import Reply, reply_json


class SlidingWindow:
    """Call it with a chat request: a passing judge reply, or a 429 saying when to come back."""

    def __init__(self, rate: int, *, hint: str = "ms") -> None:
        self.rate = rate
        self.hint = hint
        self.admitted: deque[float] = deque()
        self.limited = 0  # requests answered 429
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply | str:
        now = time.monotonic()
        with self.lock:
            while self.admitted and self.admitted[0] <= now - 1.0:
                self.admitted.popleft()
            if len(self.admitted) < self.rate:
                self.admitted.append(now)
                return reply_json(0.9)
            self.limited += 1
            wait = self.admitted[0] + 1.0 - now
        headers = {"Retry-After": str(max(1, math.ceil(wait)))}
        if self.hint == "ms":
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
        return Reply(status=429, headers=headers, error_message=f"Rate limit reached: {self.rate} requests per second")
