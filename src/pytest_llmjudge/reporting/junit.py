"""The JUnit XML view of a judgment: `<property>` pairs on the test case (xdist carries them to the controller)."""

from __future__ import annotations

from ..redact import redactor
from ..verdict import JudgmentRecord

PROPERTY_FIELDS = ("score", "threshold", "passed", "model", "source", "reasoning", "cost_usd", "latency_s")


def user_properties(record: JudgmentRecord) -> list[tuple[str, str]]:
    """JUnit `<property>` pairs for one judgment, for `item.user_properties`, redacted on their way out."""
    key = record.get("key", "")
    if "error" in record:
        props = [("llmjudge.error", f"{record['error']}: {record.get('message', '')}")]
    else:
        fields: dict[str, object] = dict(record)
        props = [(f"llmjudge.{name}", _text(fields.get(name))) for name in PROPERTY_FIELDS]
    props.append(("llmjudge.key", key))
    if "run" in record:  # a repeated test's run (absent: run 0, or not repeated)
        props.append(("llmjudge.run", str(record["run"])))
    if "group" in record:  # the gated group its test is a case of
        props.append(("llmjudge.group", record["group"]))
    clean = redactor()
    return [(name, clean(value)) for name, value in props]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value)
