"""``orch-review ask`` and ``chat``: follow-up questions about the last review."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from orch_review.cli.exits import handle_errors

if TYPE_CHECKING:
    from orch_review.engine.memory.followup import Answer, FollowUp


def _follow_up() -> FollowUp:
    from orch_review.cli.consoles import console
    from orch_review.config.settings import load_config
    from orch_review.core import take_environment
    from orch_review.engine.memory.followup import FollowUp
    from orch_review.scope.git import open_repo, work_tree

    env = take_environment()
    repo = open_repo(Path.cwd(), env)
    config = load_config(work_tree(repo), env, {})
    stderr = console(stderr=True)
    return FollowUp(config, repo, env, notices=lambda text: stderr.print(text, style="bold yellow"))


def _print_answer(answer: Answer) -> None:
    from orch_review.engine.agents.workflow import describe
    from orch_review.sanitize import terminal

    # The model's words and the concerns it named reach the terminal only sanitized.
    click.echo(terminal(answer.text))
    if answer.outcomes:
        click.echo("\nReviewed for this answer:\n" + terminal(describe(list(answer.outcomes))))


@click.command(short_help="Ask a follow-up question about the last review.")
@click.argument("question")
@click.option(
    "--orchestrate",
    is_flag=True,
    help="Switch orchestration mode back on: the model may fan out through Workflow.",
)
@handle_errors
def ask(question: str, orchestrate: bool) -> None:
    """Ask a follow-up question about the last review.

    The review's conversation continues with orchestration mode off: the model answers on
    its own, checking facts in the same content it reviewed. Example:
    orch-review ask "why is finding 1 a problem?"
    """
    if not question.strip():
        from orch_review.errors import UsageError

        raise UsageError(
            'the question is empty: write it in quotes, e.g. orch-review ask "why is finding 1 '
            'a problem?"'
        )
    with _follow_up() as follow_up:
        _print_answer(follow_up.ask(question, orchestrate=orchestrate))


@click.command(short_help="Talk about the last review interactively.")
@handle_errors
def chat() -> None:
    """Talk about the last review interactively.

    Type a question and press Enter. /mode on lets the model fan out through Workflow again,
    /mode off returns to solo answers, /quit (or Ctrl-D) ends the chat.
    """
    from rich.prompt import Prompt

    from orch_review.cli import consoles

    console = consoles.console()
    orchestrate = False
    with _follow_up() as follow_up:
        console.print(f"Chatting about the review of {follow_up.scope}. /quit to end.")
        while True:
            try:
                line = Prompt.ask("[bold]you[/bold]", console=console).strip()
            except EOFError:
                break
            if line in {"/quit", "/exit"}:
                break
            if line in {"/mode on", "/mode off"}:
                orchestrate = line == "/mode on"
                console.print(f"orchestration mode {'on' if orchestrate else 'off'}")
                continue
            if line.startswith("/"):
                console.print(
                    f"unknown command {line.split()[0]}: the commands are /mode on, /mode off "
                    "and /quit (a question cannot start with /)",
                    markup=False,
                    highlight=False,
                )
                continue
            if line:
                _print_answer(follow_up.ask(line, orchestrate=orchestrate))
