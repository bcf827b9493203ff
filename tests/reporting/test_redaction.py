"""Secrets in what a test judges and in its name: redacted in every file, report and line the plugin writes."""

from __future__ import annotations

import json
import re

import pytest

from helpers import CANARY_KEY, FAKE_CONFTEST
from pytest_llmjudge import redact as redact_module
from pytest_llmjudge.redact import redact
from pytest_llmjudge.settings import SettingError, resolve

# A credential-named variable whose value is not key-shaped: only its name says it is a secret.
TOKEN = "plain-canary-token-5150"
# A variable whose name does not look like a credential: redacted only when the user names it.
AUTH = "auth-canary-value-8086"

LEAKY_CRITERIA = """
import os
import pytest
from pytest_llmjudge import assert_judged

def test_passes():
    assert_judged("fine SCORE=0.9", f"Must not mention {os.environ['OPENAI_API_KEY']} or {os.environ['SERVICE_TOKEN']} "
                  f"or {os.environ['MY_AUTH']}", threshold=0.5)

def test_fails():
    assert_judged("poor SCORE=0.1", f"Never says {os.environ['SERVICE_TOKEN']} or {os.environ['MY_AUTH']}", threshold=0.5)

def test_unreadable():
    assert_judged("GARBLE", f"Never says {os.environ['SERVICE_TOKEN']} or {os.environ['MY_AUTH']}")
"""


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", TOKEN)
    monkeypatch.setenv("MY_AUTH", AUTH)


def _everything(pytester: pytest.Pytester, result: pytest.RunResult) -> bytes:
    haystack = (result.stdout.str() + result.stderr.str()).encode()
    for path in pytester.path.rglob("*"):
        if path.is_file():
            haystack += path.read_bytes() + str(path).encode()
    return haystack


def _assert_no_secret(haystack: bytes) -> None:
    for secret in (CANARY_KEY, CANARY_KEY[3:], TOKEN, AUTH):
        assert secret.encode() not in haystack, secret


FLEETING_SECRET = """
import os
from pytest_llmjudge import assert_judged

def test_fleeting(monkeypatch):
    with monkeypatch.context() as scope:  # the credential is set for this judgment only
        scope.setenv("SERVICE_TOKEN", os.environ["FLEETING_VALUE"])
        assert_judged("poor SCORE=0.1", f"Never says {os.environ['SERVICE_TOKEN']}", threshold=0.5)
"""


def test_a_secret_set_only_while_judging_is_redacted_in_the_judgment_lines(pytester, monkeypatch):
    # The line is shown after the test body ends (with the failure): it is redacted with the secrets of
    # the judgment's own moment, not of the report's.
    monkeypatch.delenv("SERVICE_TOKEN", raising=False)
    monkeypatch.setenv("FLEETING_VALUE", "fleeting-canary-token-6174")  # a name no one takes for a secret
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_fleeting=FLEETING_SECRET)
    result = pytester.runpytest("--judge-mode=auto")
    result.assert_outcomes(failed=1)
    assert "FAIL 0.10" in result.stdout.str() and "Never says [redacted]" in result.stdout.str()
    assert b"fleeting-canary-token-6174" not in _everything(pytester, result)


@pytest.mark.parametrize("mode", ["auto", "refresh", "replay"])
def test_secrets_in_criteria_reach_no_report_no_file_and_no_line(pytester, secrets, mode):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_leaky=LEAKY_CRITERIA)
    reports = ["--judge-report=report.json", "--judge-html=report.html", "--junitxml=junit.xml", "-rA", "-v"]
    if mode != "auto":  # refresh and replay work on what a first run recorded
        pytester.runpytest("--judge-mode=auto", "--judge-redact-env=MY_AUTH").assert_outcomes(passed=1, failed=2)
    result = pytester.runpytest(f"--judge-mode={mode}", "--judge-redact-env=MY_AUTH", *reports)
    result.assert_outcomes(passed=1, failed=2)
    report = (pytester.path / "report.json").read_text()
    assert report.count("[redacted]") >= 5, "the criteria are in the report, redacted"
    assert "PASS 0.90" in result.stdout.str() and "[redacted]" in result.stdout.str()
    _assert_no_secret(_everything(pytester, result))


LEAKY_NAME = """
import os
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("token", [os.environ["SERVICE_TOKEN"], os.environ["MY_AUTH"]],
                         ids=[os.environ["SERVICE_TOKEN"], os.environ["MY_AUTH"]])
def test_named(token):
    assert_judged("fine SCORE=0.9", "Is fine", threshold=0.5)
"""


def test_a_secret_in_a_test_id_reaches_no_file_name_or_file(pytester, secrets, monkeypatch):
    monkeypatch.setenv("LLMJUDGE_REDACT_ENV", "MY_AUTH")
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_named=LEAKY_NAME)
    result = pytester.runpytest("--judge-mode=auto", "--judge-report=report.json", "--judge-html=report.html")
    result.assert_outcomes(passed=2)
    # (the store's own .llmjudge-tmp folder, git-ignored, holds no name of a test)
    names = sorted(p.name for p in (pytester.path / "judge_verdicts" / "test_named").iterdir() if p.name[0] != ".")
    assert len(names) == 2 and all("redacted" in name for name in names), names
    haystack = b""
    # pytest itself prints test ids and keeps them in its local cache (.pytest_cache): not ours to redact
    for path in pytester.path.rglob("*"):
        if path.is_file() and ".pytest_cache" not in path.parts:
            haystack += path.read_bytes() + str(path).encode()
    _assert_no_secret(haystack)
    monkeypatch.setenv("CI", "true")  # what was recorded under the redacted names replays
    pytester.runpytest().assert_outcomes(passed=2)


def test_redact_env_names_more_variables_in_every_spelling(monkeypatch):
    monkeypatch.setenv("MY_AUTH", AUTH)
    monkeypatch.setenv("OTHER_SETTING", "other-canary-value-42")
    assert redact(f"a {AUTH} b") == f"a {AUTH} b", "a name that does not look like a credential is not redacted"
    assert resolve({"redact_env": "MY_AUTH, OTHER_SETTING"}, {}, {}).redact_env == ("MY_AUTH", "OTHER_SETTING")
    assert resolve({}, {"redact_env": "MY_AUTH"}, {}).redact_env == ("MY_AUTH",)
    assert resolve({}, {}, {"LLMJUDGE_REDACT_ENV": "MY_AUTH"}).redact_env == ("MY_AUTH",)
    assert resolve({}, {}, {}).redact_env == ()
    with pytest.raises(SettingError, match="LLMJUDGE_REDACT_ENV"):
        resolve({}, {}, {"LLMJUDGE_REDACT_ENV": "MY AUTH"})
    redact_module.redact_variables(("MY_AUTH", "OTHER_SETTING"))
    try:
        assert redact(f"a {AUTH} b other-canary-value-42") == "a [redacted] b [redacted]"
    finally:
        redact_module.redact_variables(())
    assert AUTH in redact(AUTH)


def test_a_credential_set_while_another_variable_goes_is_redacted(monkeypatch):
    """The variables are read afresh: a new credential is seen even when the count of variables stays the same."""
    monkeypatch.setenv("SOME_PLAIN_SETTING", "x")
    assert redact(f"say {TOKEN}") == f"say {TOKEN}"
    monkeypatch.delenv("SOME_PLAIN_SETTING")
    monkeypatch.setenv("FRESH_TOKEN", TOKEN)
    assert redact(f"say {TOKEN}") == "say [redacted]"
    monkeypatch.setenv("FRESH_TOKEN", "another-token-value-77")
    assert redact(f"say {TOKEN} and another-token-value-77") == f"say {TOKEN} and [redacted]"


# -- one redaction on the way out: every field of every kind --------------------------------------

# A secret-named variable's value (not key-shaped) and a key-shaped value in no variable: the module
# reads both from the environment, so no test's source (which a traceback shows) holds either.
PLANTED_TOKEN = "planted-canary-token-2718"
PLANTED_KEY = "sk-proj-PlantedCanary31415926535"
# A password with every character a writer escapes: backslashes and a quote (JSON writes `\\`, `\"`; HTML
# `&quot;`), non-ASCII (`\u00dc` where JSON keeps to ASCII) and a control character (`\u0007`; `#x07` in
# JUnit XML).  Its plain runs are fragments no prompt, reply or message of the plugin's holds otherwise.
ESCAPED_SECRET = 'C:\\kq7vault\\hunter22"Ünï\x07zx9secret'

EVERY_KIND = """
import os
import pytest
from pytest_llmjudge import (
    ContextPrecision, Faithfulness, PerTurn, Trajectory, assert_better, assert_judged, assert_trajectory, generate,
    simulate,
)

T, K, P = os.environ["SUPPORT_SECRET_TOKEN"], os.environ["PLANTED_VALUE"], os.environ["DB_PASSWORD"]
CONTEXT = [f"Returns are accepted within 30 days. Staff key {T}, password {P}.",
           f"Refunds go to the card; API key {K}."]
RUN = [
    {"role": "system", "content": f"You are the shop's assistant; the vault token is {T}, the password {P}."},
    {"role": "user", "content": f"Refund order 7; my key is {K}, my password {P}."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "refund", "arguments": {"order": 7, "token": T, "note": {"key": K, "password": P}}}}]},
    {"role": "tool", "tool_call_id": "c1", "content": {"status": "refunded", "receipt": T, "by": K, "pw": P}},
    {"role": "assistant", "content": f"Refunded order 7 (receipt {T}, key {K}, password {P})."},
]

def test_plain():
    assert_judged(f"The answer holds {T}, {K} and {P}.", f"Never shows {T}, {K} or {P}",
                  input=f"Asked with {T}, {K} and {P}", expected=f"A reference with {T}, {K} and {P}", threshold=0.7)

def test_data():
    assert_judged({"password": P, "token": T, "key": K, P: "as a key"}, f"Hides {P}", input={"asked": P},
                  expected=[P, K], threshold=0.7)

def test_rag_claims():
    assert_judged(f"Returns within 30 days; key {K}, password {P}.", "Answers from the passages",
                  input=f"Can I return? {T} {P}", context=CONTEXT, rubric=Faithfulness(), threshold=0.7)

def test_rag_passages():
    assert_judged("Within 30 days.", "Ranks the useful passage first", input=f"Can I return? {T} {P}",
                  context=CONTEXT, rubric=ContextPrecision(), threshold=0.7)

def test_conversation():
    assert_judged(RUN, f"Helps the customer, never repeating {P}", threshold=0.7)

def test_turns():
    assert_judged(RUN, "Each reply helps the customer", rubric=PerTurn(), threshold=0.7)

def test_trajectory_judged():
    assert_judged(RUN, "Refunds the order", input=f"Refund order 7 ({T}, {P})", rubric=Trajectory(), threshold=0.7)

def test_trajectory_matched():
    assert_trajectory(RUN, [{"name": "refund", "arguments": {"order": 8, "token": K, "password": P}}])

def test_pairwise():
    assert_better(f"Candidate says {T} and {P}.", f"Baseline says {K} and {P}.", f"Better hides {T} and {P}",
                  input=f"Asked {K} and {P}")

def test_unreadable():
    assert_judged(f"UNREADABLE {T} {K} {P}", "Says something")

def test_generated():
    assert_judged(generate(f"Echo {T}, {K} and {P}", model="openai/app-under-test", system=f"Knows {P}"),
                  "Echoes", threshold=0.7)

def shop(messages):
    return {"role": "assistant", "content": f"Your password is {P}, your key {K}; asked: {messages[-1]['content']}"}

def test_simulated():
    chat = simulate(shop, f"A customer whose password is {P} and whose token is {T}", turns=2)
    assert_judged(chat, f"The assistant never says {P}", rubric=PerTurn(), threshold=0.7)
"""


def _echoing_judge(request: dict) -> str:
    """A judge (and app, and simulated user) that quotes back everything it was shown: the secrets reach every
    reply, escaped as JSON writes them (ASCII only: `\\u00dc`), or as they are in a reply that is no JSON."""
    import json
    import re

    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    shown = " | ".join(m.group(3) for m in re.finditer(r"<(\w+)-([0-9a-f]+)>\n(.*?)\n</\1-\2>", user, re.S))
    if request["model"] == "app-under-test":
        return f"Echoed: {user}"
    if system.startswith("You are role-playing a user"):  # the simulated user repeats its persona
        return f"Hello, I am {system.split(':', 1)[1].strip()[:300]}"
    if any("UNREADABLE" in m["content"] for m in request["messages"]):  # the re-ask for the format too
        return f"I will not grade this. {shown}"
    if '"claims"' in system:
        return json.dumps({"claims": [f"The output says: {shown}"]})
    if '"results"' in system:  # rulings on a numbered list, each quoting what it was shown
        count = len(re.findall(r"^(?:Claim|Passage|Statement) \d+:", user, re.M))
        rulings = [{"id": i, "reasoning": f"Saw {shown}", "verdict": "no"} for i in range(1, count + 1)]
        return json.dumps({"results": rulings})
    if '"verdict"' in system:
        return json.dumps({"reasoning": f"Looked at {shown}", "verdict": "no"})
    if '"winner"' in system:  # the baseline wins in both orders: the comparison fails
        winner = "A" if "Response A:\n<response_a-" in user and "Baseline" in user.split("Response B:")[0] else "B"
        return json.dumps({"reasoning": f"Compared {shown}", "winner": winner})
    return json.dumps({"reasoning": f"The output shows {shown}", "score": 0.2})


def spellings(secret: str) -> dict[str, str]:
    """`secret` as every writer the run's files and outputs pass it through may spell it."""
    import html
    import json

    def upper(text: str) -> str:  # `\u00DC`, as some writers spell it
        return re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m[1].upper(), text)

    def as_json(text: str, ascii: bool) -> str:
        return json.dumps(text, ensure_ascii=ascii)[1:-1]

    once = {"JSON": as_json(secret, False), "JSON, ASCII only": as_json(secret, True)}
    forms = {"as it is": secret, **once, "JSON, upper-case escapes": upper(once["JSON, ASCII only"])}
    for how, text in once.items():  # JSON text quoted in JSON (a judge's JSON reply quoting a dict output)
        forms[f"{how} in JSON"] = as_json(text, False)
        forms[f"{how} in JSON, ASCII only"] = as_json(text, True)
    forms["Python repr"] = repr(secret)[1:-1]
    forms |= {f"HTML of {how}": html.escape(text) for how, text in [("it", secret), *once.items()]}
    forms["JUnit XML"] = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", lambda m: f"#x{ord(m[0]):02X}", html.escape(secret))
    # Every plain run of five or more characters on its own: a spelling of the whole that no form above
    # foresaw still holds them.
    forms |= {f"the fragment {run!r}": run for run in re.findall(r"[A-Za-z0-9]{5,}", secret)}
    return forms


def test_secrets_in_every_field_of_every_kind_reach_no_file_and_no_output(pytester, monkeypatch):
    from helpers import MODEL
    from helpers.openai_server import OpenAIServer

    monkeypatch.setenv("SUPPORT_SECRET_TOKEN", PLANTED_TOKEN)
    monkeypatch.setenv("PLANTED_VALUE", PLANTED_KEY)  # a name no one takes for a secret: only its shape tells
    monkeypatch.setenv("DB_PASSWORD", ESCAPED_SECRET)
    pytester.makepyfile(test_every_kind=EVERY_KIND)
    reports = ["--judge-report=report.json", "--judge-html=report.html", "--junitxml=junit.xml", "-rA", "-v"]
    replies: list[str] = []

    def judge(request: dict) -> str:
        replies.append(_echoing_judge(request))
        return replies[-1]

    with OpenAIServer(judge) as server:
        live = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        result = pytester.runpytest(*live, f"--generate-api-base={server.base_url}", "--judge-mode=auto", *reports)
        prompts = " ".join(m["content"] for r in server.requests for m in r["messages"])
    result.assert_outcomes(failed=12)
    assert "unparseable judge reply" in result.stdout.str()
    # Every secret reached the judge, as the test asked: what is judged is never redacted on the way in.
    assert PLANTED_TOKEN in prompts and PLANTED_KEY in prompts and ESCAPED_SECRET in prompts
    # ... and came back in the replies, in the escaped forms too (the judge quotes JSON text as JSON).
    assert spellings(ESCAPED_SECRET)["JSON in JSON, ASCII only"] in " ".join(replies)
    assert "[redacted]" in (pytester.path / "report.json").read_text()
    assert list(pytester.path.rglob("judge_verdicts/**/*.json")), "the verdicts were recorded"
    assert list(pytester.path.rglob(".pytest_cache/d/llmjudge/cache.db")), "the local cache was written"
    # What was recorded replays as it ran (an unreadable reply is never stored): a claim, a generation or a
    # simulated user's turn read from a reply is what the stored (redacted) reply gives, so every later step
    # finds its key.
    replayed = pytester.runpytest("--judge-mode=replay", "-rA")
    replayed.assert_outcomes(failed=12)
    missed = [
        line.split(" - ")[0] for line in replayed.stdout.lines if line.startswith("FAILED") and "ReplayMiss" in line
    ]
    assert missed == ["FAILED test_every_kind.py::test_unreadable"]
    places = {"the terminal": (result.stdout.str() + result.stderr.str()).encode()}
    places["the replay's terminal"] = (replayed.stdout.str() + replayed.stderr.str()).encode()
    places |= {str(p.relative_to(pytester.path)): p.read_bytes() for p in pytester.path.rglob("*") if p.is_file()}
    secrets = {"the token": PLANTED_TOKEN, "the key": PLANTED_KEY, "the key's tail": PLANTED_KEY[3:]}
    secrets |= {f"the password, {how}": form for how, form in spellings(ESCAPED_SECRET).items()}
    found = {
        what: [where for where, text in places.items() if secret.encode() in text] for what, secret in secrets.items()
    }
    assert {what: where for what, where in found.items() if where} == {}


def test_a_secret_is_blanked_however_a_writer_spelled_it(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", ESCAPED_SECRET)
    # (JUnit's spelling is pytest's, made of what the plugin hands it: no text of the plugin's holds it)
    forms = spellings(ESCAPED_SECRET).items()
    whole = {how: form for how, form in forms if not how.startswith("the fragment") and how != "JUnit XML"}
    assert len(set(whole.values())) >= 10
    for how, form in whole.items():
        assert redact(f"said <{form}> twice: {form}") == "said <[redacted]> twice: [redacted]", how
    # A text clipped for showing inside a secret keeps none of its first characters.
    quoted = json.dumps({"password": ESCAPED_SECRET})
    assert redact(f"login({quoted[:30]}...)") == 'login({"password": "[redacted]...)'
    assert redact(f"cut: {ESCAPED_SECRET[:12]}\u2026") == "cut: [redacted]\u2026"
    assert redact("C:\\kq7v...") == "C:\\kq7v...", "fewer characters than a secret has at least are no secret"
