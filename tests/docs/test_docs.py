"""The documentation's code runs, and its options reference agrees with the option table.

Every ```python block of README.md and docs/ is run, offline:

- a block that defines a test (`def test_`) is a test module: pytest runs it (pytester) in auto
  mode, judged by `DOCS_JUDGE` (a callable judge that gives every rubric full marks, so the snippet's
  own asserts decide; a rubric that asks in steps gets the text's sentences as its claims, each ruled
  yes, one per call or all in one; playing `simulate()`'s user, it asks one question and is done), with
  the local OpenAI-compatible server as the model under test for `generate`; then again with CI=true,
  which must replay every verdict without calling the judge;
- a block whose first line is `# conftest.py` is the conftest of the test blocks after it on its page
  (in place of DOCS_JUDGE);
- any other block is run as a script;
- a block right after `<!-- not run: why -->` is only compiled (it needs what a test cannot have:
  a provider, a file of yours).

The README's first judged test is also recorded and replayed as the README says: through LiteLLM
against a local judge server, then `CI=true pytest` with no judge configured.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer, reply_json

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# A judge for the docs' snippets: full marks in whatever form the rubric's prompt asks for.
DOCS_JUDGE = r"""
import json, re, pytest

def _full_marks(messages):
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = "\n".join(m["content"] for m in messages if m["role"] == "user")
    asked = system.rpartition("Reply with one JSON object")[2]
    if '"claims"' in asked:  # a RAG kind's first step: each sentence of the text is a claim
        text = re.search(r"<(output|expected)-(\w+)>(.*?)</\1-\2>", user, re.S).group(3)
        return {"claims": [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]}
    if '"results"' in asked and '"yes" or "no"' in asked:  # a RAG kind's rulings on a numbered list: all yes
        ids = re.findall(r"^(?:Claim|Statement|Passage) (\d+):$", user, re.M)
        return {"results": [{"id": int(i), "reasoning": "supported", "verdict": "yes"} for i in ids]}
    if '"yes" or "no"' in asked:  # a ruling on one claim, statement or passage
        return {"reasoning": "supported", "verdict": "yes"}
    if '"results"' in asked:  # Checklist: every numbered constraint passes
        ids = re.findall(r"^(\d+)\. ", user.partition("Constraints:")[2], re.M)
        return {"results": [{"id": int(i), "reasoning": "met", "verdict": "PASS"} for i in ids]}
    if '"scores"' in asked:  # Dimensions: every dimension fully met
        names = re.findall(r'"(\w+)": <0\.0-1\.0>', asked)
        return {"reasoning": "all met", "scores": {n: 1.0 for n in names}}
    if '"verdict"' in asked and '"score"' not in asked:
        return {"reasoning": "met", "verdict": "pass", "confidence": "high"}
    if '"winner"' in asked:  # Pairwise: the longer response wins, in either order
        a, b = (re.search(rf"<response_{x}-(\w+)>(.*?)</response_{x}-", user, re.S) for x in "ab")
        longer = "A" if len(a.group(2)) >= len(b.group(2)) else "B"
        return {"reasoning": "the longer response is better", "winner": longer}
    top = re.findall(r"to (\d+(?:\.\d+)?)", asked)
    return {"reasoning": "meets the criteria", "score": float(top[0]) if top else 1.0}

def _user_line(messages):  # simulate(): the judge plays the user: one question, then it is done
    said = sum(1 for m in messages if m["role"] == "assistant")
    return "My shoes are too small: how do I return them?" if said == 0 else "Thanks, that is all. [DONE]"

class DocsJudge:
    name = "docs-judge (full marks, not an LLM)"

    def __call__(self, messages):
        if REPLAY:
            raise AssertionError("a replay called the judge")
        if messages[0]["content"].startswith("You are role-playing a user"):
            return _user_line(messages)
        return json.dumps(_full_marks(messages))

@pytest.fixture(scope="session")
def judge_backend():
    return DocsJudge()
"""


@dataclass
class Snippet:
    page: Path
    line: int
    code: str
    run: bool

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<code>.*?)^(?P=indent)```", re.M | re.S)
NOT_RUN = re.compile(r"<!-- not run: [^>]+-->\s*$")


def snippets(page: Path) -> list[Snippet]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rpartition("\n")[2]
        code = textwrap.dedent(match.group("code"))
        line = text.count("\n", 0, match.start()) + 1
        found.append(Snippet(page, line, code, run=not NOT_RUN.search(before)))
    return found


ALL = [s for page in PAGES for s in snippets(page)]


def test_the_docs_have_python_snippets_to_run():
    assert len([s for s in ALL if s.run and "def test_" in s.code]) >= 10
    assert [s for s in ALL if s.page.name == "README.md" and "def test_" in s.code]


@pytest.mark.parametrize("snippet", ALL, ids=[s.where for s in ALL])
def test_a_snippet_compiles(snippet: Snippet):
    compile(snippet.code, snippet.where, "exec")


def _conftest_for(snippet: Snippet) -> str:
    """The page's latest `# conftest.py` block before this snippet, or the docs judge."""
    own = [s for s in ALL if s.page == snippet.page and s.line < snippet.line and s.code.startswith("# conftest.py")]
    return own[-1].code if own else DOCS_JUDGE


TESTS = [s for s in ALL if s.run and "def test_" in s.code]
SCRIPTS = [s for s in ALL if s.run and "def test_" not in s.code and not s.code.startswith("# conftest.py")]


def _groups() -> dict[str, list[Snippet]]:
    """The test snippets by page and conftest: each group is one pytest run (a module per snippet)."""
    groups: dict[str, list[Snippet]] = {}
    for snippet in TESTS:
        conftest = _conftest_for(snippet)
        name = snippet.page.relative_to(ROOT).as_posix() + ("" if conftest is DOCS_JUDGE else " (own conftest)")
        groups.setdefault(name, []).append(snippet)
    return groups


GROUPS = _groups()


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_the_test_snippets_record_then_replay(group: str, pytester, monkeypatch, openai_server):
    snippets = GROUPS[group]
    conftest = _conftest_for(snippets[0])
    pytester.makeconftest("REPLAY = False\n" + conftest)
    for snippet in snippets:
        pytester.makepyfile(**{f"test_line_{snippet.line}": snippet.code})
    generate_args = [f"--generate-model={MODEL}", f"--generate-api-base={openai_server.base_url}"]

    recorded = pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *generate_args)
    outcomes = recorded.parseoutcomes()
    assert outcomes.get("passed", 0) >= len(snippets), recorded.stdout.str()
    assert not outcomes.get("failed") and not outcomes.get("errors"), recorded.stdout.str()

    pytester.makeconftest("REPLAY = True\n" + conftest)
    calls = openai_server.request_count
    monkeypatch.setenv("CI", "true")
    replayed = pytester.runpytest("-p", "no:cacheprovider", *generate_args)
    assert replayed.parseoutcomes() == outcomes, replayed.stdout.str()
    assert openai_server.request_count == calls  # the generations replayed too


@pytest.mark.parametrize("snippet", SCRIPTS, ids=[s.where for s in SCRIPTS])
def test_a_script_snippet_runs(snippet: Snippet, tmp_path, monkeypatch):
    script = tmp_path / "snippet.py"
    script.write_text(snippet.code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")


# -- the README's own workflow: record live through LiteLLM, commit, replay with CI=true --------


def _readme_first_test() -> Snippet:
    return next(s for s in ALL if s.page.name == "README.md" and "def test_" in s.code)


@pytest.mark.slow
def test_the_readme_first_test_records_against_a_local_judge_and_replays_with_none(pytester, monkeypatch):
    with OpenAIServer(lambda request: reply_json(0.9, "The answer gives the 30-day window, as asked.")) as server:
        pytester.makepyfile(test_support_bot=_readme_first_test().code)
        recorded = pytester.runpytest(f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}")
        recorded.assert_outcomes(passed=1)
        assert server.request_count == 1
    assert list((pytester.path / "judge_verdicts").rglob("*.json"))

    monkeypatch.setenv("CI", "true")  # the server is gone, and no judge is configured
    replayed = pytester.runpytest()
    replayed.assert_outcomes(passed=1)
    assert "1 judged, 1 replayed, 0 live" in replayed.stdout.str()


# -- the options reference is generated from the option table --------------------------------


def test_the_options_page_is_what_the_option_table_generates():
    result = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_options.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_the_options_page_names_every_option_in_all_three_spellings():
    from pytest_llmjudge.settings import OPTIONS

    page = (ROOT / "docs" / "reference" / "options.md").read_text(encoding="utf-8")
    for option in OPTIONS:
        assert f"`{option.cli}" in page and f"`{option.ini}`" in page and f"`{option.env}`" in page, option.name


def test_the_readme_is_short_and_its_quick_start_is_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    quick = text.partition("\n## Quick start\n")[2]
    block = re.search(r"```(?:sh|bash|console)?\n(.*?)```", quick, re.S)
    assert block is not None
    assert block.group(1).strip().splitlines() == [
        "pip install -e '.[examples]' && pytest examples -rx",
        "pip install tox && tox",
    ]


def test_the_readme_counts_the_examples_that_fail_on_purpose():
    """The README says how many examples fail on purpose: as many as pytest collects marked xfail."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.findall(r"\b(\w+) examples? fails? on purpose", text)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "examples", "--collect-only", "-q", "-m", "xfail", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    marked = [line for line in collected.stdout.splitlines() if "::" in line]
    numbers = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    assert len(said) == 1 and marked, (said, collected.stdout)
    assert numbers[said[0].lower()] == len(marked), marked


def test_the_ci_recipes_are_valid_and_replay():
    yaml = pytest.importorskip("yaml")
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    recipes = {
        block.partition("\n")[0]: yaml.safe_load(block)
        for block in re.findall(r"```yaml\n(.*?)```", text, re.S)
        if block.startswith("# .")
    }
    github = recipes["# .github/workflows/tests.yml"]
    gitlab = recipes["# .gitlab-ci.yml"]
    steps = [step.get("run", "") for step in github["jobs"]["test"]["steps"]]
    assert any(run.startswith("pytest --judge-mode=replay") for run in steps)
    assert any(line.startswith("pytest --judge-mode=replay") for line in gitlab["test"]["script"])


def test_the_readme_links_to_files_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text) if "://" not in t]
    assert targets
    assert [t for t in targets if not (ROOT / t).exists()] == []


def test_the_judge_fixtures_public_methods_are_the_ones_the_docs_describe():
    from pytest_llmjudge import Judge

    public = {name for name in vars(Judge) if not name.startswith("_")}
    text = (ROOT / "docs" / "writing-tests.md").read_text(encoding="utf-8")
    section = text.split("## The `judge` fixture", 1)[1].split("\n## ", 1)[0]
    described = set(re.findall(r"judge\.(\w+)\(", section))
    assert public == described


# What a rubric of your own meets (the docs subclass `Rubric` and build `Prompt`s); `Rubric.prompts` is given a `Case`.
RUBRIC_CONTRACT = {"Case", "Outcome", "Prompt", "Reply", "Rubric", "RubricError", "register_rubric"}


def test_the_subpackages_export_only_what_the_docs_import_from_them():
    """The top-level package is the API; a subpackage is public only for the names the docs import from it."""
    import importlib

    named: dict[str, set[str]] = {"rubrics": set(RUBRIC_CONTRACT)}
    for page in PAGES:
        for package, names in re.findall(r"from pytest_llmjudge\.(\w+) import ([\w, ]+)", page.read_text("utf-8")):
            named.setdefault(package, set()).update(n.strip() for n in names.split(","))
    beyond = {}
    for init in sorted((ROOT / "src" / "pytest_llmjudge").glob("*/__init__.py")):
        module = importlib.import_module(f"pytest_llmjudge.{init.parent.name}")
        public = {name for name in vars(module) if not name.startswith("_") and name != "annotations"}
        public = {name for name in public if not isinstance(getattr(module, name), type(module))}
        beyond[init.parent.name] = sorted(public - named.get(init.parent.name, set()))
    assert {package: names for package, names in beyond.items() if names} == {}
