"""What the user reads after the run: one sentence, and the JUnit properties of each judged test."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

PROPERTY_FIELDS = ("score", "threshold", "passed", "model", "source", "reasoning")


def summary_sentence(records: Iterable[Mapping[str, Any]]) -> str | None:
    """`llmjudge: 14 judged, 11 replayed, 3 live, 1 failed, 0 unparseable, $0.0031`, or None if nothing was judged."""
    records = list(records)
    if not records:
        return None
    verdicts = [r for r in records if "error" not in r]
    by_source = {s: sum(r.get("source") == s for r in verdicts) for s in ("replayed", "cached", "live")}
    errors = [r["error"] for r in records if "error" in r]
    parts = [f"{len(records)} judged", f"{by_source['replayed']} replayed"]
    if by_source["cached"]:
        parts.append(f"{by_source['cached']} cached")
    parts.append(f"{by_source['live']} live")
    parts.append(f"{sum(not r.get('passed') for r in verdicts)} failed")
    parts.append(f"{errors.count('VerdictParseError')} unparseable")
    for name, label in (("ReplayMiss", "missing"), ("BackendError", "judge errors"), ("BudgetExceeded", "over budget")):
        if name in errors:
            parts.append(f"{errors.count(name)} {label}")
    others = len(errors) - sum(errors.count(n) for n in ("VerdictParseError", "ReplayMiss", "BackendError", "BudgetExceeded"))
    if others:
        parts.append(f"{others} other errors")
    cost = sum(r.get("cost_usd") or 0.0 for r in verdicts)
    parts.append(f"${cost:.4f}")
    return "llmjudge: " + ", ".join(parts)


def user_properties(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """JUnit `<property>` pairs for one judgment (xdist carries them to the controller)."""
    if "error" in record:
        return [("llmjudge.error", f"{record['error']}: {record.get('message', '')}"), ("llmjudge.key", record.get("key", ""))]
    props = [(f"llmjudge.{name}", _text(record.get(name))) for name in PROPERTY_FIELDS]
    props.append(("llmjudge.key", record.get("key", "")))
    return props


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value)
