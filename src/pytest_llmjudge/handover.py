"""The hand-over to a test's subprocess: LLMJUDGE_TEST, written here by the test's session.

While a test runs, LLMJUDGE_TEST describes it (node id, verdict file, the settings a child needs, the
marker's arguments), so a subprocess the test starts judges as the test would and lists the verdict
keys it used in a file the session reads back (prune keeps them).  No key or secret is in it.  The
child reads it in `runtime.from_test_environment`, where its runtime is made.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from .options import INHERITED  # what a test's subprocess judges with: never a key, never a report path
from .runtime import JudgeRuntime, TestContext


def test_environment(runtime: JudgeRuntime, context: TestContext, used_file: str | os.PathLike[str]) -> str | None:
    """The value of LLMJUDGE_TEST while `context`'s test runs (None when the test has no verdict file).

    JSON: the node id, the verdict file, the settings a child process needs (mode, model, api base
    without credentials, sampling), the test's JSON-safe marker arguments, and a file where the child
    lists the verdict keys it used (so prune keeps them).  No key or secret is in it.
    """
    if context.module_path is None:
        return None
    import json
    from json.encoder import encode_basestring_ascii as quoted

    marker = {}
    for name, value in context.marker.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        marker[name] = value
    # The session's part is the same for every test: encoded once, and joined to the test's part.  An
    # unconfigured session resolves its settings late (at its first judgment): its part is encoded again then.
    resolved = runtime.settings_resolved
    kept = runtime.child_settings
    if kept is None or kept[0] is not resolved:
        kept = runtime.child_settings = (resolved, json.dumps(_child_settings(runtime)))
    part = kept[1]
    # Every test of the session pays for this (it cannot know whether the test starts a child that
    # judges): the test's few strings are quoted directly rather than through json.dumps.
    # A repeated test's run: the child's judgments and generations are keyed as the test's are.
    run = f'"run": {context.run}, "runs": {context.runs}, ' if context.runs > 1 else ""
    return (
        f'{{"nodeid": {quoted(context.nodeid)}, "test_name": {quoted(context.test_name)}, '
        f'"module": {quoted(str(context.module_path))}, "marker": {json.dumps(marker) if marker else "{}"}, '
        f'"used": {quoted(os.fspath(used_file))}, {run}{part[1:]}'
    )


def _child_settings(runtime: JudgeRuntime) -> dict[str, Any]:
    """LLMJUDGE_TEST's part that is the session's, not the test's: where the store is, and the settings."""
    part: dict[str, Any] = {
        "store_root": str(runtime.store_root) if runtime.store_root is not None else None,
        "rootdir": str(runtime.rootdir),
    }
    if runtime.settings_resolved:  # else nothing was configured: the child resolves the same from its environment
        settings = runtime.settings
        values = {name: getattr(settings, name) for name in INHERITED}
        values["api_base"] = _without_credentials(values["api_base"])
        values["generate_api_base"] = _without_credentials(values["generate_api_base"])
        part["settings"] = values
        part["sources"] = {name: settings.sources.get(name, "default") for name in INHERITED}
    return part


def _without_credentials(url: str | None) -> str | None:
    if not url or "@" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host))


def read_used_file(path: str) -> set[str]:
    """The verdict keys a test's subprocesses used (one per line), the file removed."""
    # Asked first without raising: most tests start no child that judges, and a FileNotFoundError
    # for each of them cost more than the rest of the plugin's per-test bookkeeping.
    if not os.access(path, os.F_OK):
        return set()
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return set()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return {line.strip() for line in text.splitlines() if line.strip()}
