"""The HTML report: self-contained, hostile outputs escaped, failures first, and (in a real headless
Chromium when one is installed) the filter script runs and nothing injected executes."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from helpers import FAKE_CONFTEST
from pytest_llmjudge.reporting.html import render_html
from pytest_llmjudge.reporting.json_report import build_report

HOSTILE = (
    "<script>document.title='pwned'</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
    "\"'><svg onload=\"document.body.setAttribute('data-pwned','2')\"></svg>"
)

BODY = f"""
import pytest
from pytest_llmjudge import assert_judged

HOSTILE = {HOSTILE!r}

@pytest.mark.parametrize("score", [0.1, 0.55, 0.62, 0.8, 0.95])
def test_refund(score):
    assert_judged(f"Returns are accepted within 30 days. SCORE={{score}}", "Says returns are accepted within 30 days", threshold=0.6)

def test_hostile_output():
    assert_judged(HOSTILE + " SCORE=0.3", "Is polite </article><b>bold</b>", threshold=0.5)

def test_unreadable():
    assert_judged("GARBLE", "Is readable")
"""


@pytest.fixture
def html_report(pytester) -> Path:
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=BODY)
    result = pytester.runpytest("--judge-mode=auto", "--judge-html=report.html")
    result.assert_outcomes(passed=3, failed=4)
    path = pytester.path / "report.html"
    result.stdout.fnmatch_lines([f"llmjudge: wrote HTML report {path}"])
    return path


def test_html_is_self_contained_and_escapes_everything(html_report):
    text = html_report.read_text()
    assert text.startswith("<!DOCTYPE html>")
    # No network: nothing fetched, one inline script, allowed by hash only.
    assert not re.search(r"<link|@import|<iframe|src=\"?https?:|url\(", text, re.I)
    assert text.count("<script") == 1
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", text) and "default-src 'none'" in text
    # The hostile output and criteria appear only escaped.
    assert (
        "<script>document.title" not in text and "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in text
    )
    assert "<img src=x" not in text and "<svg onload" not in text
    assert "Is polite &lt;/article&gt;&lt;b&gt;bold&lt;/b&gt;" in text
    assert text.count("<article") == 7


def test_html_puts_failures_and_errors_first_then_near_threshold(html_report):
    statuses = re.findall(r'<article class="j" data-status="(\w+)"', html_report.read_text())
    assert statuses == ["error", "failed", "failed", "failed", "near", "passed", "passed"]
    text = html_report.read_text()
    assert "threshold 0.6" in text and "threshold 0.5" in text  # markers on the histogram
    assert re.search(r"<svg[^>]*aria-label=\"histogram of scores against thresholds\"", text)


def test_drift_is_shown_with_a_badge_and_a_table():
    records = [
        {
            "nodeid": "t.py::test_a",
            "criteria": "c",
            "rubric": "score",
            "score": 0.3,
            "threshold": 0.7,
            "passed": False,
            "reasoning": "r",
            "model": "m",
            "source": "live",
            "key": "ab" * 32,
            "samples": [],
            "cost_usd": 0.001,
            "latency_s": 0.2,
            "output": "o",
            "drift": {"old": 0.9, "new": 0.3, "flipped": True},
        },
    ]
    drift = [{"test": "t.py::test_a", "key": "ab" * 32, "old": 0.9, "new": 0.3, "flipped": True}]
    text = render_html(build_report(records, drift))
    assert 'data-drift="1"' in text and "drift 0.90 → 0.30, flipped" in text
    assert "Drift against stored verdicts (1)" in text and "$0.0010" in text


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _run_chromium(*args: str) -> str:
    browser = _chromium()
    assert browser is not None
    with tempfile.TemporaryDirectory() as profile:
        completed = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    return completed.stdout


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed")
def test_in_a_real_browser_the_filter_runs_and_nothing_injected_executes(html_report, tmp_path):
    dom = _run_chromium("--dump-dom", html_report.as_uri() + "#status=failed&q=refund")
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-ready="1"' in body, "the report's script ran"
    assert "data-pwned" not in body, "an injected handler ran"
    assert "<img" not in dom and "<svg onload" not in dom and "&lt;img src=x onerror" in dom, (
        "injected markup became elements"
    )
    assert "<title>llmjudge report: 3 failed of 7</title>" in dom, "an injected script changed the title"
    visible = re.findall(r'<article class="j" data-status="(\w+)" data-drift="\d">', dom)  # no hidden attribute
    assert visible == ["failed", "failed"], "status=failed and text 'refund' leave the two failed refund tests"
    assert 'data-shown="2"' in body and "showing 2 of 7" in dom

    dom = _run_chromium("--dump-dom", html_report.as_uri() + "#status=near")
    assert re.findall(r'<article class="j" data-status="(\w+)" data-drift="\d">', dom) == ["near"]

    screenshot = tmp_path / "report.png"
    _run_chromium(f"--screenshot={screenshot}", "--window-size=1280,1600", html_report.as_uri())
    assert screenshot.exists() and screenshot.stat().st_size > 20_000


def test_threshold_labels_never_overprint_however_close_the_thresholds():
    from pytest_llmjudge.reporting.html import threshold_labels

    thresholds = {0.5: 3, 0.52: 1, 0.55: 2, 0.6: 1, 0.62: 1, 0.7: 4, 0.9: 1, 0.95: 2, 1.0: 1}
    placed = threshold_labels(thresholds, 36, 852)
    assert len(placed) == len(thresholds)
    for i, (_, _, row, (a, b), _) in enumerate(placed):
        assert 36 <= a < b <= 36 + 852, "inside the plot"
        for _, _, other_row, (c, d), _ in placed[i + 1 :]:
            assert row != other_row or b <= c or d <= a, "two labels in one row overlap"
