"""Judging outside pytest (a script, a notebook): one runtime for the whole process."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import MODEL

SCRIPT = """
import threading
from pytest_llmjudge import Judge, assert_judged, generate
from pytest_llmjudge.cassettes import JUDGE_THREAD_NAME

assert_judged("Returns within 30 days. SCORE=0.9", "Says the return window")
assert_judged("Returns within 30 days. SCORE=0.8", "Says the return window")
Judge().score("Returns within 30 days. SCORE=0.7", "Says the return window")
generate("Can I return shoes?")
print(sum(t.name == JUDGE_THREAD_NAME for t in threading.enumerate()))
"""


def test_judgments_and_generations_outside_pytest_share_one_runtime(openai_server, tmp_path):
    # Given a script, run outside pytest, that judges three times and generates once, live,
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LLMJUDGE_"))}
    env.update(
        LLMJUDGE_MODE="live",
        LLMJUDGE_MODEL=MODEL,
        LLMJUDGE_API_BASE=openai_server.base_url,
        LLMJUDGE_RETRIES="0",
        LLMJUDGE_GENERATE_MODEL=MODEL,
        LLMJUDGE_GENERATE_API_BASE=openai_server.base_url,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # every call was made, all on one background loop: one runtime served them all.
    assert openai_server.request_count == 4
    assert done.stdout.strip() == "1"
