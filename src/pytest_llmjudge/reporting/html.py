"""The HTML report of a run (`--judge-html=PATH`): one self-contained file a person can read.

The page is `report.html` (markup and CSS, a `string.Template`) with `report.js` inlined.  No
network: inline CSS, one inline script (allowed by its hash in a Content-Security-Policy that
forbids everything else), an inline SVG histogram.  Every text that came from a test, an output or
a judge is escaped: outputs under test are hostile data.  Failed, erroring and near-threshold
judgments come first; a text box and status buttons filter the list (also from the URL:
`report.html#status=failed&q=refund`).
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any

from ..store.atomic import write_atomically
from .terminal import format_usd, tokens_text

STATUS_ORDER = {"error": 0, "failed": 1, "near": 2, "passed": 3, "scored": 4}
STATUS_LABEL = {
    "error": "error",
    "failed": "below threshold",
    "near": "near threshold",
    "passed": "passed",
    "scored": "scored (no threshold)",
}
BINS = 20


def _e(value: Any) -> str:
    """Escape any value for HTML text or a double-quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Any, fmt: Callable[[float], str] = "{:.2f}".format, missing: str = "–") -> str:
    """A number in `fmt` (money: `format_usd`, as the terminal shows it), else `missing`."""
    return fmt(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else missing


def _histogram(judgments: list[Mapping[str, Any]]) -> str:
    scored = [j for j in judgments if isinstance(j.get("score"), (int, float)) and j.get("status") != "error"]
    thresholds = Counter(round(float(t), 4) for j in judgments if isinstance(t := j.get("threshold"), (int, float)))
    width, left, right, bottom = 900, 36, 12, 30
    placed = threshold_labels(thresholds, left, width - left - right)
    labels = 1 + max((row for _, _, row, _, _ in placed), default=-1)
    height = 210 + LABEL_ROW * labels
    top = 10 + LABEL_ROW * labels  # threshold labels sit above the bars, packed in rows that never overlap
    plot_w, plot_h = width - left - right, height - top - bottom
    bins = [{"passed": 0, "near": 0, "failed": 0} for _ in range(BINS)]
    for j in scored:
        index = min(BINS - 1, max(0, int(float(j["score"]) * BINS)))
        bins[index][j["status"] if j["status"] in ("passed", "near", "failed") else "passed"] += 1
    peak = max([sum(b.values()) for b in bins] + [1])
    svg = (
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="histogram of scores against thresholds" '
        f'xmlns="http://www.w3.org/2000/svg" font-family="system-ui,sans-serif" font-size="11">'
    )
    parts = [svg]
    for tick in range(0, peak + 1, max(1, (peak + 3) // 4)):
        y = top + plot_h - plot_h * tick / peak
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eef0f3"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#667085">{tick}</text>')
    bar_w = plot_w / BINS
    colours = (("failed", "#d64545"), ("near", "#d98e04"), ("passed", "#1f9d55"))
    for i, b in enumerate(bins):
        y = top + plot_h
        for status, colour in colours:
            n = b[status]
            if not n:
                continue
            h = plot_h * n / peak
            y -= h
            lo, hi = i / BINS, (i + 1) / BINS
            parts.append(
                f'<rect x="{left + i * bar_w + 1.5:.1f}" y="{y:.1f}" width="{bar_w - 3:.1f}" height="{h:.1f}" '
                f'rx="2" fill="{colour}">'
                f"<title>{n} {STATUS_LABEL[status]}, score {lo:.2f}–{hi:.2f}</title></rect>"
            )
    base = top + plot_h
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{base}" y2="{base}" stroke="#98a2b3"/>')
    for k in range(11):
        x = left + plot_w * k / 10
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{base}" y2="{base + 4}" stroke="#98a2b3"/>')
        parts.append(f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle" fill="#667085">{k / 10:.1f}</text>')
    for _, x, row, (start, end), text in placed:
        y_label = 12 + LABEL_ROW * row
        # The dashed line starts below the label rows, so no line crosses another threshold's label.
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 4}" y2="{base}" stroke="#111827" stroke-width="1.5" '
            'stroke-dasharray="4 3"/>'
        )
        anchor_x, anchor = (start, "start") if start >= x - 0.5 else (end, "end")
        parts.append(
            f'<text x="{anchor_x:.1f}" y="{y_label + 4}" text-anchor="{anchor}" fill="#111827" font-weight="600">'
            f"{_e(text)}</text>"
        )
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 2}" text-anchor="middle" fill="#667085">score</text>')
    parts.append("</svg>")
    return "".join(parts)


LABEL_ROW = 14  # px per row of threshold labels
LABEL_CHAR = 6.6  # px per character at the labels' 11 px font, generously (system-ui digits are ~6.1)


def threshold_labels(
    thresholds: Mapping[float, int], left: float, plot_w: float
) -> list[tuple[float, float, int, tuple[float, float], str]]:
    """Where each threshold's label goes: (threshold, line x, row, (label start x, end x), text).

    Labels are packed into rows so that no two overlap (with a gap), whatever the thresholds: a
    label sits to the right of its line, or to its left near the right edge, in the first row
    where it fits.
    """
    placed: list[tuple[float, float, int, tuple[float, float], str]] = []
    rows: list[list[tuple[float, float]]] = []
    gap = 8.0
    for t, used in sorted(thresholds.items()):
        x = left + plot_w * min(1.0, max(0.0, t))
        text = f"threshold {t:g} · {used} judgment{'s' if used != 1 else ''}"
        width = LABEL_CHAR * len(text)
        start = x + 5
        if start + width > left + plot_w:
            start = x - 5 - width
        span = (start, start + width)
        fits = (r for r, taken in enumerate(rows) if all(span[1] + gap <= a or span[0] >= b + gap for a, b in taken))
        row = next(fits, len(rows))
        if row == len(rows):
            rows.append([])
        rows[row].append(span)
        placed.append((t, x, row, span, text))
    return placed


def _sort_key(j: Mapping[str, Any]) -> tuple[Any, ...]:
    score, threshold = j.get("score"), j.get("threshold")
    margin = score - threshold if isinstance(score, (int, float)) and isinstance(threshold, (int, float)) else 0.0
    return (STATUS_ORDER.get(str(j.get("status")), 9), 0 if j.get("drift") else 1, margin, str(j.get("nodeid", "")))


def _score_block(j: Mapping[str, Any]) -> str:
    score, threshold = j.get("score"), j.get("threshold")
    if not isinstance(score, (int, float)):
        return f'<span class="score">– / {_num(threshold)}</span>'
    fill = max(0.0, min(1.0, float(score))) * 100
    tick = max(0.0, min(1.0, float(threshold))) * 100 if isinstance(threshold, (int, float)) else None
    bar = (
        f'<span class="bar" title="score {_num(score)}, threshold {_num(threshold)}">'
        f'<span class="fill" style="width:{fill:.1f}%"></span>'
    )
    if tick is not None:
        bar += f'<span class="th" style="left:calc({tick:.1f}% - 1px)"></span>'
    bar += "</span>"
    return f'<span class="score">{_num(score)} <span style="color:#98a2b3">/ {_num(threshold)}</span></span>{bar}'


def _samples_table(samples: Iterable[Mapping[str, Any]]) -> str:
    rows = "".join(
        f'<tr><td class="mono">{_e(s.get("model"))}</td><td>#{_e(s.get("sample"))}</td><td '
        f'class="mono">{_num(s.get("score"))}</td>'
        f"<td>{_e(s.get('source'))}</td><td>{_e(s.get('reasoning'))}</td></tr>"
        for s in samples
    )
    return f"<table><tr><th>model</th><th>sample</th><th>score</th><th>source</th><th>reasoning</th></tr>{rows}</table>"


def _card(j: Mapping[str, Any]) -> str:
    status = str(j.get("status", "passed"))
    drift = j.get("drift") or None
    badges = f'<span class="badge {_e(status)}">{_e(STATUS_LABEL.get(status, status))}</span>'
    if drift:
        flip = ", flipped" if drift.get("flipped") else ""
        badges += f'<span class="badge drift">drift {_num(drift.get("old"))} → {_num(drift.get("new"))}{flip}</span>'
    parts = [
        f'<article class="j" data-status="{_e(status)}" data-drift="{1 if drift else 0}">',
        f'<div class="top">{badges}{_score_block(j)}<span class="node">{_e(j.get("nodeid"))}</span></div>',
        f'<div class="crit">{_e(j.get("criteria"))}</div>',
    ]
    if status == "error":
        parts.append(f'<div class="msg">{_e(j.get("error"))}: {_e(j.get("message"))}</div>')
    elif j.get("reasoning"):
        parts.append(f'<p class="reason">{_e(j.get("reasoning"))}</p>')
    open_attr = " open" if status in ("failed", "error") else ""
    parts.append(
        f"<details{open_attr}><summary>output under test</summary><pre "
        f'class="out">{_e(j.get("output"))}</pre></details>'
    )
    samples = j.get("samples") or []
    if len(samples) > 1:
        agreement = j.get("agreement")
        extra = f" · agreement {agreement:.0%}" if isinstance(agreement, (int, float)) else ""
        extra += f" · spread {_num(j.get('spread'))}" if isinstance(j.get("spread"), (int, float)) else ""
        parts.append(
            f"<details><summary>{len(samples)} samples{_e(extra)}</summary>{_samples_table(samples)}</details>"
        )
    meta = [
        ("judge", j.get("model")),
        ("source", j.get("source")),
        ("rubric", j.get("rubric")),
        ("verdict", j.get("verdict")),
        ("confidence", j.get("confidence")),
        ("cost", _num(j.get("cost_usd"), format_usd, "unknown" if j.get("live_calls") else "none")),
        ("latency", _num(j.get("latency_s"), "{:.2f} s".format, "replayed") if status != "error" else None),
        ("tokens", tokens_text(j)),
        ("run", j.get("run")),
        ("group", j.get("group")),
        ("test", j.get("test_outcome")),
        ("key", str(j.get("key") or "")[:12]),
    ]
    parts.append(
        '<div class="meta">'
        + "".join(f'<span>{_e(k)} <b class="mono">{_e(v)}</b></span>' for k, v in meta if v not in (None, ""))
        + "</div>"
    )
    parts.append("</article>")
    return "".join(parts)


def _drift_table(drift: list[Mapping[str, Any]]) -> str:
    if not drift:
        return ""
    rows = "".join(
        f'<tr><td class="mono">{_e(d.get("test"))}</td><td class="mono">{_e(str(d.get("key", ""))[:12])}</td>'
        f'<td class="mono">{_num(d.get("old"))} → {_num(d.get("new"))}</td>'
        f"<td>{'yes' if d.get('flipped') else ''}</td></tr>"
        for d in drift
    )
    return (
        f'<section class="panel"><h2>Drift against stored verdicts ({len(drift)})</h2>'
        f"<table><tr><th>test</th><th>key</th><th>score</th><th>pass/fail flipped</th></tr>{rows}</table></section>"
    )


def _calibration_panels(runs: list[Mapping[str, Any]]) -> str:
    """One panel per calibration run: its figures, the confusion matrix, and the disagreements."""
    dash = partial(_num, missing="-")
    panels = []
    for run in runs:
        cells = run.get("confusion") or {}
        low, high = run.get("kappa_ci") or [None, None]
        figures = (
            f"accuracy {dash(run.get('accuracy'))} · kappa {dash(run.get('kappa'))}"
            f" (95% CI {dash(low)} to {dash(high)}) · {_e(run.get('n'))} examples"
            f" · threshold {dash(run.get('threshold'))}, best {dash(run.get('best_threshold'))}"
        )
        matrix = (
            "<table><tr><th></th><th>judge pass</th><th>judge fail</th></tr>"
            f"<tr><th>human pass</th><td>{_e(cells.get('tp'))}</td><td>{_e(cells.get('fn'))}</td></tr>"
            f"<tr><th>human fail</th><td>{_e(cells.get('fp'))}</td><td>{_e(cells.get('tn'))}</td></tr></table>"
        )
        rows = "".join(
            f"<tr><td>{_e(d.get('id'))}</td><td>{_e(d.get('label'))}</td><td>{dash(d.get('score'))}"
            f"</td><td>{_e(d.get('criteria'))}</td><td>{_e(d.get('reasoning'))}</td></tr>"
            for d in run.get("disagreements") or []
        )
        disagreements = (
            "<table><tr><th>example</th><th>human</th><th>judge</th><th>criteria</th><th>reasoning</th></tr>"
            f"{rows}</table>"
            if rows
            else "<p>No disagreements.</p>"
        )
        verdict = "cleared its bar" if run.get("passed") else "below its bar"
        panels.append(
            f'<section class="panel"><h2>Calibration: {_e(run.get("source"))} ({verdict})</h2>'
            f'<div class="sub">{_e(run.get("nodeid"))} · {figures}</div>{matrix}{disagreements}</section>'
        )
    return "".join(panels)


def _suite_panels(gates: list[Mapping[str, Any]], repeats: list[Mapping[str, Any]]) -> str:
    """A panel per gated group (its decision, figures and cases) and one for the repeated tests' runs."""
    dash = partial(_num, missing="-")
    percent = partial(_num, fmt="{:.1%}".format, missing="-")
    panels = []
    for gate in gates:
        rate, mean = gate.get("rate") or {}, gate.get("mean_score") or None
        level = percent(rate.get("confidence"), fmt="{:.0%}".format)
        figures = (
            f"{_e(gate.get('passed_cases'))} of {_e(gate.get('judged_cases'))} cases passed · rate "
            f"{percent(rate.get('estimate'))} ({level} Wilson interval "
            f"{percent(rate.get('low'))} to {percent(rate.get('high'))})"
        )
        if mean:
            figures += (
                f" · mean score {dash(mean.get('estimate'))} (Student-t interval {dash(mean.get('low'))} to "
                f"{dash(mean.get('high'))})"
            )
        asked = ", ".join(f"{name}={value}" for name, value in (gate.get("gate") or {}).items())
        if gate.get("partial"):
            figures += " · part of the group did not run here"
        rows = "".join(
            f'<tr><td class="mono">{_e(c.get("nodeid"))}</td><td>{_e(c.get("status"))}</td>'
            f"<td>{dash(c.get('score'))}</td><td>{_e(' / '.join(c.get('failures') or []))}</td></tr>"
            for c in gate.get("cases") or []
        )
        decision = "passed" if gate.get("decision") == "passed" else "failed"
        panels.append(
            f'<section class="panel gate"><h2>Gate {_e(gate.get("group"))}: {decision} '
            f'<span class="sub">({_e(asked)})</span></h2><div class="sub">{figures}</div>'
            "<table><tr><th>case</th><th>status</th><th>score</th><th>why it failed</th></tr>"
            f"{rows}</table></section>"
        )
    if repeats:
        rows = "".join(
            f'<tr><td class="mono">{_e(r.get("nodeid"))}</td><td>{_e(r.get("passed"))} of {_e(r.get("done"))}</td>'
            f"<td>{_e(r.get('min_passes'))}</td><td>{_e(r.get('decided'))}</td>"
            f"<td>{_e(' / '.join(_failed_run(f) for f in r.get('failed') or []))}</td></tr>"
            for r in repeats
        )
        panels.append(
            f'<section class="panel"><h2>Repeated tests ({len(repeats)})</h2>'
            "<table><tr><th>test</th><th>runs passed</th><th>needed</th><th>decided</th><th>failed runs</th></tr>"
            f"{rows}</table></section>"
        )
    return "".join(panels)


def _failed_run(failure: Mapping[str, Any]) -> str:
    return f"run {failure.get('run')}: {failure.get('message')}"


def _cards(totals: Mapping[str, Any], judged: int) -> str:
    """The figures at the top: counts, where verdicts came from, cost and judge time."""
    sources = "".join(f"{int(totals.get(name) or 0)}<small>{name}</small>" for name in ("replayed", "cached", "live"))
    calls, unpriced = int(totals.get("live_calls") or 0), int(totals.get("unpriced_calls") or 0)
    judging = totals.get("judging_s", totals.get("latency_s"))  # wall time (a report written before: summed)
    spent = _e(_num(totals.get("cost_usd"), format_usd, format_usd(0.0)))
    if unpriced and unpriced >= calls and not totals.get("cost_usd"):
        spent = "cost unknown"
    elif unpriced:
        spent = f"≥ {spent}<small>({unpriced} of {calls} calls unpriced)</small>"
    tokens = tokens_text(totals)
    cards = [
        ("", _e(totals.get("judged", judged)), "judged"),
        ("pass", _e(totals.get("passed", 0)), "passed"),
        ("fail", _e(totals.get("failed", 0)), "below threshold"),
        ("err", _e(totals.get("errors", 0)), "errors"),
        ("near", _e(totals.get("near_threshold", 0)), "near threshold"),
        ("", _e(totals.get("drifted", 0)), "drifted"),
        ("wide", sources, "where verdicts came from"),
        (
            "wide",
            f"{spent}<small>·</small>{_e(_num(judging, '{:.1f} s'.format, '0 s'))}",
            f"cost · judge time, {calls} live calls{_e(', ' + tokens) if tokens else ''}",
        ),
    ]
    return "".join(
        f'<div class="card {c}"><div class="n">{n}</div><div class="l">{label}</div></div>' for c, n, label in cards
    )


def render_html(document: Mapping[str, Any]) -> str:
    """The report document (see json_report.build_report) as one self-contained HTML page."""
    judgments = sorted(document.get("judgments") or [], key=_sort_key)
    totals = document.get("totals") or {}
    settings = document.get("settings") or {}
    models = ", ".join(settings.get("model") or []) or "custom / per test"
    resources = files(__package__)
    script = resources.joinpath("report.js").read_text(encoding="utf-8")
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    page = Template(resources.joinpath("report.html").read_text(encoding="utf-8"))
    return page.substitute(
        csp=f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; img-src data:; "
        "base-uri 'none'; form-action 'none'",
        failed=totals.get("failed", 0),
        judged=totals.get("judged", 0),
        sub=f"{_e(document.get('created', ''))} · mode {_e(settings.get('mode', '?'))} "
        f"({_e(settings.get('mode_reason', ''))}) · "
        f"judge {_e(models)} · pytest exit status {_e(document.get('exitstatus'))}",
        cards=_cards(totals, len(judgments)),
        histogram=_histogram(judgments),
        suites=_suite_panels(list(document.get("gates") or []), list(document.get("repeats") or [])),
        drift=_drift_table(list(document.get("drift") or [])),
        calibrations=_calibration_panels(document.get("calibrations") or []),
        judgments="".join(_card(j) for j in judgments),
        script=script,
    )


def write_html(path: Path, document: Mapping[str, Any]) -> None:
    """Write the report document as one HTML page, atomically."""
    write_atomically(path, render_html(document))
