"""Which runtime a judgment belongs to: the innermost pytest session's, a test's subprocess's, or the standalone one.

A stack rather than one global keeps nested pytest runs (pytester) from clobbering the outer one.
This module is loaded at every pytest start-up: it imports nothing heavy.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from .runtime import JudgeRuntime

_ACTIVE: list[JudgeRuntime] = []
_CHILD: list[JudgeRuntime] = []  # a test's subprocess: the runtime LLMJUDGE_TEST describes, made once
_STANDALONE: list[JudgeRuntime] = []
_STANDALONE_LOCK = threading.Lock()
_REDACT_MODULE = __name__.rpartition(".")[0] + ".redact"


def activate(runtime: JudgeRuntime) -> None:
    """Make `runtime` the one `assert_judged` finds, until `deactivate`."""
    _ACTIVE.append(runtime)
    # A session configured late resolves its settings on first need: redact what they name then.
    runtime.on_settings = lambda: _redact_named_variables() if _ACTIVE and _ACTIVE[-1] is runtime else None
    _redact_named_variables()


def deactivate(runtime: JudgeRuntime) -> None:
    """Forget `runtime`: the session that made it has ended."""
    if runtime in _ACTIVE:
        _ACTIVE.remove(runtime)
        _redact_named_variables()


def _redact_named_variables() -> None:
    """Redact the variables the innermost session names (--judge-redact-env), and only those."""
    innermost = _ACTIVE[-1] if _ACTIVE else None
    resolved = innermost is not None and innermost.settings_resolved
    names = innermost.settings.redact_env if innermost is not None and resolved else ()
    # Nothing named and nothing redacted yet: `redact` starts with no names when it loads, so a
    # session that never judges need not load it.
    if names or _REDACT_MODULE in sys.modules:
        from .redact import redact_variables

        redact_variables(names)


def active() -> JudgeRuntime | None:
    """The innermost running session's runtime; in a test's subprocess (LLMJUDGE_TEST set), the
    test's; else None (outside pytest)."""
    if _ACTIVE:
        return _ACTIVE[-1]
    if not _CHILD:
        from .handover import TEST_ENV, from_test_environment  # a test's subprocess only

        value = os.environ.get(TEST_ENV)
        runtime = from_test_environment(value) if value else None
        if runtime is None:
            return None
        _CHILD.append(runtime)
    return _CHILD[0]


def standalone_runtime() -> JudgeRuntime:
    """Outside pytest: the process's one runtime (settings from the environment, nothing stored),
    made on first need.  Every Judge, assertion and generation there shares it: one resolution of
    the settings, one background loop, one budget."""
    with _STANDALONE_LOCK:
        if not _STANDALONE:
            from .redact import redact_variables
            from .settings import resolve

            runtime = JudgeRuntime(resolve({}, {}, os.environ), rootdir=Path.cwd())
            redact_variables(runtime.settings.redact_env)
            _STANDALONE.append(runtime)
        return _STANDALONE[0]
