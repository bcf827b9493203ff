"""The old home of `case`: its names, re-exported until every importer moves to `pytest_llmjudge.case`."""

from __future__ import annotations

from .case import DATA_RULES, Case, data_rules, fence, render_case
from .outputs import judged_text as as_text

__all__ = ["DATA_RULES", "Case", "as_text", "data_rules", "fence", "render_case"]
