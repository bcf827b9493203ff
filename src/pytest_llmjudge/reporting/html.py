"""The HTML report of a run (`--judge-html=PATH`): one self-contained file a person can read.

No network: inline CSS, one inline script (allowed by its hash in a Content-Security-Policy that
forbids everything else), an inline SVG histogram.  Every text that came from a test, an output or
a judge is escaped: outputs under test are hostile data.  Failed, erroring and near-threshold
judgments come first; a text box and status buttons filter the list (also from the URL:
`report.html#status=failed&q=refund`).
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable, Mapping
from pathlib import Path
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

CSS = """
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#667085;--line:#e3e6eb;--pass:#1f9d55;--fail:#d64545;
--near:#d98e04;--err:#7c3aed;--accent:#2563eb;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{background:#111827;color:#f9fafb;padding:18px 28px}
header h1{margin:0;font-size:19px;font-weight:600;letter-spacing:.2px}
header .sub{color:#9ca3af;font-size:12.5px;margin-top:4px}
main{max-width:1180px;margin:0 auto;padding:20px 28px 48px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:16px}
.card{flex:1 1 84px;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 14px;
white-space:nowrap}
.card.wide{flex:2 1 170px}
.card.wide .n{font-size:20px;line-height:29px}
.card .n{font-size:24px;font-weight:650;font-variant-numeric:tabular-nums}
.card .n small{font-size:13px;font-weight:500;color:var(--muted);margin:0 6px 0 2px}
.card .l{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.card.fail .n{color:var(--fail)}.card.pass .n{color:var(--pass)}.card.near .n{color:var(--near)}
.card.err .n{color:var(--err)}
.panel{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin-bottom:16px}
.panel h2{font-size:14px;margin:0 0 8px;font-weight:600}
.hist svg{width:100%;height:auto;display:block}
.legend{display:flex;gap:16px;color:var(--muted);font-size:12px;margin-top:4px;flex-wrap:wrap}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.toolbar{position:sticky;top:0;z-index:2;display:flex;gap:10px;align-items:center;flex-wrap:wrap;background:var(--bg);
padding:10px 0}
#q{flex:1;min-width:220px;padding:8px 12px;border:1px solid var(--line);border-radius:8px;font-size:14px;
background:#fff}
.seg{display:flex;border:1px solid var(--line);border-radius:8px;overflow:hidden;background:#fff}
.seg button{border:0;background:none;padding:7px 12px;font-size:13px;cursor:pointer;color:var(--ink);
border-right:1px solid var(--line)}
.seg button:last-child{border-right:0}
.seg button[aria-pressed=true]{background:#111827;color:#fff}
#count{color:var(--muted);font-size:12.5px;min-width:110px;text-align:right}
.j{background:var(--card);border:1px solid var(--line);border-left:5px solid var(--pass);border-radius:10px;
padding:12px 16px;margin-bottom:10px}
.j[data-status=failed]{border-left-color:var(--fail)}.j[data-status=near]{border-left-color:var(--near)}
.j[data-status=error]{border-left-color:var(--err)}
.j[hidden]{display:none}
.top{display:flex;gap:12px;align-items:center;flex-wrap:wrap}
.badge{font-size:11px;font-weight:700;text-transform:uppercase;letter-spacing:.5px;padding:2px 8px;
border-radius:999px;color:#fff;background:var(--pass)}
.badge.failed{background:var(--fail)}.badge.near{background:var(--near)}.badge.error{background:var(--err)}
.badge.drift{background:#0e7490}
.score{font:600 15px var(--mono);font-variant-numeric:tabular-nums}
.bar{position:relative;width:140px;height:8px;background:#eef0f3;border-radius:4px;overflow:visible}
.bar .fill{position:absolute;left:0;top:0;bottom:0;border-radius:4px;background:var(--pass)}
.j[data-status=failed] .bar .fill{background:var(--fail)}.j[data-status=near] .bar .fill{background:var(--near)}
.bar .th{position:absolute;top:-4px;bottom:-4px;width:2px;background:#111827}
.node{font:12.5px var(--mono);color:var(--muted);word-break:break-all;margin-left:auto}
.crit{font-weight:600;margin:8px 0 4px}
.reason{margin:0 0 6px;white-space:pre-wrap}
.msg{font:12.5px/1.5 var(--mono);white-space:pre-wrap;background:#faf5ff;border:1px solid #e9d5ff;border-radius:6px;
padding:8px 10px;margin:6px 0}
details{margin-top:4px}
summary{cursor:pointer;color:var(--accent);font-size:12.5px}
pre.out{font:12.5px/1.5 var(--mono);white-space:pre-wrap;word-break:break-word;background:#f8fafc;
border:1px solid var(--line);border-radius:6px;padding:8px 10px;max-height:320px;overflow:auto;margin:6px 0}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0}
td,th{border-bottom:1px solid var(--line);padding:4px 10px 4px 0;text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:500}
.meta{display:flex;gap:14px;flex-wrap:wrap;color:var(--muted);font-size:12px;margin-top:6px}
.meta b{color:var(--ink);font-weight:500}
.mono{font-family:var(--mono)}
.empty{color:var(--muted);text-align:center;padding:30px}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
"""

SCRIPT = """
(function(){
  var q=document.getElementById('q'), buttons=[].slice.call(document.querySelectorAll('.seg button'));
  var items=[].slice.call(document.querySelectorAll('article.j')), count=document.getElementById('count');
  var none=document.getElementById('none'), status='all';
  function matches(el){
    var s=el.getAttribute('data-status');
    if(status==='failed'&&s!=='failed'&&s!=='error')return false;
    if(status==='near'&&s!=='near')return false;
    if(status==='passed'&&s!=='passed'&&s!=='near')return false;
    if(status==='error'&&s!=='error')return false;
    if(status==='drift'&&el.getAttribute('data-drift')!=='1')return false;
    var text=q.value.trim().toLowerCase();
    if(!text)return true;
    return text.split(/\\s+/).every(function(w){return el.textContent.toLowerCase().indexOf(w)>=0;});
  }
  function apply(){
    var shown=0;
    items.forEach(function(el){var ok=matches(el);el.hidden=!ok;if(ok)shown++;});
    buttons.forEach(function(b){b.setAttribute('aria-pressed',String(b.getAttribute('data-filter')===status));});
    count.textContent='showing '+shown+' of '+items.length;
    document.body.setAttribute('data-shown',String(shown));
    none.hidden=shown!==0;
    var h='status='+encodeURIComponent(status)+(q.value?'&q='+encodeURIComponent(q.value):'');
    try{history.replaceState(null,'','#'+h);}catch(e){}
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){status=b.getAttribute('data-filter');apply();});});
  q.addEventListener('input',apply);
  var hash=location.hash.replace(/^#/,'');
  hash.split('&').forEach(function(part){
    var kv=part.split('='), v=decodeURIComponent((kv[1]||'').replace(/\\+/g,' '));
    if(kv[0]==='status'&&buttons.some(function(b){return b.getAttribute('data-filter')===v;}))status=v;
    if(kv[0]==='q')q.value=v;
  });
  apply();
  document.body.setAttribute('data-ready','1');
})();
"""


def _e(value: Any) -> str:
    """Escape any value for HTML text or a double-quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Any, fmt: str = "{:.2f}", missing: str = "–") -> str:
    return fmt.format(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else missing


def _usd(value: Any, missing: str) -> str:
    """Dollars as the terminal shows them (one money format in every report)."""
    return format_usd(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else missing


def _histogram(judgments: list[Mapping[str, Any]]) -> str:
    scored = [j for j in judgments if isinstance(j.get("score"), (int, float)) and j.get("status") != "error"]
    thresholds: dict[float, int] = {}
    for j in judgments:
        t = j.get("threshold")
        if isinstance(t, (int, float)):
            thresholds[round(float(t), 4)] = thresholds.get(round(float(t), 4), 0) + 1
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
        ("cost", _usd(j.get("cost_usd"), "unknown" if j.get("live_calls") else "none")),
        ("latency", _num(j.get("latency_s"), "{:.2f} s", "replayed") if status != "error" else None),
        ("tokens", tokens_text(j)),
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
    panels = []
    for run in runs:
        confusion = run.get("confusion") or {}
        kappa_ci = run.get("kappa_ci") or [None, None]
        figures = (
            f"accuracy {_e(_num(run.get('accuracy'), '{:.2f}', '-'))}"
            f" · kappa {_e(_num(run.get('kappa'), '{:.2f}', '-'))}"
            f" (95% CI {_e(_num(kappa_ci[0], '{:.2f}', '-'))} to {_e(_num(kappa_ci[1], '{:.2f}', '-'))})"
            f" · {_e(run.get('n'))} examples · threshold {_e(_num(run.get('threshold'), '{:.2f}', '-'))},"
            f" best {_e(_num(run.get('best_threshold'), '{:.2f}', '-'))}"
        )
        matrix = (
            "<table><tr><th></th><th>judge pass</th><th>judge fail</th></tr>"
            f"<tr><th>human pass</th><td>{_e(confusion.get('tp'))}</td><td>{_e(confusion.get('fn'))}</td></tr>"
            f"<tr><th>human fail</th><td>{_e(confusion.get('fp'))}</td><td>{_e(confusion.get('tn'))}</td></tr></table>"
        )
        rows = "".join(
            f"<tr><td>{_e(d.get('id'))}</td><td>{_e(d.get('label'))}</td><td>{_e(_num(d.get('score'), '{:.2f}', '-'))}"
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


def render_html(document: Mapping[str, Any]) -> str:
    """The report document (see json_report.build_report) as one self-contained HTML page."""
    judgments = sorted(document.get("judgments") or [], key=_sort_key)
    totals = document.get("totals") or {}
    settings = document.get("settings") or {}
    drift = list(document.get("drift") or [])
    cards = [
        ("judged", totals.get("judged", len(judgments)), ""),
        ("passed", totals.get("passed", 0), "pass"),
        ("below threshold", totals.get("failed", 0), "fail"),
        ("errors", totals.get("errors", 0), "err"),
        ("near threshold", totals.get("near_threshold", 0), "near"),
        ("drifted", totals.get("drifted", 0), ""),
    ]
    card_html = "".join(
        f'<div class="card {c}"><div class="n">{_e(v)}</div><div class="l">{_e(label)}</div></div>'
        for label, v, c in cards
    )
    sources = "".join(
        f"{int(totals.get(name, 0) or 0)}<small>{name}</small>" for name in ("replayed", "cached", "live")
    )
    card_html += (
        f'<div class="card wide"><div class="n">{sources}</div><div class="l">where verdicts came from</div></div>'
    )
    calls = int(totals.get("live_calls", 0) or 0)
    unpriced = int(totals.get("unpriced_calls", 0) or 0)
    spent = _e(_usd(totals.get("cost_usd"), format_usd(0.0)))
    if unpriced and unpriced >= calls and not totals.get("cost_usd"):
        spent = "cost unknown"
    elif unpriced:
        spent = f"≥ {spent}<small>({unpriced} of {calls} calls unpriced)</small>"
    took = _e(_num(totals.get("latency_s"), "{:.1f} s", "0 s"))
    tokens = tokens_text(totals)
    card_html += (
        f'<div class="card wide"><div class="n">{spent}<small>·</small>{took}</div>'
        f'<div class="l">cost · judge time, {calls} live calls{_e(", " + tokens) if tokens else ""}</div></div>'
    )
    models = ", ".join(settings.get("model") or []) or "custom / per test"
    sub = (
        f"{_e(document.get('created', ''))} · mode {_e(settings.get('mode', '?'))} "
        f"({_e(settings.get('mode_reason', ''))}) · "
        f"judge {_e(models)} · pytest exit status {_e(document.get('exitstatus'))}"
    )
    buttons = "".join(
        f'<button type="button" data-filter="{f}" aria-pressed="false">{label}</button>'
        for f, label in (
            ("all", "All"),
            ("failed", "Failed"),
            ("error", "Errors"),
            ("near", "Near threshold"),
            ("passed", "Passed"),
            ("drift", "Drift"),
        )
    )
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    csp = (
        f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    body = "".join(_card(j) for j in judgments)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>llmjudge report: {totals.get('failed', 0)} failed of {totals.get('judged', 0)}</title>"
        f"<style>{CSS}</style></head><body>"
        f'<header><h1>pytest-llmjudge report</h1><div class="sub">{sub}</div></header><main>'
        f'<section class="cards">{card_html}</section>'
        f'<section class="panel hist"><h2>Scores against thresholds</h2>{_histogram(judgments)}'
        '<div class="legend"><span><i style="background:#d64545"></i>below threshold</span><span><i '
        'style="background:#d98e04"></i>passed, near threshold</span>'
        '<span><i style="background:#1f9d55"></i>passed</span><span>- - - threshold (judgments using '
        "it)</span></div></section>"
        f"{_drift_table(drift)}"
        f"{_calibration_panels(document.get('calibrations') or [])}"
        '<div class="toolbar"><input id="q" type="search" placeholder="Filter by test, criteria, output, '
        'reasoning, model, key…" autocomplete="off">'
        f'<div class="seg" role="group" aria-label="status">{buttons}</div><span id="count"></span></div>'
        f'<section id="judgments">{body}<div id="none" class="empty" hidden>No judgment matches the '
        "filter.</div></section>"
        "<footer>Written by pytest-llmjudge. Self-contained: no network access, all text escaped.</footer>"
        f"</main><script>{SCRIPT}</script></body></html>\n"
    )


def write_html(path: Path, document: Mapping[str, Any]) -> None:
    """Write the report document as one HTML page, atomically."""
    write_atomically(path, render_html(document))
