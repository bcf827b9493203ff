"""Keep the judge's own HTTP calls out of the user's cassettes (vcrpy, pytest-recording).

vcrpy patches httpx and aiohttp process-wide while a cassette is in use, so without this the
judge's LiteLLM call would be recorded into the test's cassette (with its Authorization header)
and later answered from it: a verdict no judge gave.  The judge's calls run on the plugin's own
background loop thread; a `before_record_request` that returns None for requests made there lets
them through to the judge, neither recorded nor played back.

With pytest-recording this is automatic (the plugin implements its `pytest_recording_configure`
hook).  With plain vcrpy, wrap your own filter::

    import vcr
    from pytest_llmjudge.cassettes import ignore_judge_requests

    my_vcr = vcr.VCR(before_record_request=ignore_judge_requests())          # or
    my_vcr = vcr.VCR(before_record_request=ignore_judge_requests(my_filter))  # keeps your filter
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["JUDGE_THREAD_NAME", "configure_vcr", "ignore_judge_requests", "is_judge_request"]

# The name of the background thread every live judge call runs on (see runtime.JudgeRuntime.loop).
JUDGE_THREAD_NAME = "llmjudge-loop"


def is_judge_request() -> bool:
    """Whether the HTTP request being made now is the judge's own (it runs on the judge's loop thread)."""
    return threading.current_thread().name == JUDGE_THREAD_NAME


def ignore_judge_requests(
    before_record_request: Callable[[Any], Any] | None = None,
) -> Callable[[Any], Any]:
    """A vcrpy `before_record_request` that lets the judge's requests through unrecorded (None),
    and hands every other request to `before_record_request` (or keeps it as it is)."""

    def before_record(request: Any) -> Any:
        if is_judge_request():
            return None
        return before_record_request(request) if before_record_request is not None else request

    return before_record


def configure_vcr(vcr: Any) -> None:
    """Make every cassette of `vcr` (a `vcr.VCR`) ignore the judge's requests, whatever
    `before_record_request` the cassette's own configuration (`vcr_config`, the marker) gives."""
    merged_config: Callable[..., dict[str, Any]] = vcr.get_merged_config

    def get_merged_config(**kwargs: Any) -> dict[str, Any]:
        config = merged_config(**kwargs)
        config["before_record_request"] = ignore_judge_requests(config.get("before_record_request"))
        return config

    vcr.get_merged_config = get_merged_config
