"""Anthropic Messages API: ``POST /v1/messages`` with ``x-api-key`` and ``anthropic-version``.

Replies are content blocks (``thinking`` then ``text``, or a ``tool_use`` block when the request forces a
tool, which is how LiteLLM asks older Claude models for JSON); a reply cut at ``max_tokens`` says
``stop_reason: "max_tokens"``; usage counts ``input_tokens``/``output_tokens``; errors are
``{"type": "error", "error": {"type", "message"}}``; a 429 carries ``retry-after`` (seconds).
"""

from __future__ import annotations

import json
from typing import Any

from .base import ProviderServer, Received, Turn

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class AnthropicServer(ProviderServer):
    provider = "anthropic"

    def route(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/v1/messages"

    def credential(self, headers: dict[str, str], query: dict[str, str]) -> str | None:
        return headers.get("x-api-key")

    def success(self, request: Received, turn: Turn) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        if turn.reasoning is not None:
            blocks.append({"type": "thinking", "thinking": turn.reasoning, "signature": "fake-signature"})
        forced = (request.body.get("tool_choice") or {}).get("name")
        stop = "max_tokens" if turn.truncated else "end_turn"
        try:
            arguments = json.loads(turn.reply_text()) if forced else None
        except ValueError:
            arguments = None  # a cut-off reply is not JSON: answer with text
        if forced and isinstance(arguments, dict):
            blocks.append({"type": "tool_use", "id": "toolu_fake", "name": forced, "input": arguments})
            stop = "tool_use"
        else:
            blocks.append({"type": "text", "text": turn.reply_text()})
        return {
            "id": f"msg_fake{len(self.received)}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 10},
        }

    def error(self, status: int, message: str, turn: Turn) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message or f"fake {kind}"}}

    def auth_failure(self, credential: str | None) -> tuple[int, str]:
        return 401, "invalid x-api-key"

    def retry_headers(self, turn: Turn) -> dict[str, str]:
        return {} if turn.retry_after_s is None else {"retry-after": str(turn.retry_after_s)}
