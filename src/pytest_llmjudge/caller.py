"""Warnings that point at the user's line: the first frame outside this package.

How deep the pipeline sits below the user's call varies (`assert_judged`, `judge.score`, its async
twin, a Judge of one's own), so a fixed `stacklevel` points into the plugin on some paths.
"""

from __future__ import annotations

import sys
import warnings

_PACKAGE = __name__.rpartition(".")[0]


def warn_at_caller(warning: Warning) -> None:
    """Issue `warning` at the nearest frame outside the plugin (the test's line), as `warnings.warn` would there."""
    frame = sys._getframe(1)
    level = 2  # 1 is this function's frame, 2 its caller's
    while frame.f_back is not None and _in_package(frame.f_globals.get("__name__")):
        frame = frame.f_back
        level += 1
    warnings.warn(warning, stacklevel=level)


def _in_package(module: object) -> bool:
    return isinstance(module, str) and (module == _PACKAGE or module.startswith(_PACKAGE + "."))
