"""Ollama's native chat API: ``POST /api/chat``, no authentication (a key, when sent, is a Bearer token).

A reply is ``{"message": {"role", "content", "thinking"?}, "done": true, "done_reason"}`` with
``done_reason: "length"`` when ``num_predict`` cut it off, and token counts in ``prompt_eval_count`` /
``eval_count``.  Structured output is the request's ``format`` (``"json"`` or a JSON schema), sampling
settings live in ``options``.  Errors are ``{"error": "..."}``; a full queue is 503 "server busy".
"""

from __future__ import annotations

from typing import Any

from .base import ProviderServer, Received, Turn

BUSY = "server busy, please try again.  maximum pending requests exceeded"


class OllamaServer(ProviderServer):
    provider = "ollama"

    def route(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/api/chat"

    def credential(self, headers: dict[str, str], query: dict[str, str]) -> str | None:
        auth = headers.get("authorization") or ""
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def success(self, request: Received, turn: Turn) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.reply_text()}
        if turn.reasoning is not None:
            message["thinking"] = turn.reasoning
        return {
            "model": request.body.get("model"),
            "created_at": "2025-01-01T00:00:00.000000Z",
            "message": message,
            "done": True,
            "done_reason": "length" if turn.truncated else "stop",
            "total_duration": 1_000_000,
            "load_duration": 1_000,
            "prompt_eval_count": 20,
            "prompt_eval_duration": 1_000,
            "eval_count": 10,
            "eval_duration": 1_000,
        }

    def error(self, status: int, message: str, turn: Turn) -> dict[str, Any]:
        default = BUSY if status == 503 else "unauthorized" if status == 401 else f"fake error {status}"
        return {"error": message or default}

    def auth_failure(self, credential: str | None) -> tuple[int, str]:
        return 401, "unauthorized"  # what a reverse proxy or ollama.com answers; local Ollama never does

    def retry_headers(self, turn: Turn) -> dict[str, str]:
        return {} if turn.retry_after_s is None else {"retry-after": str(turn.retry_after_s)}
