"""Rubric kinds: how a judgment is asked for, and how the judge's replies become one outcome.

`base` holds the contract (the `Rubric` ABC, `Prompt`, `Reply`, `Outcome`) and the registry of
kinds by name; each kind is one module: `Score` (the default, 0-1), `PassFail` (verdict and
confidence -> table), `Likert` (integer scale, optionally weighted by token log-probabilities),
`Dimensions` (weighted per-dimension scores), `Checklist` (PASS/FAIL per constraint), `Questions`
(one call per question), `Template` (your own prompt), `Pairwise` (both orders of a comparison),
`PerTurn` (one call per assistant turn of a conversation) and `Trajectory` (an agent's tool calls);
`rag` holds the kinds that judge with the retrieved context (`Faithfulness` and its kin, some in two
steps: claims, then a ruling on each), `logic` the consistency and reasoning audits.  A kind's
module loads on first need (imported, or its name looked up in the registry).  `parsed` holds
`RubricParse`, what a structured kind's parse returns.  `stored` decides a stored reply's score,
the same way for replay and for `llmjudge reparse`.  `questions_file` reads and writes the
questions file that `Questions.from_file` loads and `llmjudge questions` writes.
"""

from __future__ import annotations

# The contract a kind of your own meets (the docs import it from here); the kinds themselves are
# public from `pytest_llmjudge`.
from ..case import Case
from .base import Outcome, Prompt, Reply, Rubric, RubricError, register_rubric

__all__ = ["Case", "Outcome", "Prompt", "Reply", "Rubric", "RubricError", "register_rubric"]
