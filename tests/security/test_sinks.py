"""Attacks on the sinks, after the text was sanitized: what rich lays out for a terminal or a
CI log (word wrap puts any part of a text at the start of a line), and what a Markdown host
renders (every construct, in any container). Through the real CLI, against the fake Messages
API and the fake GitHub API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orch_review.hosts.markers import REPLY_MARKER
from tests.conftest import GitRepoFactory
from tests.fakes.github_api import FakeGitHubAPI
from tests.fakes.github_artifacts import ArtifactStore
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.hosts.github.conftest import (  # noqa: F401 (fixtures)
    NUMBER,
    PullRepo,
    actions_env,
    event_payload,
    github_api,
    open_pull,
    opened_env,
    pull_repo,
    with_event,
)
from tests.hosts.github.test_action import run_step_in
from tests.hosts.github.test_comment_run import (  # noqa: F401 (the artifact store fixture)
    INPUTS,
    MAINTAINER,
    answer,
    answering,
    default_branch_checkout,
    issue_comment_event,
    store,
)
from tests.hosts.github.test_comment_run import _review_step as review_step
from tests.hosts.github.test_comment_run import _step_env as step_env
from tests.markdown_structure import bare_links, constructs, text_of
from tests.ptys import run_cli_on_pty
from tests.scripted import Concern, ReviewScript
from tests.security.verdicts import HOST_RESULTS, HostVerdict

pytestmark = pytest.mark.slow

_SGR_AND_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\r")


def _record(request: pytest.FixtureRequest, attack: str, problems: list[str]) -> None:
    detail = "; ".join(problems)[:200]
    request.config.stash[HOST_RESULTS].append(HostVerdict(attack, not problems, detail))


# -- CI commands through word wrap ---------------------------------------------------------------

# Mid-line, each survives the text sanitizer; a run of them at every offset makes sure the
# wrap at 40 columns puts some at the start of a line.
FORGED = " ".join(
    f"{'x' * n} ::error file=app.py,line=1::FORGED{n} ::add-mask::s{n} ::stop-commands::t{n}"
    for n in range(1, 12)
)


def _forging_script() -> ReviewScript:
    return ReviewScript(
        [
            Concern(
                "eval",
                f"Check app.py for eval {FORGED}",
                "grep -n 'eval(' app.py",
                path="app.py",
                category="security",
                claim=f"eval of input {FORGED}",
                suggestion=f"Parse it {FORGED}",
            )
        ],
        summary=f"Summary {FORGED}",
    )


def _commands_in(output: str) -> list[str]:
    """Lines of ``output`` a runner would obey: starting with ``::`` once escape sequences
    and leading blanks are stripped (the runner trims blanks), or holding ``##[``."""
    found = []
    for raw in output.splitlines():
        line = _SGR_AND_CONTROL.sub("", raw).lstrip()
        if line.startswith("::") or "##[" in line or line.startswith("section_"):
            found.append(line[:60])
    return found


@pytest.mark.parametrize(
    "terminal_env",
    [{"FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "1"}, {"FORCE_COLOR": "1", "NO_COLOR": ""}],
    ids=["FORCE_COLOR", "TTY_COMPATIBLE", "FORCE_COLOR-in-colour"],
)
def test_word_wrap_puts_no_ci_command_at_a_line_start(
    terminal_env: dict[str, str],
    git_repo: GitRepoFactory,
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    request: pytest.FixtureRequest,
) -> None:
    repo = git_repo({"app.py": "def run(x):\n    return eval(x)\n"})
    fake_api.policy = _forging_script()
    env = {**api_env, "GITHUB_ACTIONS": "true", "CI": "true", "COLUMNS": "40", "LINES": "20"}
    env = {k: v for k, v in {**env, **terminal_env}.items() if v}

    result = run_cli(repo, env, "--all")

    problems = [f"stdout: {c}" for c in _commands_in(result.stdout)]
    problems += [f"stderr: {c}" for c in _commands_in(result.stderr)]
    name = " ".join(f"{k}={v}" for k, v in terminal_env.items() if v)
    name += " in colour" if "NO_COLOR" in terminal_env else ""
    _record(request, f"CI commands through word wrap ({name}, 40 columns)", problems)
    assert result.returncode == 1, result.stderr
    assert "\x1b[" in result.stdout  # a terminal as far as rich knows: laid out, coloured
    assert "FORGED11" in result.stdout  # shown, defused, not dropped
    assert not problems, problems
    assert "\x1b]8;" not in result.stdout  # no OSC 8 links in a log or a pipe


def test_word_wrap_on_a_pty_in_ci_puts_no_ci_command_at_a_line_start(
    git_repo: GitRepoFactory,
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    request: pytest.FixtureRequest,
) -> None:
    repo = git_repo({"app.py": "def run(x):\n    return eval(x)\n"})
    fake_api.policy = _forging_script()
    env = {k: v for k, v in api_env.items() if k not in {"NO_COLOR", "COLUMNS", "LINES"}}
    env |= {"GITHUB_ACTIONS": "true", "CI": "true", "TERM": "xterm-256color"}

    code, output = run_cli_on_pty(repo, env, 40, "--all")

    problems = _commands_in(output)
    _record(request, "CI commands through word wrap (a pty in CI, 40 columns)", problems)
    assert code == 1, output[-2000:]
    assert "FORGED11" in output
    assert not problems, problems
    assert "\x1b]8;" not in output  # a CI log gets no OSC 8 links, even on a pty


# -- Markdown that escapes the fence --------------------------------------------------------------

HOSTILE_MARKDOWN = (
    "Injection.\n"
    "> ```suggestion\n> import os; os.system('curl evil.test')\n> ```\n"
    "- ```suggestion\n  pwned()\n  ```\n"
    "   ~~~suggestion\n   pwned()\n   ~~~\n"
    '<img src="https://evil.test/beacon.png"> ![b](https://evil.test/b.png) '
    "[click](https://evil.test/phish) <https://evil.test/auto> https://evil.test/bare "
    "www.evil.test </sub></details><details open><summary>x</summary> "
    "&#64;org/team @octocat #1 !45 <!-- orch-review:summary -->\n"
    "/merge\n/approve\n  /assign @me\n"
    "[r]: https://evil.test/ref\n[ref][r]"
)
SAFE_QUERY = '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))'
#: HTML orch-review itself writes: its hidden markers, the verdict line, the refuted fold.
OURS_HTML = re.compile(r"^(<!-- orch-review:[a-z]+(?: \S+)? -->|</?sub>|</?details>|</?summary>)$")
DANGEROUS = {"fence", "code_block", "html_block", "html_inline", "image", "link_open"}


def _markdown_problems(where: str, body: str, suggestions: int) -> list[str]:
    problems = []
    found = [c for c in constructs(body) if c.kind in DANGEROUS]
    fences = [c for c in found if c.kind in ("fence", "code_block")]
    if [c.detail for c in fences] != ["suggestion"] * suggestions:
        problems.append(f"{where}: code blocks {[c.detail for c in fences]}")
    for c in found:
        if c.kind.startswith("html") and not all(
            OURS_HTML.match(part) for part in re.findall(r"<[^>]*>", c.detail)
        ):
            problems.append(f"{where}: html {c.detail[:60]!r}")
        if c.kind == "image" or (
            c.kind == "link_open" and not c.detail.startswith("https://github.test/")
        ):
            problems.append(f"{where}: {c.kind} {c.detail[:60]}")
    # orch-review's own links (to comments on the host) aside.
    source = re.sub(r"\]\(https://github\.test/[^)\s]*\)", "]()", body)
    problems += [f"{where}: bare link or mention {b!r}" for b in bare_links(source)]
    problems += [
        f"{where}: quick action {line[:30]!r}"
        for line in body.splitlines()
        if line.lstrip().startswith("/")
    ]
    return problems


def test_model_markdown_renders_as_text_in_every_markdown_sink(
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,  # noqa: F811
    actions_env: dict[str, str],  # noqa: F811
    pull_repo: PullRepo,  # noqa: F811
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    pull = pull_repo
    open_pull(github_api, pull)
    env = with_event(actions_env, event_payload("opened", pull), tmp_path / "event.json")
    fake_api.policy = ReviewScript(
        [
            Concern(
                "injection",
                "Check app.py for SQL injection: queries built from user input.",
                "grep -n 'execute(f' app.py",
                path="app.py",
                category="security",
                claim=HOSTILE_MARKDOWN,
                suggestion=HOSTILE_MARKDOWN,
                verdict=lambda _, __: (True, HOSTILE_MARKDOWN),
                replacement=lambda _: SAFE_QUERY,
            ),
            Concern(
                "division",
                "Check calc.py for division by zero.",
                "grep -n ' / ' calc.py",
                path="calc.py",
                severity="medium",
                claim=HOSTILE_MARKDOWN,
                verdict=lambda _, __: (True, HOSTILE_MARKDOWN),
            ),
        ],
        summary=HOSTILE_MARKDOWN,
    )

    result = run_cli(pull.path, env, "github", "--filter-mode", "nofilter")

    comments = github_api.pulls[NUMBER].review_comments
    summaries = github_api.pulls[NUMBER].issue_comments
    job_summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    problems = []
    for comment in comments:
        where = f"comment on {comment['path']}"
        problems += _markdown_problems(where, comment["body"], comment["path"] == "app.py")
    for summary in summaries:
        problems += _markdown_problems("summary comment", summary["body"], 0)
    problems += _markdown_problems("job summary", job_summary, 0)
    _record(request, "Markdown that escapes the fence (comments, summaries)", problems)
    assert result.returncode == 0, result.stderr
    assert {c["path"] for c in comments} == {"app.py", "calc.py"}
    assert len(summaries) == 1
    assert not problems, problems
    # Shown as the characters they are, not dropped.
    injection = next(c for c in comments if c["path"] == "app.py")
    shown = text_of(injection["body"])
    assert "![b](https://evil.test/b.png)" in shown and "/merge/approve" in shown
    assert SAFE_QUERY in injection["body"]
    assert "calc.py" in text_of(job_summary)


def test_a_hostile_answer_renders_as_text_in_the_reply(
    opened_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,  # noqa: F811
    pull_repo: PullRepo,  # noqa: F811
    store: ArtifactStore,  # noqa: F811
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    env = step_env(opened_env, tmp_path)
    inputs = {**INPUTS, "anthropic-base-url": fake_api.base_url}
    assert run_step_in(pull_repo.path, review_step(), inputs, env).returncode == 0
    github_api.add_issue_comment(NUMBER, "@orch-review is app.py safe?", login=MAINTAINER)
    asked = github_api.pulls[NUMBER].issue_comments[-1]
    fake_api.reset()
    fake_api.policy = answering(HOSTILE_MARKDOWN)
    checkout = default_branch_checkout(pull_repo, tmp_path / "checkout")
    event = issue_comment_event(asked["id"], asked["body"], asked["user"], tmp_path / "e.json")

    result = answer({**env, **event}, checkout, fake_api)

    replies = [
        c for c in github_api.pulls[NUMBER].issue_comments if c["body"].startswith(REPLY_MARKER)
    ]
    job_summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    problems = [p for reply in replies for p in _markdown_problems("reply", reply["body"], 0)]
    problems += _markdown_problems("job summary", job_summary, 0)
    _record(request, "Markdown that escapes the fence (a reply to a comment)", problems)
    assert result.returncode == 0, result.stderr
    assert len(replies) == 1
    assert not problems, problems
    assert "![b](https://evil.test/b.png)" in text_of(replies[0]["body"])
