"""The tolerant reply parser: pure, no I/O.

`parse_verdict` reads a judge's free-form reply into a score on [0, 1], a pass/fail verdict and the
reasoning (the docs' "How replies are parsed" states the policy); `parse_preference` reads which of two
responses a pairwise judge prefers.  `funnel` runs the stages; each other module holds one mechanism they share.
"""

from __future__ import annotations

import typing

# What a rubric of your own reads its replies with (the docs import these from here).
from .funnel import parse_json_object, parse_verdict, reasoning_from

__all__ = ["parse_json_object", "parse_preference", "parse_verdict", "reasoning_from"]


if typing.TYPE_CHECKING:
    from .preference import parse_preference


def __getattr__(name: str) -> typing.Any:
    # The pairwise reader loads on first use: a suite that never compares does not define it.
    if name == "parse_preference":
        from .preference import parse_preference

        return parse_preference
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
