"""The option table: every option is one row, and what the plugin does with an option follows its row."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from helpers.runtime import own_runtime
from pytest_llmjudge.options import INHERITED, MARKER_KEYS, OPTIONS, SUITE_KEYS
from pytest_llmjudge.settings import Settings, resolve

if TYPE_CHECKING:
    from pytest_llmjudge.pipeline.plan import Plan

# A value of every option as a user types it, none of them its default.  A new option needs one
# here: the tests below then hold its row (key, spellings, marker) against what the plugin does.
GIVEN = {
    "model": "openai/other",
    "mode": "refresh",
    "threshold": "0.8",
    "api_base": "http://127.0.0.1:9/v1",
    "temperature": "0.7",
    "timeout": "30",
    "retries": "1",
    "concurrency": "2",
    "samples": "3",
    "store": "verdicts",
    "cache_dir": "judge-cache",
    "budget": "2.5",
    "report": "report.json",
    "html": "report.html",
    "drift": "0.3",
    "prune": "true",
    "structured": "off",  # auto and on ask for the same reply schema: the same key
    "parse_retries": "0",
    "generate_model": "openai/app",
    "generate_api_base": "http://127.0.0.1:9/v1",
    "budget_tokens": "1000",
    "price": "input=0.15,output=0.60",
    "max_tokens": "512",
    "reasoning_effort": "low",
    "params": '{"seed": 7}',
    "instructions_in_user": "true",
    "max_items": "8",
    "redact_env": "MY_SERVICE_URL",
    "summary": "judge-summary.md",
    "runs": "3",
}


def test_every_option_has_a_given_value_unlike_its_default():
    assert set(GIVEN) == {o.name for o in OPTIONS}
    parsed = resolve(GIVEN, {}, {})
    for option in OPTIONS:
        assert getattr(parsed, option.name) != option.default, option.name


def test_settings_has_one_field_per_row_in_its_order_with_the_rows_default():
    names = tuple(o.name for o in OPTIONS)
    assert Settings._fields == (*names, "mode_reason", "sources", "overridden")
    made = Settings()  # as a test's subprocess makes it: only some fields given
    assert {name: getattr(made, name) for name in names} == {o.name: o.default for o in OPTIONS}
    assert {name: Settings._field_defaults[name] for name in names} == {o.name: o.default for o in OPTIONS}
    assert Settings(model=("m",), mode="replay").concurrency == 8


def test_what_a_subprocess_inherits_is_what_it_inherited_before():
    """INHERITED replaces runtime's own list (`_CHILD_SETTINGS`, as it was when the table took it
    over, copied here so the test outlives it): nothing a test's subprocess judged with is lost."""
    before = {
        "model",
        "mode",
        "threshold",
        "api_base",
        "temperature",
        "timeout",
        "retries",
        "samples",
        "budget",
        "structured",
        "parse_retries",
        "generate_model",
        "generate_api_base",
        "budget_tokens",
        "price",
        "max_tokens",
        "reasoning_effort",
        "params",
        "instructions_in_user",
        "redact_env",
    }
    added = {"max_items"}  # options added since, which a subprocess inherits too
    assert set(INHERITED) == before | added
    assert len(INHERITED) == len(before | added)


def test_an_option_that_joins_the_key_is_inherited():
    """A test's subprocess makes the keys the test makes, so it replays the test's verdicts."""
    assert [o.name for o in OPTIONS if o.keyed and not o.inherited] == []


@contextmanager
def _planned(environ: dict[str, str]) -> Iterator[Plan]:
    """One judgment planned on a runtime with these LLMJUDGE_* variables (the runtime closed after)."""
    from pytest_llmjudge.pipeline.plan import Options, plan

    runtime = own_runtime(environ={"LLMJUDGE_MODEL": "openai/judge", **environ})
    try:
        yield plan(
            "Returns are accepted within 30 days.",
            "Says returns are accepted within 30 days",
            Options(),
            runtime=runtime,
            context=None,
            backend=None,
            overrides={},
        )
    finally:
        runtime.close()


def _keys(environ: dict[str, str]) -> frozenset[str]:
    """The keys of the calls one judgment would make on a runtime with these LLMJUDGE_* variables."""
    with _planned(environ) as planned:
        return frozenset(call.key for call in planned.calls)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_an_option_changes_the_verdict_key_exactly_when_its_row_says_it_joins_the_key(option):
    # Given the same judgment planned with the option set to another value than its default,
    # its keys differ if and only if the row says the option joins the key (the docs table says so).
    changed = _keys({option.env: GIVEN[option.name]}) != _keys({})
    assert changed == bool(option.keyed)


def _stored(environ: dict[str, str]) -> tuple[dict, Settings]:
    """The verdict file entry one judgment would store on a runtime with these LLMJUDGE_* variables, and
    the settings it judged with."""
    from pytest_llmjudge.pipeline.plan import stored_fields

    with _planned(environ) as planned:
        (call,) = planned.calls
        return stored_fields(planned, call), planned.settings


JUDGE_SETTINGS = [o for o in OPTIONS if o.keyed == "judge"]


@pytest.mark.parametrize("option", JUDGE_SETTINGS, ids=lambda o: o.name)
def test_a_judge_setting_is_read_back_and_named_by_a_miss_as_its_row_says(option):
    """Each judge setting's row says where a stored entry holds it (`stored`) and what a miss calls it
    (`missed`): what a run stores with the setting given reads back as that setting, and a miss against
    the entry stored without it names this setting first, in the row's words, with its flag."""
    from pytest_llmjudge.pipeline import judge_settings
    from pytest_llmjudge.pipeline.replay_miss import describe, differences

    assert option.stored is not None and option.stored[0] in judge_settings.READERS and option.missed
    given, settings = _stored({option.env: GIVEN[option.name]})
    default, _ = _stored({})
    value = judge_settings.recorded(option, given)
    now = judge_settings.current(settings, option)
    if option.name == "model":  # a run names a panel of models; an entry, the one that judged it
        (now,) = now
    assert judge_settings.alike(option, now, value)
    assert not judge_settings.alike(option, now, judge_settings.recorded(option, default))
    fields = differences(default, given)
    assert fields[0].partition(":")[0] == option.name, fields
    named = describe(fields[0])
    assert named.startswith(option.missed) and named.endswith(f"({option.cli})"), named


@pytest.mark.parametrize("spelling", ["cli", "ini", "env"])
def test_every_option_reaches_its_setting_in_each_spelling(pytester, monkeypatch, spelling):
    """Given every option in one of its spellings, a run's settings hold each value as parsed."""
    pytester.makeconftest(
        """
        import json

        def pytest_collection_finish(session):
            from pytest_llmjudge.plugin import RUNTIME_KEY

            settings = session.config.stash[RUNTIME_KEY].settings
            with open("settings.json", "w") as handle:
                json.dump({**settings._asdict(), "sources": settings.sources}, handle, default=list)
        """
    )
    pytester.makepyfile("def test_plain():\n    assert True\n")
    args = []
    if spelling == "cli":
        args = [o.cli if o.flag else f"{o.cli}={GIVEN[o.name]}" for o in OPTIONS]
    elif spelling == "ini":
        lines = "\n".join(f"{o.ini} = {GIVEN[o.name]}" for o in OPTIONS)
        pytester.makeini(f"[pytest]\n{lines}\n")
    else:
        for option in OPTIONS:
            monkeypatch.setenv(option.env, GIVEN[option.name])
    pytester.runpytest("-p", "no:cacheprovider", *args).assert_outcomes(passed=1)
    seen = json.loads((pytester.path / "settings.json").read_text())
    expected = json.loads(json.dumps(resolve(GIVEN, {}, {})._asdict(), default=list))
    for option in OPTIONS:
        assert seen[option.name] == expected[option.name], option.name
        assert seen["sources"][option.name] == spelling, option.name


def test_the_marker_takes_exactly_the_marker_keys(pytester):
    """Given every marker key on a test, it runs; given an option the marker may not set, the test
    errors at setup with a one-line message naming every key it takes (a suite's keys too)."""
    pytester.makepyfile(
        textwrap.dedent(
            f"""
            import pytest

            @pytest.mark.judge(**{dict.fromkeys(MARKER_KEYS)!r})
            def test_every_key():
                pass

            @pytest.mark.judge(timeout=5)
            def test_session_only_option():
                pass
            """
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--judge-mode=replay")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [f"*@pytest.mark.judge got unknown argument(s) timeout; it takes {', '.join((*MARKER_KEYS, *SUITE_KEYS))}"]
    )
    assert "Traceback" not in result.stdout.str()
    assert MARKER_KEYS[-3:] == ("rubric", "aggregate", "band")


def test_a_judge_refuses_an_option_the_marker_may_not_set():
    from pytest_llmjudge import Judge, JudgeError

    runtime = own_runtime(environ={"LLMJUDGE_MODE": "replay"})
    try:
        with pytest.raises(JudgeError, match=rf"unknown setting\(s\) timeout; known: {', '.join(MARKER_KEYS)}$"):
            Judge(runtime=runtime, timeout=5)
        assert Judge(runtime=runtime, aggregate="median", band=0.1) is not None
    finally:
        runtime.close()
