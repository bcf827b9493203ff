"""The part every provider's fake server shares: a threaded stdlib HTTP server on 127.0.0.1.

A subclass speaks one provider's public wire format: which route it serves, where the key travels,
and how a reply, an error and a retry hint look there.  The base class records every request (with
secrets reduced to a presence flag), checks the key when given one, and plays scripted `Turn`s.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self
from urllib.parse import parse_qsl, urlsplit

SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})
SECRET_QUERY = frozenset({"key"})
PRESENT = "<present>"


def judge_reply(score: float = 0.9, reasoning: str = "The output meets the criteria.") -> str:
    """The text of a judge's answer in the plugin's JSON form."""
    return json.dumps({"reasoning": reasoning, "score": score})


@dataclass
class Turn:
    """What the server does for one request."""

    text: str | None = None  # the reply text; None: a passing judge reply (score 0.9)
    status: int = 200  # not 200: the provider's error body for this status
    message: str = ""  # the error message ("": the provider's usual one)
    truncated: bool = False  # the reply stopped at the token limit (the provider's own stop reason)
    blocked: bool = False  # a safety block: no text at all
    reasoning: str | None = None  # reasoning text beside the reply, where the provider has it
    retry_after_s: int | None = None  # the provider's own retry hint (header or body)
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers

    def reply_text(self) -> str:
        if self.text is not None:
            return self.text
        full = judge_reply()
        return full[: len(full) // 2] if self.truncated else full


@dataclass(frozen=True)
class Received:
    """One request as it reached the server; secrets only as PRESENT."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: Any
    key_matched: bool | None  # the credential equals the server's key (None: the server checks none)

    def messages_text(self) -> str:
        """All text the request carries (system and user parts), for "did the prompt arrive" checks."""
        return json.dumps(self.body)


class ProviderServer:
    """Start with `with SomeServer(key=...) as server:`; script with `enqueue`; read `received`."""

    provider: ClassVar[str] = "generic"

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.received: list[Received] = []
        self._turns: deque[Turn] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what a provider defines --------------------------------------------------------------

    def route(self, method: str, path: str) -> bool:
        raise NotImplementedError

    def credential(self, headers: dict[str, str], query: dict[str, str]) -> str | None:
        raise NotImplementedError

    def success(self, request: Received, turn: Turn) -> dict[str, Any]:
        raise NotImplementedError

    def error(self, status: int, message: str, turn: Turn) -> dict[str, Any]:
        raise NotImplementedError

    def auth_failure(self, credential: str | None) -> tuple[int, str]:
        """Status and message for a missing or wrong key."""
        raise NotImplementedError

    def retry_headers(self, turn: Turn) -> dict[str, str]:
        return {}

    def refuse(self, request: Received) -> tuple[int, dict[str, Any]] | None:
        """Status and error body for a request this model refuses whatever is scripted (None: none)."""
        return None

    @property
    def api_base(self) -> str:
        """What LiteLLM's api_base (--judge-api-base) must be for this provider."""
        return self.base_url

    # -- running ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> Self:
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=f"fake-{self.provider}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, *turns: Turn) -> None:
        """The next requests get these turns, in order; after them, a passing reply."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def last(self) -> Received:
        assert self.received, f"no request reached the fake {self.provider} server"
        return self.received[-1]

    # -- used by the handler ------------------------------------------------------------------

    def answer(
        self, method: str, url: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        parts = urlsplit(url)
        if not self.route(method, parts.path):
            return 404, self.error(404, f"no route for {method} {parts.path}", Turn(status=404)), {}
        query = dict(parse_qsl(parts.query))
        credential = self.credential(headers, query)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode(errors="replace")
        request = Received(
            method=method,
            path=parts.path,
            query={k: PRESENT if k in SECRET_QUERY else v for k, v in query.items()},
            headers={k: PRESENT if k in SECRET_HEADERS else v for k, v in headers.items()},
            body=body,
            key_matched=None if self.key is None else credential == self.key,
        )
        with self._lock:
            self.received.append(request)
            if request.key_matched is False:  # a refused key consumes no scripted turn
                status, message = self.auth_failure(credential)
                return status, self.error(status, message, Turn(status=status)), {}
            refused = self.refuse(request)
            if refused is not None:
                return refused[0], refused[1], {}
            turn = self._turns.popleft() if self._turns else Turn()
        if turn.status != 200:
            return (
                turn.status,
                self.error(turn.status, turn.message, turn),
                {**self.retry_headers(turn), **turn.headers},
            )
        return 200, self.success(request, turn), dict(turn.headers)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_owner: ClassVar[ProviderServer]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, body, extra = self.server_owner.answer("POST", self.path, headers, raw)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
