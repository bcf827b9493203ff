"""pytest-llmjudge: judged assertions on the output of LLM applications, in plain pytest.

    from pytest_llmjudge import assert_judged

    def test_refund_answer(bot):
        assert_judged(bot.ask("Can I return shoes?"), "Says returns are accepted within 30 days")
"""

from .api import assert_judged, assert_judged_async
from .errors import (
    BackendError,
    BudgetExceeded,
    JudgeError,
    JudgmentFailed,
    ReplayMiss,
    StoreError,
    VerdictParseError,
)
from .judge import Judge, Sample, Verdict
from .parsing import ParsedVerdict, parse_verdict

__all__ = [
    "BackendError",
    "BudgetExceeded",
    "Judge",
    "JudgeError",
    "JudgmentFailed",
    "ParsedVerdict",
    "ReplayMiss",
    "Sample",
    "StoreError",
    "Verdict",
    "VerdictParseError",
    "assert_judged",
    "assert_judged_async",
    "parse_verdict",
]
