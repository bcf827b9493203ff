"""Budgets that never silently allow everything, token usage on live verdicts, and cost "unknown" in reports.

The local OpenAI-shaped server's model (`openai/judge-test`) has no LiteLLM price, like a local model
or a gateway alias; each of its replies reports 20 prompt and 10 completion tokens.  Asked for
`openai/gpt-4o-mini` instead, the same server is priced by LiteLLM by that name.
"""

from __future__ import annotations

import json

import pytest

from helpers import MODEL
from helpers.backend import call
from helpers.openai_server import Reply, reply_json
from helpers.runtime import own_runtime
from pytest_llmjudge import BudgetExceeded
from pytest_llmjudge.backends.protocol import CallRequest, CallResult
from pytest_llmjudge.settings import Price, SettingError, resolve

PRICED_MODEL = "openai/gpt-4o-mini"  # priced by LiteLLM by name, whatever the api_base
# 100k prompt + 1k completion tokens of gpt-4o-mini: $0.015 + $0.0006 per call.
EXPENSIVE = dict(prompt_tokens=100_000, completion_tokens=1_000)
CALL_COST = 0.0156

JUDGED = """
from pytest_llmjudge import assert_judged

def test_a():
    assert_judged("one SCORE=0.9", "is good", threshold=0.5)

def test_b():
    assert_judged("two SCORE=0.9", "is good", threshold=0.5)

def test_c():
    assert_judged("three SCORE=0.9", "is good", threshold=0.5)
"""


def run(pytester: pytest.Pytester, server_url: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_x=JUDGED)
    return pytester.runpytest(
        f"--judge-model={MODEL}", f"--judge-api-base={server_url}", "--judge-retries=0", "-p", "no:randomly", *args
    )


def test_dollar_budget_on_a_model_without_a_price_fails_clearly_and_refuses_later_calls(pytester, openai_server):
    result = run(pytester, openai_server.base_url, "--judge-mode=live", "--judge-budget=0.0000001")
    result.assert_outcomes(failed=3)
    assert openai_server.request_count == 1, "one call finds out it cannot be priced; no further call is made"
    result.stdout.fnmatch_lines(
        [
            "*BudgetExceeded: --judge-budget=$1e-07 cannot be kept: a call to openai/judge-test could not be priced "
            "(LiteLLM has no price for it). Give the judge's price with --judge-price=input=X,output=Y*"
            "or budget tokens with --judge-budget-tokens=N. No further live judge calls this run.*",
            "*3 over budget, cost unknown*",
            "llmjudge: --judge-budget=$1e-07 could not be kept (a live call could not be counted against it); live "
            "judge calls were refused",
        ]
    )


def test_a_given_price_prices_the_calls_and_the_budget_stops_them(pytester, openai_server):
    # 20 prompt + 10 completion tokens at $1000 per million: $0.03 a call.
    result = run(
        pytester, openai_server.base_url, "--judge-mode=live", "--judge-budget=0.05", "--judge-price=1000", "-rA"
    )
    result.assert_outcomes(passed=2, failed=1)
    assert openai_server.request_count == 2
    result.stdout.fnmatch_lines(
        [
            "*BudgetExceeded: --judge-budget=$0.05 is spent ($0.0600 so far)*",
            "PASS 0.90 >= 0.50  live  openai/judge-test  $0.0300  *",
            "*2 live, 0 below threshold, 0 unparseable, 1 over budget, $0.0600",
        ]
    )


def test_token_budget_counts_prompt_and_completion_tokens(pytester, openai_server):
    result = run(pytester, openai_server.base_url, "--judge-mode=live", "--judge-budget-tokens=50")
    result.assert_outcomes(passed=2, failed=1)
    assert openai_server.request_count == 2
    result.stdout.fnmatch_lines(
        [
            "*BudgetExceeded: --judge-budget-tokens=50 is used up (60 tokens so far): no further live judge calls*",
            "*llmjudge: --judge-budget-tokens=50 reached (60 tokens used); later live judge calls were refused*",
        ]
    )


def test_token_budget_refuses_a_judge_that_reports_no_usage(pytester, openai_server):
    openai_server.set_responder(lambda request: Reply(body=json.dumps(_no_usage(request)).encode()))
    result = run(pytester, openai_server.base_url, "--judge-mode=live", "--judge-budget-tokens=1000")
    result.assert_outcomes(failed=3)
    assert openai_server.request_count == 1
    result.stdout.fnmatch_lines(["*--judge-budget-tokens=1000 cannot be kept: *reported no token usage*"])


def _no_usage(request: dict) -> dict:
    message = {"role": "assistant", "content": reply_json(0.9)}
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def test_tokens_are_recorded_on_live_verdicts_and_summed_in_every_report(pytester, openai_server):
    result = run(
        pytester,
        openai_server.base_url,
        "--judge-mode=auto",
        "--judge-report=report.json",
        "--judge-html=report.html",
        "-rA",
    )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "PASS 0.90 >= 0.50  live  openai/judge-test  cost unknown  *.** s  30 tokens  key *",
            "llmjudge: 3 judged, 0 replayed, 3 live, 0 below threshold, 0 unparseable, cost unknown",
            "llmjudge: 3 live judge calls, 90 tokens (60 prompt + 30 completion), *.** s judging (slowest *)",
        ]
    )
    document = json.loads((pytester.path / "report.json").read_text())
    assert [(j["prompt_tokens"], j["completion_tokens"]) for j in document["judgments"]] == [(20, 10)] * 3
    totals = document["totals"]
    assert (totals["prompt_tokens"], totals["completion_tokens"]) == (60, 30)
    assert totals["cost_usd"] is None, "no call was priced: the cost is unknown, not $0"
    html = (pytester.path / "report.html").read_text()
    assert "90 tokens (60 prompt + 30 completion)" in html and "cost unknown" in html

    # Replayed verdicts made no call: no tokens on their records, a cost of $0.
    result = run(pytester, openai_server.base_url, "--judge-mode=replay", "--judge-report=report.json")
    result.assert_outcomes(passed=3)
    document = json.loads((pytester.path / "report.json").read_text())
    assert all("prompt_tokens" not in j for j in document["judgments"])
    assert document["totals"]["prompt_tokens"] is None and document["totals"]["cost_usd"] == 0.0


@pytest.mark.parametrize(
    ("raw", "price"),
    [
        ("input=0.15,output=0.60", Price(0.15, 0.6)),
        (" Output = 2 , input=1 ", Price(1.0, 2.0)),
        ("0.5", Price(0.5, 0.5)),
    ],
)
def test_price_parses(raw, price):
    assert resolve({"price": raw}, {}, {}).price == price


@pytest.mark.parametrize(
    ("cli", "ini", "env", "message"),
    [
        ({"price": "input=0.15"}, {}, {}, "give both input= and output="),
        ({"price": "cheap"}, {}, {}, "--judge-price takes dollars per million tokens as input=X,output=Y"),
        ({}, {"price": "input=-1,output=1"}, {}, "judge_price takes .* >= 0"),
        ({}, {}, {"LLMJUDGE_PRICE": "in=1,out=2"}, "LLMJUDGE_PRICE takes"),
        ({"budget_tokens": "0"}, {}, {}, "--judge-budget-tokens must be a whole number >= 1"),
    ],
)
def test_bad_budget_settings_name_the_option_and_the_place(cli, ini, env, message):
    with pytest.raises(SettingError, match=message):
        resolve(cli, ini, env)


def test_bad_price_is_a_usage_error(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    result = pytester.runpytest("--judge-price=free")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pytest-llmjudge: --judge-price takes dollars per million tokens*"])


# A test that judges only through a subprocess of its own: three judgments, each in its own line of output.
SUBPROCESS_JUDGES = """
import subprocess, sys
from pathlib import Path

CHILD = '''
from pytest_llmjudge import BudgetExceeded, assert_judged

for text in ("one SCORE=0.9", "two SCORE=0.9", "three SCORE=0.9"):
    try:
        assert_judged(text, "is good", threshold=0.5)
        print("judged")
    except BudgetExceeded as exc:
        print("refused:", exc)
'''

def test_cli_tool():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    Path("child.out").write_text(done.stdout)
"""


@pytest.mark.parametrize(
    ("budget", "refusal"),
    [
        # 20 prompt + 10 completion tokens at $1000 per million: $0.03 a call.
        (("--judge-budget=0.05", "--judge-price=1000"), "refused: --judge-budget=$0.05 is spent ($0.0600 so far)"),
        (("--judge-budget-tokens=50",), "refused: --judge-budget-tokens=50 is used up (60 tokens so far)"),
    ],
    ids=["dollars", "tokens"],
)
def test_a_tests_subprocess_judges_under_the_same_budgets(pytester, openai_server, budget, refusal):
    pytester.makepyfile(test_x=SUBPROCESS_JUDGES)
    result = pytester.runpytest(
        f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=0", "--judge-mode=live",
        *budget,
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    judged, judged_again, refused = (pytester.path / "child.out").read_text().splitlines()
    assert (judged, judged_again) == ("judged", "judged")
    assert refused.startswith(refusal), refused
    assert openai_server.request_count == 2, "the third judgment was refused by the run's budget"


# -- budget --------------------------------------------------------------------------------------


def test_litellm_prices_the_local_server_by_model_name(loop, openai_server):
    openai_server.enqueue(Reply(content=reply_json(0.9), **EXPENSIVE))
    request = CallRequest(
        model=PRICED_MODEL, messages=[{"role": "user", "content": "Output: SCORE=0.9"}], api_base=openai_server.base_url
    )
    result = call(loop, request, retries=3)
    assert result.cost_usd == pytest.approx(CALL_COST)
    assert openai_server.requests[0]["model"] == "gpt-4o-mini"


BUDGETED = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("n", range({n}))
def test_judged(n):
    assert_judged(f"answer {{n}} SCORE=0.9", "is good")
"""


def expensive(request: dict) -> Reply:
    return Reply(content=reply_json(0.9), **EXPENSIVE)


def test_budget_stops_live_calls_once_spent(pytester, openai_server):
    openai_server.set_responder(expensive)
    pytester.makepyfile(test_x=BUDGETED.format(n=5))
    result = pytester.runpytest(
        f"--judge-model={PRICED_MODEL}",
        f"--judge-api-base={openai_server.base_url}",
        "--judge-budget=0.02",
        "-p",
        "no:randomly",
    )
    # $0.0156 spent after the first call (< $0.02): the second goes; after it ($0.0312) none does.
    result.assert_outcomes(passed=2, failed=3)
    assert openai_server.request_count == 2
    result.stdout.fnmatch_lines(
        [
            "*BudgetExceeded: --judge-budget=$0.02 is spent ($0.0312 so far): no further live judge calls this run.*",
            "llmjudge: 5 judged, 0 replayed, 2 live, 0 below threshold, 0 unparseable, 3 over budget, $0.0312*",
            "*llmjudge: --judge-budget=$0.02 reached ($0.0312 spent); later live judge calls were refused*",
        ]
    )
    # Stored verdicts cost nothing: a second run replays the two and judges the rest.
    result = pytester.runpytest(
        f"--judge-model={PRICED_MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-budget=0.04"
    )
    result.assert_outcomes(passed=5)
    assert openai_server.request_count == 5


def test_budget_of_zero_makes_no_live_call(pytester, openai_server):
    pytester.makepyfile(test_x=BUDGETED.format(n=2))
    result = pytester.runpytest(
        f"--judge-model={PRICED_MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-budget=0"
    )
    result.assert_outcomes(failed=2)
    assert openai_server.request_count == 0


@pytest.mark.slow
def test_budget_holds_across_xdist_workers(pytester, openai_server):
    """Per worker, 2 workers would spend 2 calls each (4); shared, the run stops at 2 (3 if both raced)."""
    openai_server.set_responder(expensive)
    openai_server.latency_s = 0.2
    pytester.makepyfile(test_x=BUDGETED.format(n=8))
    result = pytester.runpytest(
        f"--judge-model={PRICED_MODEL}",
        f"--judge-api-base={openai_server.base_url}",
        "--judge-budget=0.02",
        "--judge-cache-dir=cache",
        "-n",
        "2",
        "-p",
        "xdist",
    )
    outcomes = result.parseoutcomes()
    assert 2 <= openai_server.request_count <= 3, result.stdout.str()
    assert outcomes.get("passed") == openai_server.request_count
    assert outcomes.get("failed") == 8 - openai_server.request_count
    result.stdout.fnmatch_lines(["*BudgetExceeded*by all xdist workers*", "*over budget, $0.0*"])
    spend_files = list((pytester.path / "cache.spend").glob("*.json"))
    assert len(spend_files) == 1
    assert json.loads(spend_files[0].read_text())["spent_usd"] == pytest.approx(CALL_COST * openai_server.request_count)


def test_budget_message_and_notice_from_the_runtime(tmp_path):
    runtime = own_runtime(rootdir=tmp_path, budget="0.01")
    runtime.budget.check()
    runtime.budget.spend(0.004)
    runtime.budget.spend(0.007)
    with pytest.raises(BudgetExceeded, match=r"--judge-budget=\$0.01 is spent \(\$0.0110 so far\)"):
        runtime.budget.check()
    assert runtime.notices == [
        "llmjudge: --judge-budget=$0.01 reached ($0.0110 spent); later live judge calls were refused"
    ]
    runtime.close()


def test_the_budget_prices_counts_and_notes_its_refusal_once(tmp_path):
    runtime = own_runtime(rootdir=tmp_path, budget_tokens="100", price="input=1000,output=2000")
    budget = runtime.budget
    priced = budget.count(CallResult("{}", prompt_tokens=60, completion_tokens=50), MODEL)
    assert priced.cost_usd == pytest.approx(0.16) and budget.total_spent() == pytest.approx(0.16)
    assert budget.total_tokens() == 110
    for _ in range(2):
        with pytest.raises(BudgetExceeded, match=r"--judge-budget-tokens=100 is used up \(110 tokens so far\)"):
            budget.check()
    assert runtime.notices == [
        "llmjudge: --judge-budget-tokens=100 reached (110 tokens used); later live judge calls were refused"
    ]
    runtime.close()


# -- calls whose reply held no verdict were still made and paid for ----------------------------------

# test_a's two calls (the first reply, then the re-ask's) hold no verdict; $0.03 a call at this price.
UNREADABLE_FIRST = ("--judge-parse-retries=1", "--judge-price=input=1000,output=1000", "--judge-mode=live")


def test_unparsed_replies_count_in_the_summary_and_the_report(pytester, openai_server):
    openai_server.enqueue(Reply(content="no verdict here"), Reply(content="still no verdict"))
    result = run(pytester, openai_server.base_url, *UNREADABLE_FIRST, "--judge-report=report.json")
    result.assert_outcomes(passed=2, failed=1)
    assert openai_server.request_count == 4
    result.stdout.fnmatch_lines(
        [
            "llmjudge: 3 judged, 0 replayed, 2 live, 0 below threshold, 1 unparseable, $0.1200",
            "llmjudge: 4 live judge calls, 120 tokens (80 prompt + 40 completion), *",
        ]
    )
    document = json.loads((pytester.path / "report.json").read_text())
    unreadable = document["judgments"][0]
    assert unreadable["error_kind"] == "unparseable" and unreadable["live_calls"] == 2
    assert (unreadable["prompt_tokens"], unreadable["completion_tokens"], unreadable["cost_usd"]) == (40, 20, 0.06)
    totals = document["totals"]
    assert (totals["prompt_tokens"], totals["completion_tokens"], totals["cost_usd"]) == (80, 40, 0.12)


@pytest.mark.parametrize("budget", ["--judge-budget-tokens=60", "--judge-budget=0.06"])
def test_unparsed_replies_count_against_the_budgets(pytester, openai_server, budget):
    openai_server.enqueue(Reply(content="no verdict here"), Reply(content="still no verdict"))
    result = run(pytester, openai_server.base_url, *UNREADABLE_FIRST, budget)
    result.assert_outcomes(failed=3)
    assert openai_server.request_count == 2, "the unparsed calls spent the budget: no further call"
    result.stdout.fnmatch_lines(["*BudgetExceeded: --judge-budget*"])
