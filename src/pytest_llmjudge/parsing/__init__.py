"""The tolerant reply parser: pure, no I/O.

`parse_verdict` reads a judge's free-form reply into a score on [0, 1], a pass/fail verdict and the
reasoning (the docs' "How replies are parsed" states the policy).  `funnel` runs the stages; each
other module holds one mechanism they share.
"""

from __future__ import annotations

# What a rubric of your own reads its replies with (the docs import these from here).
from .funnel import parse_json_object, parse_verdict, reasoning_from

__all__ = ["parse_json_object", "parse_verdict", "reasoning_from"]
