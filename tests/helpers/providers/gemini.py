"""Google Gemini API: ``POST /v1beta/models/{model}:generateContent``, key in ``x-goog-api-key`` or ``?key=``.

Replies are ``candidates[].content.parts[].text`` with ``finishReason`` (``STOP``, ``MAX_TOKENS``,
``SAFETY`` with no content at all) and ``usageMetadata``; errors are Google's
``{"error": {"code", "message", "status", "details"}}``.  A 429 is ``RESOURCE_EXHAUSTED`` whose retry
hint travels in the body (``google.rpc.RetryInfo`` ``retryDelay: "Ns"``), not in a header.  A wrong key
is a 400 ``API_KEY_INVALID``; no key at all a 403 ``PERMISSION_DENIED``.
"""

from __future__ import annotations

import re
from typing import Any

from .base import ProviderServer, Received, Turn

ROUTE = re.compile(r"^/v1beta/models/(?P<model>[^/:]+):generateContent$")
STATUSES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
BAD_KEY = "API key not valid. Please pass a valid API key."
NO_KEY = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key."
SAFETY = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]


class GeminiServer(ProviderServer):
    provider = "gemini"

    @property
    def api_base(self) -> str:
        return f"{self.base_url}/v1beta"  # LiteLLM appends /models/{model}:generateContent

    def route(self, method: str, path: str) -> bool:
        return method == "POST" and ROUTE.match(path) is not None

    def credential(self, headers: dict[str, str], query: dict[str, str]) -> str | None:
        return headers.get("x-goog-api-key") or query.get("key")

    @staticmethod
    def model_of(request: Received) -> str:
        match = ROUTE.match(request.path)
        return match.group("model") if match else ""

    def success(self, request: Received, turn: Turn) -> dict[str, Any]:
        usage = {"promptTokenCount": 20, "candidatesTokenCount": 10, "totalTokenCount": 30}
        if turn.blocked:
            candidate: dict[str, Any] = {"finishReason": "SAFETY", "index": 0, "safetyRatings": SAFETY}
            usage = {"promptTokenCount": 20, "totalTokenCount": 20}
        else:
            parts: list[dict[str, Any]] = []
            if turn.reasoning is not None:
                parts.append({"text": turn.reasoning, "thought": True})
            parts.append({"text": turn.reply_text()})
            candidate = {
                "content": {"parts": parts, "role": "model"},
                "finishReason": "MAX_TOKENS" if turn.truncated else "STOP",
                "index": 0,
            }
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": self.model_of(request)}

    def error(self, status: int, message: str, turn: Turn) -> dict[str, Any]:
        details: list[dict[str, Any]] = []
        if message == BAD_KEY:
            details.append(
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                }
            )
        if status == 429 and turn.retry_after_s is not None:
            details.append(
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{turn.retry_after_s}s"}
            )
        code = STATUSES.get(status, "UNKNOWN")
        error = {"code": status, "message": message or f"fake {code}", "status": code}
        return {"error": {**error, "details": details} if details else error}

    def auth_failure(self, credential: str | None) -> tuple[int, str]:
        return (403, NO_KEY) if not credential else (400, BAD_KEY)
