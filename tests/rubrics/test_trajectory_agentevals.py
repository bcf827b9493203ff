"""agentevals' own trajectory-match cases, written as someone porting from agentevals writes them: its mode
names passed straight through (`order=trajectory_match_mode`, `args=tool_args_match_mode`, its overrides
as `args_by_tool`), each asserting the score agentevals' test asserts.  (tests/against_agentevals runs agentevals
itself on the same cases.)"""

from __future__ import annotations

import copy

import pytest

from helpers.agentevals_cases import CASES
from pytest_llmjudge import TrajectoryMismatch, assert_trajectory


def matches(case) -> bool:
    """Whether assert_trajectory passes on `case`, given agentevals' settings as they are."""
    try:
        assert_trajectory(
            case.outputs,
            case.reference_outputs,
            order=case.trajectory_match_mode,
            args=case.tool_args_match_mode,
            args_by_tool=case.tool_args_match_overrides,
        )
    except TrajectoryMismatch:
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_agentevals_case_gives_agentevals_score(case):
    before = copy.deepcopy((case.outputs, case.reference_outputs))
    assert matches(case) is case.score
    assert (case.outputs, case.reference_outputs) == before  # read, never changed (agentevals adds fields)


def test_the_cases_are_agentevals_whole_suite():
    # 9 tests x 4 modes, 2 tests asserting twice x 4 modes, 3 tests x 4 argument modes.
    assert len(CASES) == 64
    assert len({c.name for c in CASES}) == 64
    assert {c.score for c in CASES} == {True, False}
