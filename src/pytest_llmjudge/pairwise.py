"""The old home of `rubrics.pairwise`: its names, re-exported until every importer moves there."""

from __future__ import annotations

from .rubrics.pairwise import Comparison, OrderResult, Pairwise, comparison_from

__all__ = ["Comparison", "OrderResult", "Pairwise", "comparison_from"]
