"""A judge runtime of a test's own, apart from the running pytest session's.

Judgments made on it stay out of the session's summary and its verdict files, and nothing is
stored (no test's verdict file is bound).  Its settings are resolved as a command outside pytest
resolves them: `options` as `--judge-*` values, `environ` as the LLMJUDGE_* variables (the
process's own environment is not read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_llmjudge import Judge
from pytest_llmjudge.runtime import JudgeRuntime
from pytest_llmjudge.settings import resolve

__all__ = ["own_judges", "own_runtime"]


def own_runtime(*, rootdir: Path = Path("."), environ: Mapping[str, str] | None = None, **options: Any) -> JudgeRuntime:
    """A runtime with these `--judge-*` `options` and LLMJUDGE_* `environ`; the caller closes it."""
    return JudgeRuntime(resolve(options, {}, dict(environ or {})), rootdir=rootdir)


@contextmanager
def own_judges(
    *, rootdir: Path = Path("."), environ: Mapping[str, str] | None = None, **options: Any
) -> Iterator[Callable[..., Judge]]:
    """Judges sharing one `own_runtime`, closed when the block ends.

    Yields `judge(backend=None, **overrides)`, which makes a `Judge` on that runtime.
    """
    runtime = own_runtime(rootdir=rootdir, environ=environ, **options)

    def judge(backend: Any = None, **overrides: Any) -> Judge:
        return Judge(runtime=runtime, backend=backend, **overrides)

    try:
        yield judge
    finally:
        runtime.close()
