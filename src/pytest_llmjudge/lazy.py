"""Names a package exports without importing their modules until first use (PEP 562).

pytest imports this package at every start-up, and a replay needs few of the modules behind the
public names; each package maps its names to their modules and gets its `__getattr__` and
`__dir__` here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, module_of: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` for names that live in other modules.

    `module_of` maps each name to its module, relative to `package` (".ledger", "..keys"; a bare
    "ledger" means ".ledger").  A loaded name is not kept in `namespace` (the package's globals):
    each lookup asks its module, so the name follows the module if that is ever imported anew (an
    in-process pytest run drops the modules it imported first, and a kept name would be its class).
    """

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module if module.startswith(".") else f".{module}", package), name)

    def __dir__() -> list[str]:
        return sorted({*namespace, *module_of})

    return __getattr__, __dir__
