"""LiteLLM, imported for the backend and the request planner alike.

It lives below both, so neither imports the other for it.  Importing this module does not import
LiteLLM; calling `import_litellm` does, and only a live call (or the doctor) calls it.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from typing import Any

_IMPORTED_IN: list[float] = []  # seconds this process's first import took, once it happened here


def import_seconds() -> float | None:
    """How long importing LiteLLM took in this process (None: not imported here, or before the plugin asked)."""
    return _IMPORTED_IN[0] if _IMPORTED_IN else None


def import_litellm() -> Any:
    """Import LiteLLM without its import-time network fetch, banners or tokenizer downloads."""
    # Unless set before the first import, litellm fetches a price list from the internet at import;
    # and on its first Anthropic-style call, a list of beta headers (5 s timeout) unless told to use
    # the copy it ships.  Set only where the user has not chosen.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")
    started = time.monotonic() if "litellm" not in sys.modules else None
    litellm: Any = importlib.import_module("litellm")
    if started is not None and not _IMPORTED_IN:
        _IMPORTED_IN.append(time.monotonic() - started)
    litellm.suppress_debug_info = True
    litellm.disable_hf_tokenizer_download = True
    return litellm
