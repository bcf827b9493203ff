"""Rubric kinds load on first need: importing the judge loads no kind but the default's path, and every
built-in kind is still found by its name (names imported from the package, the registry, stored verdicts).

Each check runs in a fresh interpreter, since this one has loaded every kind already.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from helpers.openai_server import Reply
from helpers.verdicts import only_entry

BUILT_IN = {
    "checklist": "Checklist",
    "dimensions": "Dimensions",
    "likert": "Likert",
    "pairwise": "Pairwise",
    "pass_fail": "PassFail",
    "per_turn": "PerTurn",
    "questions": "Questions",
    "score": "Score",
    "template": "Template",
    "trajectory": "Trajectory",
    "answer_relevancy": "AnswerRelevancy",
    "context_precision": "ContextPrecision",
    "context_recall": "ContextRecall",
    "faithfulness": "Faithfulness",
    "logic_consistency": "LogicConsistency",
    "reasoning_validity": "ReasoningValidity",
}
NOT_DEFAULT = [
    "checklist",
    "dimensions",
    "likert",
    "logic",
    "pairwise",
    "passfail",
    "per_turn",
    "questions",
    "rag",
    "template",
    "trajectory",
]


def fresh(code: str, *args: str) -> Any:
    """What `code`, run in a new interpreter, prints as JSON on its last line."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_assertions_and_the_judge_loads_no_other_rubric_kind():
    loaded = fresh(
        """
        import json, sys
        import pytest_llmjudge.assertions, pytest_llmjudge.judge
        print(json.dumps(sorted(sys.modules)))
        """
    )
    assert "pytest_llmjudge.rubrics" in loaded
    assert [m for m in NOT_DEFAULT if f"pytest_llmjudge.rubrics.{m}" in loaded] == []
    # nor what only those kinds return from a parse
    assert "pytest_llmjudge.rubrics.parsed" not in loaded


def test_every_built_in_kind_is_in_the_registry_of_a_fresh_interpreter():
    kinds = fresh(
        """
        import json
        from pytest_llmjudge.rubrics.base import rubric_kinds
        print(json.dumps({name: kind.__qualname__ for name, kind in rubric_kinds().items()}))
        """
    )
    assert kinds == BUILT_IN


def test_every_public_name_loads_on_first_use():
    found = fresh(
        """
        import json
        import pytest_llmjudge
        from pytest_llmjudge import rubrics
        from pytest_llmjudge import Likert

        assert Likert(1, 5).describe()["name"] == "likert"
        missing = [n for n in rubrics.__all__ if getattr(rubrics, n, None) is None]
        missing += [n for n in pytest_llmjudge.__all__ if getattr(pytest_llmjudge, n, None) is None]
        unlisted = sorted(set(rubrics.__all__) - set(dir(rubrics)))
        from pytest_llmjudge.rubrics.pairwise import Comparison
        print(json.dumps([missing, unlisted, pytest_llmjudge.Comparison is Comparison]))
        """
    )
    assert found == [[], [], True]


def test_a_kind_of_your_own_registers_and_a_built_in_name_is_taken_before_its_kind_loads():
    found = fresh(
        """
        import json, sys
        from pytest_llmjudge.rubrics import RubricError, register_rubric
        from pytest_llmjudge import Score
        from pytest_llmjudge.rubrics.base import rubric_kinds

        @register_rubric
        class Mine(Score):
            name = "mine"

        class Impostor(Score):
            name = "likert"

        before = "pytest_llmjudge.rubrics.likert" in sys.modules
        try:
            register_rubric(Impostor)
            refused = ""
        except RubricError as exc:
            refused = str(exc)
        kinds = rubric_kinds()
        print(json.dumps([before, refused, kinds["mine"] is Mine, kinds["likert"].__qualname__, len(kinds)]))
        """
    )
    assert found == [False, "rubric name 'likert' is taken by Likert", True, "Likert", len(BUILT_IN) + 1]


def test_a_built_in_kind_imported_anew_takes_its_place_in_the_registry():
    # (pytest's in-process runs drop the modules a run imported; the next run imports them anew)
    found = fresh(
        """
        import json, sys
        from pytest_llmjudge import Likert
        from pytest_llmjudge.rubrics.base import rubric_kinds

        del sys.modules["pytest_llmjudge.rubrics.likert"]
        from pytest_llmjudge import Likert as Again

        print(json.dumps([Again is not Likert, rubric_kinds()["likert"] is Again]))
        """
    )
    assert found == [True, True]


def test_a_registry_imported_anew_still_finds_a_kind_whose_module_stayed_loaded():
    # (the other way round: an in-process run dropped the registry's module but not the kind's, so
    # importing the kind again registers nothing; the default kind must still be found)
    found = fresh(
        """
        import json, sys
        import pytest_llmjudge.rubrics.score
        for name in ("pytest_llmjudge.rubrics", "pytest_llmjudge.rubrics.base"):
            del sys.modules[name]
        from pytest_llmjudge.rubrics.base import kind_named, resolve_rubric

        print(json.dumps([kind_named("score") is not None, resolve_rubric(None).name]))
        """
    )
    assert found == [True, "score"]


KIND_TEST = """
from pytest_llmjudge import assert_judged
from pytest_llmjudge import Likert, PassFail

def test_kind():
    assert_judged("Returns within 30 days.", "States the return window", rubric={rubric})
"""


def kind_reply(request: dict[str, Any]) -> Reply:
    """A reply both kinds read: a Likert score of 4 of 5, and a confident pass."""
    return Reply(content=json.dumps({"reasoning": "states it", "verdict": "pass", "confidence": "high", "score": 4}))


@pytest.mark.parametrize(("name", "rubric"), [("likert", "Likert(1, 5)"), ("pass_fail", "PassFail()")])
def test_a_stored_verdict_of_a_kind_not_loaded_yet_is_rebuilt_and_scored_by_its_name(
    pytester, openai_server, live_args, name, rubric
):
    # Given a verdict file recorded with a kind other than the default,
    openai_server.set_responder(kind_reply)
    pytester.makepyfile(test_kind=KIND_TEST.format(rubric=rubric))
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    entry = only_entry(pytester.path)
    assert entry["rubric"] == name
    # then a fresh interpreter, which has not loaded that kind, rebuilds its rubric by name and scores its
    # reply as replay did,
    found = fresh(
        """
        import json, sys
        from pytest_llmjudge.rubrics.stored import rebuild_stored, score_stored

        entry = json.loads(sys.argv[1])
        before = [m for m in sys.modules if m.endswith((".likert", ".passfail"))]
        rubric, prompt = rebuild_stored(entry)
        print(json.dumps([before, type(rubric).__qualname__, score_stored(entry).score]))
        """,
        json.dumps(entry),
    )
    assert found == [[], BUILT_IN[name], entry["score"]]
    # and a replay in a fresh interpreter passes without calling the judge.
    pytester.runpytest_subprocess(*live_args, "--judge-mode=replay", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert openai_server.request_count == 1
