"""What the user reads after the run: one sentence, the JUnit properties of each judged test, and
a line per judgment (score, source, cost, latency) for `-v` and for the test's report section."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

PROPERTY_FIELDS = ("score", "threshold", "passed", "model", "source", "reasoning", "cost_usd", "latency_s")


def format_usd(cost: float) -> str:
    """Dollars to 4 places; a real but sub-cent spend is not shown as "$0.0000" (it was not free)."""
    if 0 < cost < 0.00005:
        return "<$0.0001"
    return f"${cost:.4f}"


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
    parts.append(format_usd(cost))
    return "llmjudge: " + ", ".join(parts)


def live_calls(record: Mapping[str, Any]) -> int:
    """Judge calls a judgment made over the network (a panel or samples make several)."""
    samples = record.get("samples") or []
    if samples:
        return sum(s.get("source") == "live" for s in samples)
    return 1 if record.get("source") == "live" else 0


def summary_details(records: Iterable[Mapping[str, Any]]) -> str | None:
    """`llmjudge: 3 live judge calls, 1.82 s judging (slowest 0.71 s, tests/test_a.py::test_x)`, when anything went live."""
    records = [r for r in records if "error" not in r]
    calls = sum(live_calls(r) for r in records)
    timed = [r for r in records if isinstance(r.get("latency_s"), (int, float))]
    if not calls and not timed:
        return None
    total = sum(r["latency_s"] for r in timed)
    text = f"llmjudge: {calls} live judge call{'s' if calls != 1 else ''}, {total:.2f} s judging"
    if timed:
        slowest = max(timed, key=lambda r: r["latency_s"])
        text += f" (slowest {slowest['latency_s']:.2f} s, {slowest.get('nodeid', '?')})"
    return text


def judgment_lines(records: Iterable[Mapping[str, Any]], *, with_nodeid: bool = False) -> list[str]:
    """One line per judgment: `PASS 0.90 >= 0.70  live  openai/x  $0.000120  0.21 s  key 3f9a1c2e0b1d  criteria`."""
    lines = []
    for r in records:
        where = f"{r.get('nodeid', '?')}  " if with_nodeid else ""
        criteria = _clip(str(r.get("criteria", "")), 60)
        if "error" in r:
            lines.append(f"{where}ERROR {r['error']}  key {str(r.get('key', ''))[:12]}  {criteria}")
            continue
        status = "PASS" if r.get("passed") else "FAIL"
        relation = ">=" if r.get("passed") else "<"
        cost = r.get("cost_usd")
        latency = r.get("latency_s")
        lines.append(
            f"{where}{status} {r.get('score', 0):.2f} {relation} {r.get('threshold', 0):.2f}  {r.get('source', '?')}  "
            f"{r.get('model', '?')}  {'$%.6f' % cost if isinstance(cost, (int, float)) else 'cost n/a'}  "
            f"{'%.2f s' % latency if isinstance(latency, (int, float)) else '-'}  key {str(r.get('key', ''))[:12]}  {criteria}"
        )
    return lines


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


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
