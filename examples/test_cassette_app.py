"""The app's own LLM call in a cassette, the judge's verdict in the verdict file: both replay offline.

pytest-recording records the app's HTTP exchange into `cassettes/test_cassette_app/test_refund_timing.yaml`
(the judge's calls never go into a cassette); the demo judge's verdict is in `judge_verdicts/`.
The cassette configuration (`vcr_config` in conftest.py) matches on the request body, so a changed
prompt misses rather than replaying a stale reply.  Record with `--record-mode=once`.
"""

import pytest
from faq_app import answer

from pytest_llmjudge import assert_judged

NEEDS = "the cassette example needs pytest-recording: pip install -e '.[examples]'"
pytest.importorskip("pytest_recording", reason=NEEDS)


@pytest.mark.vcr
def test_refund_timing():
    question = "How long does a refund take?"
    assert_judged(answer(question), "Says refunds arrive within 5 business days", input=question, threshold=0.7)
