"""Replay with no model under test configured: the model that recorded a generation is found by its keys.
(A judgment's judge, and how it judged, are found the same way: see test_recorded_judge.py.)"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from pytest_llmjudge.errors import JudgeError
from pytest_llmjudge.pipeline.generations import SEVERAL_MODELS
from pytest_llmjudge.pipeline.recorded import recorded_model


class Call(NamedTuple):
    key: str


def calls_for(model: str) -> list[Call]:
    return [Call(f"{model}-key")]


def test_the_model_whose_key_is_stored_is_the_one_that_recorded_it():
    entries = {"b-key": {"model": "b"}, "x": {"model": "a"}, "y": {"model": None}}
    # with the calls keyed in finding it: the replay uses them
    assert recorded_model(entries, calls_for, several=SEVERAL_MODELS) == ("b", [Call("b-key")])
    assert recorded_model({"x": {"model": "a"}}, calls_for, several=SEVERAL_MODELS) is None
    # elsewhere in the store: the index says which keys it holds
    found = recorded_model({"x": {"model": "a"}}, calls_for, {"a-key"}.__contains__, several=SEVERAL_MODELS)
    assert found == ("a", [Call("a-key")])


@pytest.mark.parametrize(
    ("several", "said"),
    [
        (SEVERAL_MODELS, "this generation was recorded with several models under test (a, b) and none is configured"),
    ],
)
def test_several_recording_models_are_an_error_naming_them(several, said):
    entries = {"b-key": {"model": "b"}, "a-key": {"model": "a"}}
    with pytest.raises(JudgeError) as info:
        recorded_model(entries, calls_for, several=several)
    assert str(info.value).startswith(said)
