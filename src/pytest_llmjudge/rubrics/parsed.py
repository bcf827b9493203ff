"""`RubricParse`: a parsed reply plus what a structured rubric read from it.

In a module of its own: the default kind never makes one, and a run that judges only with it need
not define it (a frozen dataclass takes a millisecond or two to define, at every start-up that judges).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..parsing.funnel import ParsedVerdict


@dataclass(frozen=True)
class RubricParse(ParsedVerdict):
    """A parsed reply plus what a structured rubric read from it (dimensions, constraints, ...)."""

    details: Mapping[str, Any] = field(default_factory=dict)
