"""Moved to `pytest_llmjudge.backends.loop`; this name stays until every importer uses the new one."""

from __future__ import annotations

from .backends.loop import LoopThread

__all__ = ["LoopThread"]
