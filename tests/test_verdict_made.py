"""`verdict.made`: a Sample or Verdict from every field at once is the instance its constructor makes."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_llmjudge import Verdict
from pytest_llmjudge.verdict import Sample, made

SAMPLE = {
    "model": "openai/judge",
    "sample": 0,
    "score": 0.9,
    "reasoning": "meets it",
    "verdict": None,
    "confidence": None,
    "source": "replayed",
    "keys": ("k" * 64,),
    "details": {"x": 1},
}


def verdict_fields(sample: Sample) -> dict[str, object]:
    return {
        "score": 0.9,
        "passed": True,
        "threshold": 0.7,
        "reasoning": "meets it",
        "verdict": "pass",
        "confidence": "high",
        "model": "openai/judge",
        "source": "replayed",
        "key": "k" * 64,
        "cost_usd": 0.0,
        "latency_s": None,
        "raw": '{"score": 0.9}',
        "criteria": "Says it",
        "rubric": "score",
        "keys": ("k" * 64,),
        "samples": (sample,),
        "agreement": None,
        "spread": None,
        "undecided": False,
        "details": {},
        "notes": (),
        "structured": "json_object",
        "prompt_tokens": None,
        "completion_tokens": None,
    }


def test_made_is_the_constructors_instance():
    sample = made(Sample, dict(SAMPLE))
    assert sample == Sample(**SAMPLE) and repr(sample) == repr(Sample(**SAMPLE))
    fields = verdict_fields(sample)
    verdict = made(Verdict, dict(fields))
    built = Verdict(**fields)
    assert verdict == built and repr(verdict) == repr(built)
    assert dataclasses.asdict(verdict) == dataclasses.asdict(built)
    # Still frozen, and still a dataclass to replace fields of.
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.score = 0.1  # type: ignore[misc]
    assert dataclasses.replace(verdict, score=0.5).score == 0.5


@pytest.mark.parametrize("change", ["missing", "unknown"])
def test_made_refuses_a_missing_or_unknown_field(change):
    fields = verdict_fields(made(Sample, dict(SAMPLE)))
    if change == "missing":
        del fields["agreement"]
    else:
        fields["agreeement"] = None
    with pytest.raises(TypeError, match="agreee?ment"):
        made(Verdict, fields)
