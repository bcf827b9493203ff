"""Option resolution: precedence, validation messages, CI detection."""

from __future__ import annotations

import pytest

from pytest_llmjudge.settings import OPTIONS, OPTIONS_BY_NAME, SettingError, detect_ci, resolve


def test_defaults_off_ci():
    settings = resolve({}, {}, {})
    assert settings.mode == "auto" and settings.mode_reason == "default"
    assert settings.threshold == 0.5 and settings.temperature == 0.0 and settings.samples == 1
    assert settings.model is None and settings.budget is None and settings.prune is False


def test_cli_beats_env_beats_ini():
    ini = {"threshold": "0.1", "model": "ini-model"}
    env = {"LLMJUDGE_THRESHOLD": "0.2", "LLMJUDGE_MODEL": "env-model"}
    assert resolve({}, ini, {}).threshold == 0.1
    assert resolve({}, ini, env).threshold == 0.2
    settings = resolve({"threshold": "0.3"}, ini, env)
    assert settings.threshold == 0.3 and settings.model == ("env-model",)
    assert settings.sources["threshold"] == "cli" and settings.sources["model"] == "env"


def test_the_marker_beats_cli_env_and_ini():
    from_env = resolve({}, {}, {"LLMJUDGE_THRESHOLD": "0.2"})
    assert from_env.with_marker({"threshold": 0.9}).threshold == 0.9
    from_cli = resolve({"threshold": "0.3"}, {"threshold": "0.1"}, {"LLMJUDGE_THRESHOLD": "0.2"})
    assert from_cli.with_marker({"threshold": 0.9}).threshold == 0.9


def test_models_split_on_commas_for_panels():
    assert resolve({"model": "a, b ,c"}, {}, {}).model == ("a", "b", "c")


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({"CI": "true"}, "CI"),
        ({"CI": "false"}, None),
        ({"CI": "0"}, None),
        ({"GITHUB_ACTIONS": "true"}, "GITHUB_ACTIONS"),
        ({}, None),
    ],
)
def test_ci_detection(environ, expected):
    assert detect_ci(environ) == expected


def test_ci_makes_replay_the_default_but_an_explicit_mode_wins():
    settings = resolve({}, {}, {"CI": "1"})
    assert settings.mode == "replay" and settings.mode_reason == "CI detected: CI is set"
    explicit = resolve({"mode": "auto"}, {}, {"CI": "1"})
    assert explicit.mode == "auto" and explicit.mode_reason == "--judge-mode"


@pytest.mark.parametrize(
    "cli, ini, env, message",
    [
        ({"mode": "fast"}, {}, {}, "--judge-mode must be one of auto, replay, refresh, live; got 'fast'"),
        ({}, {"mode": "fast"}, {}, "judge_mode must be one of auto, replay, refresh, live; got 'fast'"),
        ({}, {}, {"LLMJUDGE_MODE": "fast"}, "LLMJUDGE_MODE must be one of"),
        ({"threshold": "nan"}, {}, {}, "--judge-threshold must be a finite number"),
        ({"concurrency": "0"}, {}, {}, "--judge-concurrency must be a whole number >= 1"),
        ({"samples": "2.5"}, {}, {}, "--judge-samples must be a whole number >= 1, got '2.5'"),
        ({"budget": "-1"}, {}, {}, "--judge-budget must be >= 0"),
        ({"temperature": "3"}, {}, {}, "--judge-temperature must be between 0 and 2"),
        ({}, {"prune": "maybe"}, {}, "judge_prune must be true or false"),
    ],
)
def test_bad_values_name_the_place_and_the_allowed_values(cli, ini, env, message):
    with pytest.raises(SettingError) as excinfo:
        resolve(cli, ini, env)
    assert message in str(excinfo.value)


def test_every_option_has_three_consistent_names():
    for option in OPTIONS:
        suffix = option.name.replace("_", "-")
        if option.name.startswith("generate_"):  # the model under test's own options: --generate-x, generate_x
            assert option.cli == f"--{suffix}"
            assert option.ini == option.name
        else:
            assert option.cli == f"--judge-{suffix}"
            assert option.ini == f"judge_{option.name}"
        assert option.env == f"LLMJUDGE_{option.name.upper()}"


def test_a_run_that_sets_no_option_and_never_judges_loads_no_settings(pytester):
    """Given a suite with no judge option anywhere, registering the options and running a plain test
    does not load the settings, the judge or the store (start-up cost for suites that never judge)."""
    pytester.makeconftest(
        """
        import sys

        def pytest_unconfigure(config):
            loaded = sorted(m for m in sys.modules if m.startswith("pytest_llmjudge"))
            open("loaded.txt", "w").write("\\n".join(loaded))
        """
    )
    pytester.makepyfile("def test_plain():\n    assert True\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    loaded = (pytester.path / "loaded.txt").read_text().split()
    # The hooks, the option table, the run's state and its recorder, and (once a test runs) what a
    # test's subprocess inherits: nothing that judges, stores, resolves settings or redacts.
    assert sorted(loaded) == [
        "pytest_llmjudge",
        "pytest_llmjudge.handover",
        "pytest_llmjudge.options",
        "pytest_llmjudge.plugin",
        "pytest_llmjudge.runtime",
        "pytest_llmjudge.session",
    ]


def test_only_a_test_that_may_get_another_judge_backend_sets_up_a_fixture_of_the_plugin(pytester):
    """A test that sees the plugin's own `judge_backend` sets up none of the plugin's fixtures (an
    autouse fixture costs every test of every suite); one under a conftest that overrides the fixture
    sets up the one that lets its judgments resolve it, and judges with the override."""
    pytester.makepyfile(
        test_plain="""
        def test_plain(request):
            print("PLAIN", sorted(request.fixturenames))
        """
    )
    sub = pytester.mkpydir("sub")
    (sub / "conftest.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture\n"
        "def judge_backend():\n"
        '    return lambda messages: \'{"reasoning": "the override judged", "score": 0.9}\'\n'
    )
    (sub / "test_overridden.py").write_text(
        "from pytest_llmjudge import assert_judged\n\n"
        "def test_judged(request):\n"
        "    print('OVERRIDDEN', sorted(request.fixturenames))\n"
        "    assert assert_judged('an answer', 'is an answer').reasoning == 'the override judged'\n"
    )
    result = pytester.runpytest_inprocess("-s", "-p", "no:cacheprovider", "--judge-mode=live")
    result.assert_outcomes(passed=2)
    (plain,) = [line for line in result.outlines if "PLAIN [" in line]
    (overridden,) = [line for line in result.outlines if "OVERRIDDEN [" in line]
    assert "_llmjudge" not in plain
    assert "_llmjudge_request" in overridden


def test_the_model_under_test_has_its_own_option_names():
    """The model under test is named apart from the judge: --generate-*, generate_*, LLMJUDGE_GENERATE_*."""
    option = OPTIONS_BY_NAME["generate_model"]
    assert (option.cli, option.ini, option.env) == ("--generate-model", "generate_model", "LLMJUDGE_GENERATE_MODEL")
    assert OPTIONS_BY_NAME["generate_api_base"].cli == "--generate-api-base"
    settings = resolve({}, {"generate_model": "openai/from-ini"}, {"LLMJUDGE_GENERATE_API_BASE": "http://h/v1"})
    assert (settings.generate_model, settings.generate_api_base) == ("openai/from-ini", "http://h/v1")
    with pytest.raises(SettingError, match="LLMJUDGE_GENERATE_MODEL must not be empty"):
        resolve({}, {}, {"LLMJUDGE_GENERATE_MODEL": "  "})
