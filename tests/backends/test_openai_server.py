"""The fake OpenAI server, exercised through the REAL LiteLLM client over real HTTP.

These tests also pin down how LiteLLM (1.106 to 1.110) reports each fault -- the exception class,
where Retry-After ends up, how retries are switched off, and that the API key stays out
of exception messages -- which the plugin's error handling relies on.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import time
from pathlib import Path

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before importing litellm: no price-list download

import litellm
import pytest

from helpers import openai_server as fake

OpenAIServer, Reply, load_script = fake.OpenAIServer, fake.Reply, fake.load_script
reply_json, score_from_prompt = fake.reply_json, fake.score_from_prompt
serve_in_subprocess, stop_subprocess = fake.serve_in_subprocess, fake.stop_subprocess

litellm.suppress_debug_info = True

KEY = "sk-test-not-a-real-key"
NO_RETRIES = {"max_retries": 0, "num_retries": 0}


@pytest.fixture
def server():
    with OpenAIServer() as srv:
        yield srv


def call(srv: OpenAIServer | str, content: str = "Rate this. SCORE=0.8", **kwargs):
    base_url = srv if isinstance(srv, str) else srv.base_url
    params = {**NO_RETRIES, "timeout": 5, **kwargs}
    return litellm.completion(
        model="openai/judge-test",
        api_base=base_url,
        api_key=KEY,
        messages=[{"role": "user", "content": content}],
        **params,
    )


def raises(srv: OpenAIServer, reply: Reply, **kwargs) -> Exception:
    srv.enqueue(reply)
    with pytest.raises(Exception) as info:
        call(srv, **kwargs)
    return info.value


# -- the fake judge -------------------------------------------------------------------------


def _req(text: str) -> dict:
    return {
        "messages": [
            {"role": "user", "content": "old SCORE=0.1"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": text},
        ]
    }


def test_score_from_prompt_directives():
    assert json.loads(score_from_prompt(_req("out: SCORE=0.8"))) == {
        "reasoning": "fake judge: found SCORE=0.8 in the output",
        "score": 0.8,
    }
    assert json.loads(score_from_prompt(_req("nothing here"))) == {
        "reasoning": "fake judge: no SCORE= directive",
        "score": 0.5,
    }
    assert json.loads(score_from_prompt(_req("VERDICT=fail"))) == {
        "reasoning": "fake judge: found VERDICT=fail in the output",
        "score": 0.0,
        "verdict": "fail",
    }
    both = json.loads(score_from_prompt(_req("SCORE=0.7 VERDICT=pass")))
    assert (both["score"], both["verdict"]) == (0.7, "pass")
    assert json.loads(score_from_prompt(_req("Good. SCORE=0.8.")))["score"] == 0.8
    assert json.loads(score_from_prompt(_req("SCORE=1.2.3")))["score"] == 0.5
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": "SCORE=1"}]}]}
    assert json.loads(score_from_prompt(parts))["score"] == 1.0
    assert json.loads(reply_json(0.3, "meh", verdict="fail")) == {"reasoning": "meh", "score": 0.3, "verdict": "fail"}


# -- happy path -----------------------------------------------------------------------------


def test_default_responder_through_litellm(server):
    resp = call(server, "Judge this output: hello. SCORE=0.8")
    assert json.loads(resp.choices[0].message.content) == {
        "reasoning": "fake judge: found SCORE=0.8 in the output",
        "score": 0.8,
    }
    assert resp.choices[0].finish_reason == "stop"
    assert resp.id.startswith("chatcmpl-")
    assert resp.model == "judge-test"
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (20, 10, 30)
    resp = call(server, "no directive")
    assert json.loads(resp.choices[0].message.content)["score"] == 0.5


def test_requests_record_forwarded_bodies(server):
    call(server, "hello", temperature=0.0, max_tokens=50, seed=7)
    assert server.request_count == 1
    body = server.requests[0]
    assert body["model"] == "judge-test"  # the openai/ prefix is stripped
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 50, 7)
    assert not body.get("stream")
    assert server.request_headers[0]["authorization"] == f"Bearer {KEY}"


def test_queue_is_fifo_then_responder(server):
    server.enqueue("first", Reply(content="second", finish_reason="length"), Reply())
    assert server.pending == 3
    r1, r2, r3, r4 = (call(server, "SCORE=0.9") for _ in range(4))
    assert r1.choices[0].message.content == "first"
    assert (r2.choices[0].message.content, r2.choices[0].finish_reason) == ("second", "length")
    assert json.loads(r3.choices[0].message.content)["score"] == 0.9  # Reply() -> responder's content
    assert json.loads(r4.choices[0].message.content)["score"] == 0.9
    assert server.pending == 0


def test_set_responder_and_reset(server):
    server.set_responder(lambda req: Reply(content=reply_json(0.1), prompt_tokens=3, completion_tokens=4))
    resp = call(server)
    assert json.loads(resp.choices[0].message.content)["score"] == 0.1
    assert resp.usage.total_tokens == 7
    server.set_responder(lambda req: "plain")
    assert call(server).choices[0].message.content == "plain"
    server.enqueue("left over")
    server.reset()
    assert (server.request_count, server.pending, server.max_in_flight, server.requests) == (0, 0, 0, [])
    assert json.loads(call(server, "SCORE=0.2").choices[0].message.content)["score"] == 0.2


def test_finish_reason_length_logprobs_and_usage(server):
    logprobs = [
        {
            "token": "4",
            "logprob": -0.1,
            "bytes": None,
            "top_logprobs": [
                {"token": "4", "logprob": -0.1, "bytes": None},
                {"token": "3", "logprob": -2.5, "bytes": None},
            ],
        }
    ]
    server.enqueue(
        Reply(content='{"score": 0.', finish_reason="length", logprobs=logprobs, prompt_tokens=100, completion_tokens=5)
    )
    resp = call(server, logprobs=True, top_logprobs=2)
    choice = resp.choices[0]
    assert choice.finish_reason == "length"
    assert choice.message.content == '{"score": 0.'
    top = choice.logprobs.content[0].top_logprobs
    assert choice.logprobs.content[0].token == "4"
    assert [(t.token, t.logprob) for t in top] == [("4", -0.1), ("3", -2.5)]
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (100, 5, 105)
    assert server.requests[0]["logprobs"] is True and server.requests[0]["top_logprobs"] == 2


def test_streaming(server):
    server.enqueue(Reply(content=reply_json(0.75, "a long enough reasoning to need several chunks")))
    chunks = list(call(server, stream=True, stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert json.loads(text)["score"] == 0.75
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert [c.usage.total_tokens for c in chunks if getattr(c, "usage", None)][-1] == 30
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["stream_options"] == {"include_usage": True}


def test_models_and_unknown_paths(server):
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/v1/models")
    resp = conn.getresponse()
    assert resp.status == 200
    assert [m["id"] for m in json.loads(resp.read())["data"]] == ["judge-test"]
    conn.request("GET", "/v2/nothing")  # same (keep-alive) connection
    resp = conn.getresponse()
    assert resp.status == 404 and "error" in json.loads(resp.read())
    conn.request(
        "POST",
        "/chat/completions",
        body=json.dumps({"model": "m", "messages": []}),
        headers={"Content-Type": "application/json"},
    )
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["object"] == "chat.completion"
    conn.request("POST", "/v1/chat/completions", body=b"not json")
    resp = conn.getresponse()
    assert resp.status == 400 and json.loads(resp.read())["error"]["type"] == "invalid_request_error"
    conn.close()


# -- faults: the exception LiteLLM raises ------------------------------------------------------


def test_rate_limit_with_retry_after(server):
    exc = raises(server, Reply(status=429, retry_after=7, error_message="Rate limit reached for requests"))
    assert isinstance(exc, litellm.RateLimitError)
    assert exc.status_code == 429
    # The real response headers are on `litellm_response_headers` (an httpx.Headers,
    # case-insensitive).  `exc.response` is a synthetic httpx.Response that carries them from
    # 1.110 on and did not before, so the plugin reads both.
    assert exc.litellm_response_headers["retry-after"] == "7"
    assert exc.response.headers.get("retry-after") in (None, "7")
    assert server.request_count == 1


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, litellm.BadRequestError),
        (401, litellm.AuthenticationError),
        (403, litellm.APIError),  # not PermissionDeniedError: LiteLLM's openai branch has no 403 case
        (404, litellm.NotFoundError),
        (408, litellm.Timeout),
        (422, litellm.BadRequestError),  # not UnprocessableEntityError
        (500, litellm.InternalServerError),
        (502, litellm.BadGatewayError),
        (503, litellm.ServiceUnavailableError),
        (504, litellm.Timeout),
    ],
)
def test_status_maps_to_litellm_exception(server, status, expected):
    exc = raises(server, Reply(status=status))
    assert type(exc) is expected, (type(exc), str(exc))
    assert exc.status_code == status
    assert server.request_count == 1  # no retries


def test_invalid_request_error_type_masks_the_status(server):
    # LiteLLM surprise (up to 1.109): an error body whose text contains "invalid_request_error"
    # became a BadRequestError whatever the HTTP status; 1.110 names a 5xx by its status.  Either
    # way status_code stays right, and the plugin decides by it first.
    exc = raises(server, Reply(status=503, error_type="invalid_request_error"))
    assert type(exc) in (litellm.BadRequestError, litellm.ServiceUnavailableError) and exc.status_code == 503
    exc = raises(server, Reply(status=401, error_type="invalid_request_error"))
    assert type(exc) in (litellm.BadRequestError, litellm.AuthenticationError) and exc.status_code == 401
    # ... unless the message is OpenAI's real 401 wording.
    exc = raises(
        server,
        Reply(status=401, error_type="invalid_request_error", error_message="Incorrect API key provided: sk-****-key."),
    )
    assert type(exc) is litellm.AuthenticationError


def test_context_window_exceeded(server):
    exc = raises(
        server,
        Reply(
            status=400,
            error_message=(
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."
            ),
        ),
    )
    assert isinstance(exc, litellm.ContextWindowExceededError)
    assert isinstance(exc, litellm.BadRequestError) and exc.status_code == 400


def test_delay_beyond_timeout(server):
    start = time.monotonic()
    exc = raises(server, Reply(delay_s=5), timeout=0.3)
    assert type(exc) is litellm.Timeout and exc.status_code == 408
    assert time.monotonic() - start < 3
    assert server.request_count == 1


@pytest.mark.parametrize("reply", [Reply(drop=True), Reply(truncate=True)], ids=["drop", "truncate"])
def test_connection_faults_are_internal_server_errors(server, reply):
    # A dropped connection and a short body both surface as openai's APIConnectionError,
    # which LiteLLM maps to InternalServerError(status 500, "Connection error.").
    exc = raises(server, reply)
    assert type(exc) is litellm.InternalServerError
    assert exc.status_code == 500 and "Connection error" in str(exc)
    assert not isinstance(exc, litellm.APIConnectionError)
    assert server.request_count == 1
    assert json.loads(call(server).choices[0].message.content)["score"] == 0.8  # server still fine


def test_malformed_body(server):
    exc = raises(server, Reply(body=b'{"choices": [ not json'))
    assert type(exc) is litellm.InternalServerError and exc.status_code == 500
    assert "Expecting value" in str(exc)
    exc = raises(server, Reply(status=502, body=b"<html>bad gateway</html>"))
    assert type(exc) is litellm.BadGatewayError


# -- retries ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected_requests"),
    [
        ({"max_retries": 0, "num_retries": 0}, 1),
        ({"max_retries": 0}, 1),
        ({"num_retries": 0}, 1),  # LiteLLM copies num_retries into max_retries for the SDK
        ({}, 3),  # the openai SDK's own default: 2 retries on 5xx / 429 / connection errors
    ],
)
def test_retries_are_counted_on_the_server(server, kwargs, expected_requests):
    server.set_responder(lambda req: Reply(status=500))
    with pytest.raises(litellm.InternalServerError):
        litellm.completion(
            model="openai/judge-test",
            api_base=server.base_url,
            api_key=KEY,
            messages=[{"role": "user", "content": "x"}],
            timeout=5,
            **kwargs,
        )
    assert server.request_count == expected_requests


def test_async_no_retries(server):
    server.set_responder(lambda req: Reply(status=503))

    async def go():
        with pytest.raises(litellm.ServiceUnavailableError):
            await litellm.acompletion(
                model="openai/judge-test",
                api_base=server.base_url,
                api_key=KEY,
                messages=[{"role": "user", "content": "x"}],
                timeout=5,
                **NO_RETRIES,
            )

    asyncio.run(go())
    assert server.request_count == 1


# -- keys ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [Reply(status=401), Reply(status=500), Reply(status=429), Reply(drop=True), Reply(body=b"{bad")],
    ids=["401", "500", "429", "drop", "bad"],
)
def test_api_key_not_in_exception_text(server, reply):
    exc = raises(server, reply)
    assert KEY not in str(exc) and KEY not in repr(exc)
    assert KEY not in str(getattr(exc, "message", ""))


def test_server_echoed_key_is_passed_through_verbatim(server):
    # LiteLLM does not add the key, but it copies the server's error message into str(exc):
    # a provider that echoes the key (OpenAI's 401 echoes a masked prefix/suffix) leaks it.
    exc = raises(server, Reply(status=401, error_message="Incorrect API key provided: {api_key}."))
    assert isinstance(exc, litellm.AuthenticationError)
    assert KEY in str(exc)


# -- concurrency, lifecycle, subprocess ------------------------------------------------------


def test_concurrent_async_requests():
    n, latency = 16, 0.2
    with OpenAIServer(latency_s=latency) as srv:

        async def go():
            return await asyncio.gather(
                *(
                    litellm.acompletion(
                        model="openai/judge-test",
                        api_base=srv.base_url,
                        api_key=KEY,
                        messages=[{"role": "user", "content": f"item {i} SCORE=0.{i % 10}"}],
                        timeout=10,
                        **NO_RETRIES,
                    )
                    for i in range(n)
                )
            )

        start = time.monotonic()
        results = asyncio.run(go())
        elapsed = time.monotonic() - start
    assert len(results) == n and srv.request_count == n
    assert [json.loads(r.choices[0].message.content)["score"] for r in results] == [
        float(f"0.{i % 10}") for i in range(n)
    ]
    assert elapsed < n * latency / 2, elapsed
    assert srv.max_in_flight > 1


def test_stop_is_prompt_with_open_and_busy_connections():
    srv = OpenAIServer().start()
    port = srv.port
    idle = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    idle.request("GET", "/v1/models")
    idle.getresponse().read()  # a kept-alive, idle connection
    srv.enqueue(Reply(delay_s=30))
    busy = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    busy.request("POST", "/v1/chat/completions", body=json.dumps({"model": "m", "messages": []}))
    deadline = time.monotonic() + 5
    while srv.request_count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    start = time.monotonic()
    srv.stop()
    assert time.monotonic() - start < 2
    srv.stop()  # idempotent
    idle.close()
    busy.close()


def test_subprocess_server(tmp_path: Path):
    script = tmp_path / "faults.jsonl"
    script.write_text('{"status": 429, "retry_after": 1}\n# a comment\n{"content": "scripted"}\n')
    assert [r.status for r in load_script(script)] == [429, 200]
    proc, base_url = serve_in_subprocess(latency_s=0.05, script=script)
    try:
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with pytest.raises(litellm.RateLimitError) as info:
            call(base_url)
        assert info.value.litellm_response_headers["retry-after"] == "1"
        assert call(base_url).choices[0].message.content == "scripted"
        assert json.loads(call(base_url, "SCORE=0.6").choices[0].message.content)["score"] == 0.6
    finally:
        stop_subprocess(proc)
    assert proc.returncode == 0  # stopped by closing its stdin, not killed
