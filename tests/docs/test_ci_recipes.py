"""The CI recipes of docs/ci.md run: against a git repository built here (a base branch and a pull request
recorded against a local judge server), their steps are run as CI would run them: shell steps by bash,
`actions/github-script`'s script under Node with a recording `github` client, `gh` and `curl` replaced by
recorders.  The comment they post is `llmjudge diff --format markdown`, which is also the example in
docs/cli.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers.git_repo import BAD_REFUND, GOOD_REFUND, POLITE, RUDE, SUPPORT_BOT, GitRepo, support_judge
from helpers.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]
YAML = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)
MARKDOWN_EXAMPLE = re.compile(r"^````markdown\n(.*?)^````$", re.M | re.S)


def blocks(page: str, holding: str) -> list[str]:
    """The YAML blocks of docs/`page` that hold `holding`."""
    return [b for b in YAML.findall((ROOT / "docs" / page).read_text(encoding="utf-8")) if holding in b]


@pytest.fixture
def pull_request(pytester: pytest.Pytester) -> tuple[GitRepo, str]:
    """main: the bot's answers recorded; feature (checked out): two answers changed and recorded again.
    origin/main is where main is, as a CI checkout with the base's history has it.  Returns (repo, main's id)."""
    repo = GitRepo(pytester.path)
    (pytester.path / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    with OpenAIServer(support_judge) as server:
        judge = ["--judge-model=openai/judge-test", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        for refund, tone in ((GOOD_REFUND, RUDE), (BAD_REFUND, POLITE)):
            pytester.makepyfile(test_bot=SUPPORT_BOT.format(refund=refund, tone=tone))
            pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *judge).assert_outcomes(
                passed=2, failed=1
            )
            if refund == GOOD_REFUND:
                main = repo.commit("the bot's answers, recorded")
                repo.git("checkout", "-q", "-b", "feature")
        repo.commit("new answers, recorded")
    repo.git("update-ref", "refs/remotes/origin/main", main)
    return repo, main


def recorder(bin_dir: Path, name: str) -> None:
    """A `name` command on `bin_dir` that writes its arguments (one a line) to `name`-args.txt, and for a
    `body@FILE` argument (curl's --data-urlencode) copies FILE's text to `name`-body.md."""
    script = bin_dir / name
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > {name}-args.txt\n'
        'for arg in "$@"; do case "$arg" in body@*) cat "${arg#body@}" > ' + f"{name}-body.md;; esac; done\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def shell(repo: GitRepo, command: str, env: dict[str, str]) -> int:
    """Run one step's command as CI's shell would (bash, stop at the first failure); its exit status."""
    done = subprocess.run(["bash", "-e", "-c", command], cwd=repo.path, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    return done.returncode


@pytest.fixture
def ci_env(pull_request: tuple[GitRepo, str], tmp_path: Path) -> dict[str, str]:
    """The environment of a CI job: CI set, the plugin's commands and the recorders first on PATH."""
    repo, _ = pull_request
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("gh", "curl"):
        recorder(bin_dir, name)
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), repo.env["PATH"]])
    return {**repo.env, "PATH": path, "CI": "true"}


def check_comment(body: str) -> None:
    assert body.startswith("### LLM judge: verdicts at `origin/main (") or body.startswith(
        "### LLM judge: verdicts at `"
    )
    rows = [line for line in body.splitlines() if line.startswith("| ")]
    assert (
        "| **regressed** | `test_bot.py::test_refund` | Says returns are accepted within 30 days | 0.90 pass | "
        "0.20 fail (threshold 0.70) |"
    ) in rows
    assert "| **improved** | `test_bot.py::test_tone` | Is polite | 0.30 fail | 0.90 pass (threshold 0.70) |" in rows


def test_the_github_actions_recipe_posts_the_diff_and_fails_on_the_regression(pull_request, ci_env, tmp_path):
    repo, _ = pull_request
    (workflow,) = blocks("ci.md", "actions/github-script")
    steps = yaml.safe_load(workflow)["jobs"]["judge-diff"]["steps"]
    summary = tmp_path / "step_summary.md"
    env = {**ci_env, "GITHUB_BASE_REF": "main", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"}
    statuses = {}
    for step in steps:
        name = step.get("name") or step.get("run") or step["uses"]
        if "run" in step and not step["run"].startswith("pip install"):
            statuses[name] = shell(repo, step["run"], env)
        elif step.get("uses", "").startswith("actions/github-script"):
            statuses[name] = github_script(repo, step["with"]["script"])
    assert statuses == {
        "pytest --judge-mode=replay": 1,  # the refund test fails on its replayed verdict
        "compare the verdicts with the base branch's": 0,
        "comment on the pull request": 0,
        "fail on a regression": 1,
    }
    (comment,) = json.loads((repo.path / "comments.json").read_text())
    assert comment["issue_number"] == 7 and comment["body"] == (repo.path / "judge-diff.md").read_text()
    check_comment(comment["body"])
    assert "Gives a 14-day window; the policy allows 30 days." in summary.read_text()  # the job summary


def github_script(repo: GitRepo, script: str) -> int:
    """`actions/github-script`'s script under Node, with a `github` client that records the comments it posts."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node is not installed: actions/github-script's script cannot run here")
    wrapper = repo.path / "github-script.js"
    wrapper.write_text(
        "const comments = [];\n"
        "const github = {rest: {issues: {createComment: async (c) => { comments.push(c); }}}};\n"
        "const context = {repo: {owner: 'owner', repo: 'repo'}, issue: {number: 7}};\n"
        f"(async () => {{\n{script}\n"
        "require('fs').writeFileSync('comments.json', JSON.stringify(comments));\n"
        "})().catch((e) => { console.error(e); process.exit(1); });\n"
    )
    return subprocess.run([node, str(wrapper)], cwd=repo.path, capture_output=True, timeout=60).returncode


def test_the_gh_variant_comments_the_same_file(pull_request, ci_env):
    repo, _ = pull_request
    (fragment,) = blocks("ci.md", "gh pr comment")
    (step,) = yaml.safe_load(fragment)
    assert step["env"] == {"GH_TOKEN": "${{ github.token }}", "PR_NUMBER": "${{ github.event.pull_request.number }}"}
    env = {**ci_env, "GITHUB_BASE_REF": "main", "GH_TOKEN": "ghs-test", "PR_NUMBER": "7"}
    (diff_step,) = [s for s in yaml.safe_load(blocks("ci.md", "actions/github-script")[0])["jobs"]["judge-diff"]["steps"]
                    if "--format markdown" in s.get("run", "")]  # fmt: skip
    assert shell(repo, diff_step["run"], env) == 0
    assert shell(repo, step["run"], env) == 0
    assert (repo.path / "gh-args.txt").read_text().splitlines() == [
        "pr",
        "comment",
        "7",
        "--body-file",
        "judge-diff.md",
    ]
    check_comment((repo.path / "judge-diff.md").read_text())


def test_the_gitlab_recipe_posts_the_diff_as_a_merge_request_note(pull_request, ci_env):
    repo, main = pull_request
    (pipeline,) = blocks("ci.md", "CI_MERGE_REQUEST_DIFF_BASE_SHA")
    job = yaml.safe_load(pipeline)["judge-diff"]
    assert job["variables"] == {"GIT_DEPTH": 0}
    env = {
        **ci_env,
        "GITLAB_CI": "true",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": main,
        "CI_API_V4_URL": "https://gitlab.example.invalid/api/v4",
        "CI_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_IID": "7",
        "GITLAB_TOKEN": "glpat-test-token",
    }
    statuses = [shell(repo, line, env) for line in job["script"] if not line.startswith("pip install")]
    assert statuses == [0, 0, 0, 1, 1]  # the tests' failure kept for the end; the regression; the tests' failure
    args = (repo.path / "curl-args.txt").read_text().splitlines()
    assert "https://gitlab.example.invalid/api/v4/projects/42/merge_requests/7/notes" in args
    body = (repo.path / "curl-body.md").read_text()
    assert body == (repo.path / "judge-diff.md").read_text()
    check_comment(body)
    assert "Gives a 14-day window; the policy allows 30 days." in (repo.path / "judge-summary.md").read_text()


def test_the_cli_page_shows_the_markdown_the_diff_writes(pull_request, monkeypatch, capsys):
    """docs/cli.md's example is this scenario's `llmjudge diff main --format markdown`, but for the commit id."""
    from pytest_llmjudge.cli import main

    repo, commit = pull_request
    (example,) = MARKDOWN_EXAMPLE.findall((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    capsys.readouterr()
    monkeypatch.chdir(repo.path)
    assert main(["diff", "main", "--format", "markdown"]) == 0
    written = capsys.readouterr().out.replace(commit[:12], "3f9a1c2e4b5d")
    assert written == example, written
