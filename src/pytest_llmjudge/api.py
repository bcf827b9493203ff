"""The assertions' old home: they live in assertions.py now (this re-export goes at the merge)."""

from __future__ import annotations

from .assertions import assert_better, assert_judged, assert_judged_async

__all__ = ["assert_better", "assert_judged", "assert_judged_async"]
