"""Azure OpenAI: ``POST /openai/deployments/{deployment}/chat/completions?api-version=...``, key in ``api-key``.

The body is OpenAI's chat completion plus Azure's content-filter annotations; a filtered reply has
``finish_reason: "content_filter"`` and no content.  Errors are ``{"error": {"code", "message"}}`` with
the code as a string; a 429 carries ``retry-after`` and ``retry-after-ms`` and says "Please retry after N
seconds".  A request without an api-version is refused.
"""

from __future__ import annotations

import re
import time
from typing import Any

from .base import ProviderServer, Received, Turn

ROUTE = re.compile(r"^/openai/deployments/(?P<deployment>[^/]+)/chat/completions$")
BAD_KEY = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key "
    "for an active subscription and use a correct regional API endpoint for your resource."
)
NO_FILTER = {name: {"filtered": False, "severity": "safe"} for name in ("hate", "self_harm", "sexual", "violence")}


class AzureServer(ProviderServer):
    provider = "azure"

    def route(self, method: str, path: str) -> bool:
        return method == "POST" and ROUTE.match(path) is not None

    def credential(self, headers: dict[str, str], query: dict[str, str]) -> str | None:
        return headers.get("api-key")

    @staticmethod
    def deployment_of(request: Received) -> str:
        match = ROUTE.match(request.path)
        return match.group("deployment") if match else ""

    def success(self, request: Received, turn: Turn) -> dict[str, Any]:
        if turn.blocked:
            message: dict[str, Any] = {"role": "assistant", "content": None}
            finish, filters = "content_filter", {**NO_FILTER, "violence": {"filtered": True, "severity": "high"}}
        else:
            message = {"role": "assistant", "content": turn.reply_text()}
            finish, filters = ("length" if turn.truncated else "stop"), NO_FILTER
        return {
            "id": f"chatcmpl-fake{len(self.received)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "gpt-4o-mini-2024-07-18",  # Azure names the model behind the deployment
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": NO_FILTER}],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish,
                    "logprobs": None,
                    "content_filter_results": filters,
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
        }

    def error(self, status: int, message: str, turn: Turn) -> dict[str, Any]:
        if status == 429 and not message:
            wait = turn.retry_after_s if turn.retry_after_s is not None else 1
            message = (
                "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 "
                f"have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after "
                f"{wait} seconds."
            )
        return {"error": {"code": str(status), "message": message or f"fake error {status}"}}

    def auth_failure(self, credential: str | None) -> tuple[int, str]:
        return 401, BAD_KEY

    def answer(
        self, method: str, url: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        if "api-version=" not in url:
            return 404, {"error": {"code": "404", "message": "Resource not found"}}, {}
        return super().answer(method, url, headers, raw)

    def retry_headers(self, turn: Turn) -> dict[str, str]:
        if turn.retry_after_s is None:
            return {}
        return {"retry-after": str(turn.retry_after_s), "retry-after-ms": str(turn.retry_after_s * 1000)}
