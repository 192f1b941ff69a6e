"""``orch-review eval mine``: a case file from the repository's own bug fixes."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orch_review.cli.eval import eval_group
from orch_review.cli.exits import handle_errors
from orch_review.errors import ExitCode

if TYPE_CHECKING:
    import git

    from orch_review.eval.linked import BugIssues
    from orch_review.eval.linked_gitlab import GitLabBugLinks


@eval_group.command("mine", short_help="Turn this repository's bug fixes into eval cases.")
@click.option("--since", metavar="DATE", help="Only commits after DATE (as git log --since).")
@click.option(
    "--limit", type=click.IntRange(min=1), metavar="N", help="Examine the newest N fixes."
)
@click.option(
    "--paths",
    "paths",
    multiple=True,
    metavar="PATHSPEC",
    help="Only history touching these paths (repeatable).",
)
@click.option(
    "--pattern",
    metavar="REGEX",
    help="What marks a fix commit's message (default: fix, bug, regression, revert, hotfix).",
)
@click.option(
    "--clean",
    type=click.IntRange(min=0),
    metavar="N",
    help="Clean cases to add (default: as many as bug cases).",
)
@click.option(
    "--horizon",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    metavar="N",
    help="A clean case is a commit no fix blamed with at least N newer commits.",
)
@click.option(
    "--max-origin-lines",
    type=click.IntRange(min=1),
    default=400,
    show_default=True,
    metavar="N",
    help="Drop origins that change more lines than this (imports, reformats).",
)
@click.option(
    "--github-repo",
    metavar="OWNER/NAME",
    help="Also count as fixes the commits naming (#N) an issue labelled as a bug there; "
    "needs GITHUB_TOKEN (default: the repository of the origin remote).",
)
@click.option(
    "--gitlab-project",
    metavar="PROJECT",
    help="Also count as fixes the commits naming (#N, !N) an issue or merge request labelled "
    "as a bug in PROJECT (an id or GROUP/NAME), or a merge request closing one; needs "
    "GITLAB_TOKEN (default: CI_PROJECT_ID, else the project of a gitlab.com origin remote).",
)
@click.option(
    "--bug-label",
    "bug_labels",
    multiple=True,
    metavar="LABEL",
    help="Labels that mark a bug, on GitHub or GitLab (repeatable; default: bug, type: bug, "
    "kind/bug, regression).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the cases to this file instead of stdout.",
)
@handle_errors
def mine_command(
    since: str | None,
    limit: int | None,
    paths: tuple[str, ...],
    pattern: str | None,
    clean: int | None,
    horizon: int,
    max_origin_lines: int,
    github_repo: str | None,
    gitlab_project: str | None,
    bug_labels: tuple[str, ...],
    output: Path | None,
) -> ExitCode:
    """Turn this repository's history into eval cases (the SZZ approach).

    Fix commits are found by their message; `git blame` in each fix's parent names the
    commits that wrote the lines the fix deleted or changed. Each such commit becomes a
    case (the commit against its parent) expecting findings on those lines, the fix's
    message as the claim. Commits no fix blamed become clean cases, which measure noise.
    Whitespace and comment lines, refactoring moves, large origins, merges and root
    commits are dropped, and counted. Then: orch-review eval cases.jsonl
    """
    from orch_review.core import take_environment
    from orch_review.eval.cases import dump_cases
    from orch_review.eval.mine import FIX_PATTERN, MineOptions, mine, summary_lines
    from orch_review.scope.git import open_repo, work_tree

    env = take_environment()
    opened = open_repo(Path.cwd(), env)
    top = Path(work_tree(opened))
    stack = ExitStack()
    linked: BugIssues | GitLabBugLinks | None
    linked = _gitlab_links(opened, env, gitlab_project, github_repo, bug_labels, stack)
    if linked is None:
        linked = _bug_issues(opened, env, github_repo, bug_labels, stack)
    options = MineOptions(
        since=since,
        limit=limit,
        paths=paths,
        pattern=pattern or FIX_PATTERN,
        max_origin_lines=max_origin_lines,
        horizon=horizon,
        clean=clean,
        linked_bug=linked,
    )
    with stack:
        result = mine(top, options)
    lines = "".join(line + "\n" for line in dump_cases(result.cases))
    if output is None:
        click.echo(lines, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(lines, encoding="utf-8")
    for line in summary_lines(result):
        click.echo(f"orch-review eval mine: {line}" if not line.startswith(" ") else line, err=True)
    if linked is not None and linked.unreadable:
        click.echo(
            f"  {linked.unreadable} linked issue(s) could not be read with this token "
            "(not counted as bugs)",
            err=True,
        )
    return ExitCode.CLEAN


def _gitlab_links(
    repo: git.Repo,
    env: Mapping[str, str],
    project: str | None,
    github_repo: str | None,
    labels: tuple[str, ...],
    stack: ExitStack,
) -> GitLabBugLinks | None:
    """The GitLab lookup, when a GitLab token and project are given; None otherwise (the
    GitHub lookup may apply)."""
    from orch_review.errors import UsageError
    from orch_review.eval.linked import BUG_LABELS
    from orch_review.eval.linked_gitlab import GitLabBugLinks, gitlab_com_project
    from orch_review.hosts.gitlab.api import GitLabClient
    from orch_review.hosts.gitlab.event import api_url_from_env, ca_file_from_env
    from orch_review.scope.git import history

    token = (env.get("GITLAB_TOKEN") or "").strip()
    if project is not None and not token:
        raise UsageError(
            "--gitlab-project needs GITLAB_TOKEN (a token that can read the project's issues "
            "and merge requests)."
        )
    if not token or (project is None and github_repo is not None):
        return None
    path = gitlab_com_project(history.effective_remote_url(repo, "origin") or "")
    name = project or (env.get("CI_PROJECT_ID") or "").strip() or path
    if not name:
        return None
    if project is not None and not project.isdigit():
        path = project
    api = api_url_from_env(env)
    client = stack.enter_context(GitLabClient(api, name, token, ca_file=ca_file_from_env(env)))
    return GitLabBugLinks(client, path, labels or BUG_LABELS)


def _bug_issues(
    repo: git.Repo,
    env: Mapping[str, str],
    github_repo: str | None,
    labels: tuple[str, ...],
    stack: ExitStack,
) -> BugIssues | None:
    """The bug-label lookup, when a GitHub token is given; None otherwise."""
    from orch_review.errors import UsageError
    from orch_review.eval.linked import BUG_LABELS, BugIssues, github_com_repository
    from orch_review.hosts.github.api import GitHubClient
    from orch_review.hosts.github.event import DEFAULT_API_URL
    from orch_review.scope.git import history

    token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
    if not token:
        if github_repo or labels:
            raise UsageError(
                "--github-repo and --bug-label need GITHUB_TOKEN (a token that can read the "
                "repository's issues)."
            )
        return None
    name = github_repo or github_com_repository(history.effective_remote_url(repo, "origin") or "")
    if name is None:
        raise UsageError(
            "GITHUB_TOKEN is set but the origin remote is not on github.com: pass "
            "--github-repo OWNER/NAME, or unset GITHUB_TOKEN to mine by messages alone."
        )
    api = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    client = stack.enter_context(GitHubClient(api, name, token))
    return BugIssues(client, labels or BUG_LABELS)
