"""An OpenAI reasoning model (o-series, gpt-5) behind ``POST /v1/chat/completions``, Bearer key.

It enforces what OpenAI enforces for these models: ``temperature`` other than 1 and ``max_tokens``
are refused with OpenAI's 400 body (``invalid_request_error``, ``param``, ``code``).  Replies carry
``reasoning_content`` beside ``content`` and count ``reasoning_tokens``; a reply cut off at the
token limit often has no content at all (the budget went on reasoning).
"""

from __future__ import annotations

import time
from typing import Any

from .base import ProviderServer, Received, Turn

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
    500: "server_error",
}
ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


def refusal(body: Any) -> tuple[str, str, str] | None:
    """(message, param, code) for a parameter this model refuses, else None."""
    if not isinstance(body, dict):
        return None
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        message = f"Unsupported value: 'temperature' does not support {temperature} with this model."
        return f"{message} Only the default (1) value is supported.", "temperature", "unsupported_value"
    if "max_tokens" in body:
        message = "Unsupported parameter: 'max_tokens' is not supported with this model."
        return f"{message} Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter"
    return None


class ReasoningServer(ProviderServer):
    provider = "openai"

    @property
    def api_base(self) -> str:
        return f"{self.base_url}/v1"

    def route(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/v1/chat/completions"

    def credential(self, headers: dict[str, str], query: dict[str, str]) -> str | None:
        auth = headers.get("authorization") or ""
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def refuse(self, request: Received) -> tuple[int, dict[str, Any]] | None:
        refused = refusal(request.body)
        if refused is None:
            return None
        message, param, code = refused
        return 400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}

    def success(self, request: Received, turn: Turn) -> dict[str, Any]:
        content = "" if turn.truncated and turn.text is None else turn.reply_text()
        reasoning = turn.reasoning if turn.reasoning is not None else "The output states the policy; it matches."
        return {
            "id": f"chatcmpl-fake{len(self.received)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length" if turn.truncated else "stop",
                    "logprobs": None,
                    "message": {"role": "assistant", "content": content, "reasoning_content": reasoning},
                }
            ],
            "usage": {
                "prompt_tokens": 20,
                "completion_tokens": 74,
                "total_tokens": 94,
                "completion_tokens_details": {"reasoning_tokens": 64},
            },
        }

    def error(self, status: int, message: str, turn: Turn) -> dict[str, Any]:
        if status == 401 and not message:
            message = "Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com."
        error = {
            "message": message or f"fake error {status}",
            "type": ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": ERROR_CODES.get(status),
        }
        return {"error": error}

    def auth_failure(self, credential: str | None) -> tuple[int, str]:
        return 401, ""

    def retry_headers(self, turn: Turn) -> dict[str, str]:
        if turn.retry_after_s is None:
            return {}
        return {"retry-after": str(turn.retry_after_s), "x-ratelimit-reset-requests": f"{turn.retry_after_s}s"}
