"""A scriptable, OpenAI-compatible chat-completions server for tests (stdlib only).

The test suite uses it to drive the plugin through the *real* LiteLLM client over real
HTTP on 127.0.0.1 -- no mocking, and nothing ever leaves the machine.

In-process use::

    from tests.openai_server import OpenAIServer, Reply   # or `from openai_server import`

    with OpenAIServer() as server:                  # ephemeral port on 127.0.0.1
        litellm.completion(model="openai/judge-test", api_base=server.base_url,
                           api_key="sk-test", messages=[...])
        server.enqueue(Reply(status=429, retry_after=2), "plain text reply")
        ...                                         # next two requests get those
        server.requests[-1]["temperature"]          # every request body, parsed

What a request gets: the next queued reply (`enqueue`, FIFO), else whatever the
responder returns (`set_responder`; default `score_from_prompt`, a deterministic fake
judge that obeys ``SCORE=0.8`` / ``VERDICT=pass`` directives in the last user message).
A responder may return a `str` (the assistant content) or a `Reply` (faults, latency,
status codes, logprobs, ...).

Out-of-process use (pytest-xdist workers and subprocess pytest runs reach the same
server)::

    proc, base_url = serve_in_subprocess(latency_s=0.2, script="faults.jsonl")
    try: ...
    finally: stop_subprocess(proc)

or directly: ``python tests/helpers/openai_server.py --port 0 --latency 0.2 --responder
score_from_prompt [--script FILE]``; the first stdout line is the base URL.  A script is
a JSON-lines file of `Reply` fields (``{"status": 429, "retry_after": 1}``) consumed in
order before the responder answers.

Endpoints: ``POST /v1/chat/completions`` (and ``/chat/completions``), non-streaming or
SSE (``"stream": true``; honours ``stream_options.include_usage``); ``GET /v1/models``;
anything else is a 404 with an OpenAI-style error body.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "RESPONDERS",
    "OpenAIServer",
    "Reply",
    "Responder",
    "load_script",
    "refuse_json_schema",
    "refusing",
    "reply_json",
    "response_format_type",
    "score_from_prompt",
    "serve_in_subprocess",
    "stop_subprocess",
]

MODEL_ID = "judge-test"
IDLE_TIMEOUT_S = 30.0  # a keep-alive connection idle this long is closed by the server


@dataclass
class Reply:
    """What the server does for one request."""

    content: str | None = None  # assistant message content (None -> the responder's answer)
    status: int = 200  # non-200 sends {"error": {"message", "type", "code"}}
    error_message: str = ""  # error body message ("" -> a default); "{api_key}" -> the bearer token sent
    error_type: str | None = None  # error body "type" (None -> a per-status default, see _ERRORS)
    delay_s: float = 0.0  # sleep before answering (on top of the server's latency_s)
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers
    retry_after: float | None = None  # sets a Retry-After header (seconds)
    drop: bool = False  # close the connection without any response
    truncate: bool = False  # full Content-Length, half the body, then close
    body: bytes | None = None  # raw body override (malformed JSON etc.), sent with status
    finish_reason: str = "stop"  # e.g. "length" for a reply cut off at max_tokens
    prompt_tokens: int = 20
    completion_tokens: int = 10
    logprobs: list[dict] | None = None  # chat logprobs "content" list (non-streaming only)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        """A Reply from JSON-able fields (`body` may be a str); unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown Reply fields: {sorted(unknown)}")
        data = dict(data)
        if isinstance(data.get("body"), str):
            data["body"] = data["body"].encode()
        return cls(**data)


Responder = Callable[[dict], "Reply | str"]

_SCORE_RE = re.compile(r"SCORE=([0-9.]+)")
_VERDICT_RE = re.compile(r"VERDICT=(pass|fail)")


def reply_json(score: float, reasoning: str = "fake judge reasoning", **extra: Any) -> str:
    """The JSON text of a judge reply: ``{"reasoning": ..., "score": ..., **extra}``."""
    return json.dumps({"reasoning": reasoning, "score": score, **extra})


def _last_user_text(request: dict) -> str:
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return "" if content is None else str(content)
    return ""


def score_from_prompt(request: dict) -> str:
    """Default responder: a deterministic fake judge.

    Looks in the last user message for ``SCORE=<float>`` and/or ``VERDICT=pass|fail``.
    ``SCORE`` sets the score; ``VERDICT`` alone means 1.0 / 0.0 and adds a ``verdict``
    key.  Without a directive the score is 0.5.
    """
    text = _last_user_text(request)
    found: list[str] = []
    score: float | None = None
    score_match = _SCORE_RE.search(text)
    if score_match:
        number = score_match.group(1).rstrip(".")  # "SCORE=0.8." at the end of a sentence
        try:
            score = float(number)
            found.append(f"SCORE={number}")
        except ValueError:  # e.g. "SCORE=1.2.3": not a directive
            pass
    extra: dict[str, Any] = {}
    verdict_match = _VERDICT_RE.search(text)
    if verdict_match:
        found.append(verdict_match.group(0))
        extra["verdict"] = verdict_match.group(1)
        if score is None:
            score = 1.0 if verdict_match.group(1) == "pass" else 0.0
    if score is None:
        return reply_json(0.5, "fake judge: no SCORE= directive")
    return reply_json(score, f"fake judge: found {' '.join(found)} in the output", **extra)


def response_format_type(request: dict) -> str | None:
    """The ``response_format`` a request asked for: "json_schema", "json_object+schema" (JSON mode with a
    schema beside it, as llama.cpp's servers take it), "json_object", or None."""
    value = request.get("response_format")
    if not isinstance(value, dict):
        return None
    return "json_object+schema" if value.get("type") == "json_object" and "schema" in value else value.get("type")


def refusing(*refused: str, status: int = 400, answer: Responder = score_from_prompt) -> Responder:
    """A responder that answers `status` to a request whose ``response_format`` type is in `refused`
    (an error naming it, as vLLM-style servers do), and `answer` otherwise."""

    def respond(request: dict) -> Reply | str:
        kind = response_format_type(request)
        if kind in refused:
            return Reply(status=status, error_message=f"response_format type {kind!r} is not supported by this server")
        return answer(request)

    return respond


def refuse_json_schema(request: dict) -> Reply | str:
    """Refuses ``json_schema`` with HTTP 500 (as some servers do), accepts ``json_object``; see `refusing`."""
    return refusing("json_schema", status=500)(request)


RESPONDERS: dict[str, Responder] = {"score_from_prompt": score_from_prompt, "refuse_json_schema": refuse_json_schema}


def _resolve_responder(spec: str) -> Responder:
    """A responder by name (see `RESPONDERS`) or by ``module:function``."""
    if spec in RESPONDERS:
        return RESPONDERS[spec]
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        return getattr(importlib.import_module(module_name), attr)
    raise ValueError(f"unknown responder {spec!r}; known: {sorted(RESPONDERS)} or module:function")


def load_script(path: str | Path) -> list[Reply]:
    """Replies from a JSON-lines file of `Reply` fields (blank lines and ``#`` lines skipped)."""
    replies = []
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            replies.append(Reply.from_dict(json.loads(line)))
    return replies


# status -> (error "type", error "code", default message).  Only 400/422 use the type
# "invalid_request_error": LiteLLM maps ANY status whose error body contains that string to
# BadRequestError (unless the message says "Incorrect API key provided"), so using it for
# other statuses would hide the status-specific exception classes.  Set `Reply.error_type`
# to reproduce that behaviour on purpose.
_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request (fake server)"),
    401: ("authentication_error", "invalid_api_key", "Invalid authentication (fake server)"),
    403: ("permission_error", None, "Permission denied (fake server)"),
    404: ("not_found_error", "model_not_found", "The model does not exist (fake server)"),
    408: ("timeout_error", None, "Request timed out (fake server)"),
    422: ("invalid_request_error", None, "Unprocessable request (fake server)"),
    429: ("rate_limit_error", "rate_limit_exceeded", "Rate limit reached (fake server)"),
}


def _error_body(status: int, message: str = "", error_type: str | None = None) -> bytes:
    default = (
        ("server_error", None, "Server error (fake server)")
        if status >= 500
        else ("api_error", None, "Error (fake server)")
    )
    err_type, code, default_message = _ERRORS.get(status, default)
    error = {
        "message": message or f"{default_message} [HTTP {status}]",
        "type": error_type or err_type,
        "param": None,
        "code": code,
    }
    return json.dumps({"error": error}).encode()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True
    owner: OpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # client went away: not worth a word
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1.0"
    timeout = IDLE_TIMEOUT_S
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    # -- plumbing -------------------------------------------------------------------------

    def _send(
        self, status: int, body: bytes, content_type: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _send_error_json(self, status: int, message: str) -> None:
        self._send(status, _error_body(status, message))

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _bearer_token(self) -> str:
        auth = self.headers.get("Authorization") or ""
        return auth[7:] if auth.lower().startswith("bearer ") else auth

    def _abort(self) -> None:
        """Close the socket now, whatever the client is waiting for."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- routes ---------------------------------------------------------------------------

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "fake-openai"}]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send_error_json(404, f"Unknown path: GET {self.path}")

    def do_POST(self) -> None:
        raw = self._read_body()
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error_json(404, f"Unknown path: POST {self.path}")
            return
        try:
            request = json.loads(raw or b"null")
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError:
            self._send_error_json(400, "Request body is not a JSON object")
            return
        owner = self.server.owner
        owner._enter(request, {k.lower(): v for k, v in self.headers.items()})
        try:
            self._answer(request, owner._next_reply(request), owner)
        finally:
            owner._leave()

    def _answer(self, request: dict, reply: Reply, owner: OpenAIServer) -> None:
        owner._sleep(owner.latency_s + reply.delay_s)
        if reply.drop:
            self._abort()
            return
        headers = dict(reply.headers)
        if reply.retry_after is not None:
            ra = reply.retry_after
            headers["Retry-After"] = str(int(ra)) if float(ra).is_integer() else str(ra)
        if reply.body is not None:
            body, content_type = reply.body, "application/json"
        elif reply.status != 200:
            message = reply.error_message.replace("{api_key}", self._bearer_token())
            body, content_type = _error_body(reply.status, message, reply.error_type), "application/json"
        elif request.get("stream"):
            body, content_type = self._sse_body(request, reply, owner), "text/event-stream"
            headers.setdefault("Cache-Control", "no-cache")
        else:
            body, content_type = json.dumps(self._completion(request, reply, owner)).encode(), "application/json"
        if reply.truncate:
            self.send_response(reply.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self._abort()
            return
        self._send(reply.status, body, content_type, headers)

    @staticmethod
    def _usage(reply: Reply) -> dict[str, int]:
        return {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }

    def _completion(self, request: dict, reply: Reply, owner: OpenAIServer) -> dict:
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": reply.content},
            "finish_reason": reply.finish_reason,
            "logprobs": {"content": reply.logprobs} if reply.logprobs is not None else None,
        }
        return {
            "id": f"chatcmpl-{owner._new_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", MODEL_ID),
            "choices": [choice],
            "usage": self._usage(reply),
        }

    def _sse_body(self, request: dict, reply: Reply, owner: OpenAIServer) -> bytes:
        base = {
            "id": f"chatcmpl-{owner._new_id()}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request.get("model", MODEL_ID),
        }
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        content = reply.content or ""
        pieces = [content[i : i + 16] for i in range(0, len(content), 16)] or [""]
        deltas: list[tuple[dict, str | None]] = [({"role": "assistant", "content": ""}, None)]
        deltas += [({"content": p}, None) for p in pieces]
        deltas.append(({}, reply.finish_reason))
        chunks = [
            {**base, "choices": [{"index": 0, "delta": d, "logprobs": None, "finish_reason": f}]} for d, f in deltas
        ]
        if include_usage:
            chunks.append({**base, "choices": [], "usage": self._usage(reply)})
        lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
        return "".join(lines).encode()


class OpenAIServer:
    """A fake OpenAI chat-completions server on 127.0.0.1, run on a background thread.

    Attributes: `base_url` (``http://127.0.0.1:PORT/v1``, set by `start`), `port`,
    `requests` (every chat request body, parsed, in arrival order), `request_headers`
    (their headers), `max_in_flight` (the most chat requests handled at once),
    `latency_s` (added to every reply; mutable).
    """

    def __init__(self, responder: Responder | None = None, *, latency_s: float = 0.0, port: int = 0) -> None:
        self.latency_s = latency_s
        self.port = port  # 0: an ephemeral port, known after `start`
        self.base_url = ""
        self.requests: list[dict] = []
        self.request_headers: list[dict[str, str]] = []  # headers of each of `requests`, names lower-cased
        self.max_in_flight = 0
        self._responder: Responder = responder or score_from_prompt
        self._queue: deque[Reply | str] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._ids = 0
        self._conns: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        """Bind an ephemeral port and serve on a daemon thread; returns self."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self.port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop promptly: wake sleeping handlers, close open (keep-alive) sockets."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting --------------------------------------------------------------------------

    def enqueue(self, *replies: Reply | str) -> None:
        """Queue replies; each request consumes the next one before the responder is asked."""
        with self._lock:
            self._queue.extend(replies)

    def set_responder(self, responder: Responder | None) -> None:
        """Answer un-queued requests with `responder` (None: `score_from_prompt`)."""
        self._responder = responder or score_from_prompt

    @property
    def request_count(self) -> int:
        """How many chat-completion requests arrived."""
        with self._lock:
            return len(self.requests)

    @property
    def pending(self) -> int:
        """How many queued replies are not consumed yet."""
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        """Clear requests, queue and counters; restore the default responder."""
        with self._lock:
            self.requests.clear()
            self.request_headers.clear()
            self._queue.clear()
            self.max_in_flight = 0
        self._responder = score_from_prompt

    # -- used by the handler ----------------------------------------------------------------

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def _enter(self, request: dict, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(request)
            self.request_headers.append(headers)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _new_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)  # returns early when the server stops

    def _next_reply(self, request: dict) -> Reply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        responder = self._responder
        reply = _as_reply(queued if queued is not None else responder(request))
        if reply.content is None and reply.status == 200 and reply.body is None:
            fallback = _as_reply(responder(request)) if queued is not None else Reply()
            reply.content = fallback.content if fallback.content is not None else score_from_prompt(request)
        return reply


def _as_reply(value: Reply | str) -> Reply:
    if isinstance(value, Reply):
        return Reply(**{f.name: getattr(value, f.name) for f in fields(Reply)})  # a copy: replies are reusable
    return Reply(content=value)


# -- out of process ---------------------------------------------------------------------------


def serve_in_subprocess(
    responder_spec: str = "score_from_prompt",
    latency_s: float = 0.0,
    script: str | Path | None = None,
    *,
    startup_timeout_s: float = 15.0,
) -> tuple[subprocess.Popen, str]:
    """Run a server in its own process; returns ``(process, base_url)``.

    The child exits when its stdin closes, so it never outlives this process.  Stop it
    with `stop_subprocess`.  `responder_spec` is a name in `RESPONDERS` or
    ``module:function`` (importable in the child); `script` a JSON-lines file of replies.
    """
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--port",
        "0",
        "--latency",
        str(latency_s),
        "--responder",
        responder_spec,
        "--exit-on-stdin-eof",
    ]
    if script is not None:
        cmd += ["--script", str(script)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first_line: list[str] = []
    reader = threading.Thread(target=lambda: first_line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(startup_timeout_s)
    url = first_line[0].strip() if first_line else ""
    if not url.startswith("http://"):
        stop_subprocess(proc)
        raise RuntimeError(f"fake OpenAI server subprocess did not start (exit code {proc.returncode})")
    return proc, url


def stop_subprocess(proc: subprocess.Popen, timeout_s: float = 5.0) -> None:
    """Stop a `serve_in_subprocess` child: close its stdin, then terminate / kill."""
    for step in (lambda: proc.stdin and proc.stdin.close(), proc.terminate, proc.kill):
        try:
            step()
            proc.wait(timeout=timeout_s)
            break
        except (OSError, subprocess.TimeoutExpired):
            continue
    if proc.stdout:
        proc.stdout.close()


def main(argv: list[str] | None = None) -> int:
    """CLI: serve until SIGINT/SIGTERM (or stdin EOF); print the base URL first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: ephemeral)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--responder", default="score_from_prompt", help="name or module:function")
    parser.add_argument("--script", help="JSON-lines file of Reply fields, consumed in order first")
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="stop when stdin closes")
    args = parser.parse_args(argv)
    server = OpenAIServer(_resolve_responder(args.responder), latency_s=args.latency, port=args.port)
    if args.script:
        server.enqueue(*load_script(args.script))
    server.start()
    print(server.base_url, flush=True)
    try:
        if args.exit_on_stdin_eof:
            sys.stdin.read()
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
