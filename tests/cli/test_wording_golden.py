"""What the real CLI says in the situations a new user meets, at 80 and 120 columns.

Each situation runs ``orch-review`` as a subprocess with ``COLUMNS`` set, and its transcript
(command, exit status, stdout, stderr) is compared with a golden file in
tests/cli/golden/wording/ after :func:`normalise` masks what changes from run to run.
Regenerate with ``UPDATE_GOLDEN=1 pytest tests/cli/test_wording_golden.py`` and read the diff
as a new user would.

Width: every line orch-review words itself fits the width. Off a terminal the report is one
line per line, so logs stay greppable; a line may run past the width only when it quotes text
orch-review did not write and cannot wrap without changing it: code or a path from the
repository, a model's words (a claim, a fix, a verdict's reason, a concern's title) or an API
error. :data:`QUOTED` lists those texts for the scripted review; the width check is made on the
raw output, before masking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.snapshots import assert_snapshot
from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest
from tests.fakes.wire import prompt_blocks, token_count
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import PLANTED_FILES, planted_script

WIDTHS = (80, 120)

#: Texts the report quotes and cannot wrap (see the module docstring).
QUOTED = (
    *(line.strip() for text in PLANTED_FILES.values() for line in text.splitlines() if line),
    *(c.claim for c in planted_script().concerns),
    *(c.suggestion for c in planted_script().concerns),
    *(c.subtask for c in planted_script().concerns),
    "re-read the lines and the problem holds",  # the scripted verifiers' reasons
    "the cited code is guarded",
    "HTTP 500 api_error",  # the API's own error, quoted
)


@dataclass(frozen=True)
class Run:
    """One command's transcript."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def transcript(self) -> str:
        return (
            f"$ {' '.join(('orch-review', *self.args))}\n"
            f"exit {self.returncode}\n"
            f"--- stdout\n{self.stdout}"
            f"--- stderr\n{self.stderr}"
        )


def _run(cwd: Path, env: Mapping[str, str], width: int, *args: str, stdin: str = "") -> Run:
    env = {**env, "COLUMNS": str(width), "NO_COLOR": "1", "TERM": "dumb"}
    result = run_cli(cwd, env, *args, input=stdin)
    return Run(args, result.returncode, result.stdout, result.stderr)


_USAGE_ROW = re.compile(
    r"^(?P<role>main|subagent|verifier|critic|total)\s+(?P<agents>\d+(?: \(\+\d+ journal\))?)?"
    r"\s+(?P<requests>\d+)\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+\$[\d,]+\.\d+$",
    re.MULTILINE,
)


def normalise(text: str, tmp_path: Path) -> str:
    """Mask what changes between runs: temporary paths, commit ids, times and the usage
    table's token counts and costs (they depend on which agent's request warmed the cache),
    with the spacing of its header."""
    text = text.replace(str(tmp_path), "<tmp>")
    text = re.sub(r"\b[0-9a-f]{12,40}\b", "<sha>", text)
    text = re.sub(r"wall time \d+\.\ds", "wall time <s>", text)
    # The header's spacing follows the widest cost, which varies with the rows.
    text = re.sub(
        r"^role(?:\s+(?:agents|requests|input|cache read|output|cost))+$",
        "role agents requests input cache read output cost",
        text,
        flags=re.MULTILINE,
    )
    return _USAGE_ROW.sub(
        lambda m: f"{m['role']} agents={m['agents'] or '-'} requests={m['requests']} <tokens>",
        text,
    )


def too_wide(text: str, width: int) -> list[str]:
    """Lines wider than ``width`` that quote nothing orch-review cannot wrap."""
    return [
        line
        for line in text.splitlines()
        if len(line) > width and not any(quoted in line for quoted in QUOTED)
    ]


def _check(name: str, run: Run, width: int, tmp_path: Path) -> None:
    text = run.transcript()
    assert too_wide(text, width) == [], f"lines wider than {width} columns"
    assert_snapshot(f"wording/{name}-{width}.txt", normalise(text, tmp_path))


def _calc_subagent(request: ModelRequest) -> bool:
    """Any subagent about calc.py: the scripted concern, or the engine's sweep of it."""
    return request.role == "subagent" and "calc.py" in request.first_user_text


Situation = Callable[[FakeMessagesAPI, dict[str, str], GitRepoFactory, int], Run]


def one_refuted_finding(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    repo = make_planted_repo(git_repo)
    api.policy = planted_script()
    run = _run(repo, env, width, "--all", "--no-progress")
    assert run.returncode == 1, run.stderr
    assert "Not shown: 1 finding refuted by verifiers." in run.stdout
    assert "Reviewer's summary not shown" in run.stdout
    return run


def hook_requires_a_key(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    repo = make_planted_repo(git_repo)
    write(repo, {"new.py": "x = 1\n"})
    git(repo, "add", "new.py")
    no_key = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
    run = _run(repo, no_key, width, "hook", "--require-key", "new.py")
    assert run.returncode == 2
    assert run.stderr.count("SKIP=orch-review") == 1
    assert "orch-review: orch-review" not in run.stderr
    assert api.requests == []
    return run


def clean_tree(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    run = _run(make_planted_repo(git_repo), env, width)
    assert run.returncode == 0
    assert "nothing to review" in run.stderr and "nothing to compare" not in run.stderr
    assert api.requests == []
    return run


def plan_with_an_exact_count(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    run = _run(make_planted_repo(git_repo), env, width, "plan", "--all", "--count-tokens")
    assert run.returncode == 0, run.stderr
    [counted] = api.requests
    exact = sum(token_count(value) for value, _ in prompt_blocks(counted.body))
    assert f"pre-scout prompt: {exact:,} input tokens (count_tokens API)" in run.stdout
    assert "~" not in run.stdout
    return run


def chat_with_an_unknown_command(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    repo = make_planted_repo(git_repo)
    api.policy = planted_script()
    assert _run(repo, env, width, "--all", "--no-progress").returncode == 1
    before = len(api.message_requests)
    run = _run(repo, env, width, "chat", stdin="/bogus\n/quit\n")
    assert run.returncode == 0, run.stderr
    assert "unknown command /bogus" in run.stdout
    assert len(api.message_requests) == before  # nothing was sent to the model
    return run


def path_matching_nothing(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    run = _run(make_planted_repo(git_repo), env, width, "--all", "apps.py")
    assert run.returncode == 2
    assert "`apps.py` matches no file" in run.stderr
    return run


def new_repository_with_untracked_files(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    repo = git_repo({"a.py": "a = 1\n"}, commit=False)
    run = _run(repo, env, width)
    assert run.returncode == 0
    assert "--all" not in run.stderr  # --all would fail too: nothing is tracked
    return run


def incomplete_review(
    api: FakeMessagesAPI, env: dict[str, str], git_repo: GitRepoFactory, width: int
) -> Run:
    repo = make_planted_repo(git_repo)
    api.policy = planted_script()
    api.add_fault("status", status=500, times=None, match=_calc_subagent)
    run = _run(repo, {**env, "ORCH_REVIEW_MAX_RETRIES": "0"}, width, "--all", "--no-progress")
    assert run.returncode == 3, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].startswith("INCOMPLETE: ")
    assert any(line.startswith("NOT COVERED 2 files — ") for line in lines)
    assert any(line.startswith("UNFINISHED 2 concerns — ") for line in lines)
    return run


SITUATIONS: dict[str, Situation] = {
    "one-refuted-finding": one_refuted_finding,
    "hook-require-key-without-a-key": hook_requires_a_key,
    "clean-tree": clean_tree,
    "plan-count-tokens": plan_with_an_exact_count,
    "chat-unknown-command": chat_with_an_unknown_command,
    "path-matching-nothing": path_matching_nothing,
    "new-repository-untracked-files": new_repository_with_untracked_files,
    "incomplete-review": incomplete_review,
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(SITUATIONS))
def test_wording_matches_golden_and_fits_the_width(
    name: str,
    width: int,
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    run = SITUATIONS[name](fake_api, api_env, git_repo, width)
    _check(name, run, width, tmp_path)


def test_the_width_check_catches_a_long_line_orch_review_wrote() -> None:
    quoted = "   fix: " + planted_script().concerns[0].suggestion + " " * 80
    assert too_wide(quoted, 80) == []
    ours = "Not shown: " + "1 finding refuted by verifiers, " * 3
    assert too_wide(ours, 80) == [ours]


def test_normalise_masks_only_what_varies(tmp_path: Path) -> None:
    raw = (
        f"scope: all tracked files (main at 0123456789ab) in {tmp_path}/repo\n"
        "role      agents  requests  input  cache read  output     cost\n"
        "main           1         3  1,443       2,516     103  $0.0057\n"
        "wall time 4.0s · model claude-opus-5-5\n"
        "3 of 3 files covered.\n"
    )
    assert normalise(raw, tmp_path) == (
        "scope: all tracked files (main at <sha>) in <tmp>/repo\n"
        "role agents requests input cache read output cost\n"
        "main agents=1 requests=3 <tokens>\n"
        "wall time <s> · model claude-opus-5-5\n"
        "3 of 3 files covered.\n"
    )
