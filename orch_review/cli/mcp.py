"""``orch-review mcp``: serve orch-review's tools to a coding agent over MCP (stdio)."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors
from orch_review.errors import ConfigError, ExitCode


@click.command(short_help="Serve plan, review and fixes to coding agents over MCP (stdio).")
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The repository the tools work on.",
)
@handle_errors
def mcp(repo: Path) -> ExitCode:
    """Serve orch-review as a Model Context Protocol server on stdin and stdout.

    A coding agent calls its tools: `plan` (what a review would cover, free), `review`
    (confirmed findings, coverage and cost, with progress; cancellable and resumable),
    `explain_finding` (a follow-up about one finding, orchestration mode off) and
    `apply_fix` (one verified patch, confined as --fix is). Resources: the last report
    (JSON) and the review guidance in force. Stdout carries only protocol messages.

    \b
    Claude Code:  claude mcp add orch-review -- orch-review mcp
    Needs the `mcp` extra (docs/mcp.md says how to install it).
    """
    from orch_review.core import take_environment
    from orch_review.scope.git import open_repo, work_tree

    try:
        from orch_review.mcp_server.server import serve
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        from orch_review import install_command

        raise ConfigError(f"orch-review mcp needs the MCP SDK: {install_command('mcp')}") from None
    env = take_environment()
    top = Path(work_tree(open_repo(repo.resolve(), env)))  # a clear error before serving
    serve(top, env)
    return ExitCode.CLEAN
