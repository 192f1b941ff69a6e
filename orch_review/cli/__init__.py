"""The command line: a thin click layer over the library front door in :mod:`orch_review.core`.

Each command lives in its own module and returns an exit code; :mod:`orch_review.cli.exits`
is the one place that turns exit codes and errors into the process's exit status.
"""

from __future__ import annotations

import difflib
import os
import sys
from typing import Any

import click

from orch_review import __version__
from orch_review.cli import eval_mine  # noqa: F401  (registers `eval mine`)
from orch_review.cli.config import config
from orch_review.cli.eval import eval_group
from orch_review.cli.followup import ask, chat
from orch_review.cli.github import github
from orch_review.cli.gitlab import gitlab
from orch_review.cli.hook import hook
from orch_review.cli.journal import journal
from orch_review.cli.learn import learn_command
from orch_review.cli.mcp import mcp
from orch_review.cli.merge import merge_command
from orch_review.cli.options import EXIT_CODES_HELP
from orch_review.cli.plan import plan
from orch_review.cli.requests import mr, pr
from orch_review.cli.review import review_command


class DefaultGroup(click.Group):
    """A group that runs ``review`` when the first argument is not a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (
            args[0] not in self.commands and args[0] not in {"--help", "-h", "--version"}
        ):
            args = self._command_first(ctx, args)
        return super().parse_args(ctx, args)

    def _command_first(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``args`` with the subcommand first when options came before it (``--config F
        plan`` is ``plan --config F``), else as the default command's; a UsageError for a
        first word that is no file and looks like a misspelt command."""
        review = self.commands["review"]
        takes_value = {
            name
            for param in review.params
            if isinstance(param, click.Option) and not param.is_flag and not param.count
            for name in param.opts
        }
        index = 0
        while index < len(args):
            word = args[index]
            if word == "--":
                break
            if word.startswith("-"):
                index += 2 if word in takes_value else 1
                continue
            if word in self.commands and word != "review" and not os.path.lexists(word):
                # A file or folder of that name stays a path, as it always was.
                _check_options_of(self.commands[word], word, args[:index], ctx)
                return [word, *args[:index], *args[index + 1 :]]
            if not os.path.lexists(word):
                close = difflib.get_close_matches(word, list(self.commands), n=1, cutoff=0.75)
                if close:
                    raise click.UsageError(
                        f"`{word}` is neither a command nor a file: did you mean "
                        f"`orch-review {close[0]}`? (`orch-review --help` lists the commands.)",
                        ctx,
                    )
            break
        return ["review", *args]

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Run the command line; standard output failing while click prints (``--help``,
        ``--version``, a usage error) is handled as it is within a command."""
        from orch_review.cli.exits import say
        from orch_review.cli.stdout import ReaderGone, StdoutUnwritable, guarded_stdout

        try:
            with guarded_stdout():
                return super().main(*args, **kwargs)
        except ReaderGone as exc:
            sys.exit(int(exc.exit_code))
        except StdoutUnwritable as exc:
            say(f"orch-review: {exc}")
            sys.exit(int(exc.exit_code))

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Top-level help: the default command's options first, then the subcommands."""
        default = self.commands.get("review")
        if default is not None:
            with click.Context(default, info_name="review", parent=ctx) as sub:
                helper = default.get_help_option(sub)
                params = [p for p in default.get_params(sub) if p is not helper]
                rows = [r for p in params if (r := p.get_help_record(sub))]
            paths = ("[PATHS]...", "Git pathspecs: review only what matches.")
            rows = [paths if name == "[PATHS]..." else (name, text) for name, text in rows]
            with formatter.section("Review options (the default command)"):
                formatter.write_dl(rows)
        super().format_options(ctx, formatter)


def _check_options_of(
    command: click.Command, name: str, options: list[str], ctx: click.Context
) -> None:
    """A UsageError naming the first of ``options`` (typed before ``name``) that ``name``
    does not take, and where options go."""
    accepted = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    for option in options:
        flag = option.split("=", 1)[0]
        if flag.startswith("-") and flag not in accepted:
            raise click.UsageError(
                f"`{flag}` is not an option of `orch-review {name}`: options go after the "
                f"command they belong to (`orch-review {name} --help` lists its options).",
                ctx,
            )


@click.group(
    cls=DefaultGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    options_metavar="[OPTIONS] [PATHS]...",
    subcommand_metavar="[COMMAND [ARGS]...]",
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, "--version", prog_name="orch-review")
def main() -> None:
    """Review code with Claude the way a careful senior team would.

    orch-review scouts the change, splits it into concerns, reviews each concern with a
    parallel agent, has a second agent try to refute every finding, and reports only what
    survives, ranked by severity.

    \b
    Examples:
      orch-review                  review your branch's changes, committed or not
      orch-review --staged         review exactly what `git commit` would record
      orch-review --base origin/main --head HEAD
                                   review a pull request
      orch-review --all src/       audit every file under src/
      orch-review pr 42            review pull request 42 (mr 42: GitLab)
      orch-review plan             show what would be reviewed, with no API call
      orch-review config           show every setting and where it came from
      orch-review ask "why is finding 1 a problem?"
                                   a follow-up question about the last review
      orch-review journal stats    show what the resume journal holds
      orch-review learn --fingerprint FP --reason "..."
                                   never report that finding again
      orch-review eval cases.jsonl measure recall, noise and cost on known bugs

    Needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a compatible server), or the
    credentials of Amazon Bedrock, Google Vertex AI or Microsoft Foundry with
    ORCH_REVIEW_PROVIDER set (see docs/providers.md).

    Settings come from [tool.orch-review] in pyproject.toml (or from the file
    .orch-review.toml), then from ORCH_REVIEW_* environment variables, then flags.
    """


for command in (
    review_command,
    plan,
    hook,
    ask,
    chat,
    journal,
    github,
    gitlab,
    pr,
    mr,
    merge_command,
    learn_command,
    config,
    mcp,
    eval_group,
):
    main.add_command(command)
