"""Re-reviews reuse earlier work by content, whatever words the model chooses."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.files_model import MARKER, OneSubtaskPerFile
from tests.helpers import run_cli
from tests.scripted import subtask_text

FILES = 40
BUG = 5
EDITED = 12


def _path(number: int) -> str:
    return f"src/part{number // 10}/mod{number:02d}.py"


def _content(number: int, step: int = 1) -> str:
    body = f"    return x / 0  # {MARKER}\n" if number == BUG else f"    return x + {step}\n"
    return f"def f{number}(x: int) -> float:\n{body}"


WORDINGS = (
    "Review `{path}` for defects.",
    "Take a careful look at `{path}` and report anything wrong with it.",
    "Is there a bug in `{path}`? Check its error handling and arithmetic.",
)


def reworded(path: str, run: int) -> str:
    """A different wording of the same per-file subtask on every run."""
    return WORDINGS[run % len(WORDINGS)].format(path=path)


def test_a_re_review_after_editing_one_file_pays_only_for_that_file(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({"README.md": "# demo\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {_path(n): _content(n) for n in range(FILES)})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "forty files")
    base = git(repo, "rev-parse", "main").strip()
    first = OneSubtaskPerFile(base=base, wording=reworded, run=0)
    fake_api.policy = first

    result = run_cli(repo, api_env, "--base", "main")

    assert result.returncode == 1, result.stdout + result.stderr
    first_bytes = _tokens(fake_api)
    # 40 small subtasks, packed into as many agents as run at once.
    assert len(first.subagent_tasks) == 10
    assert sum(subtask_text(t).count("`src/") for t in first.subagent_tasks) == FILES
    assert f"{FILES} of {FILES} changed files covered." in result.stdout

    write(repo, {_path(EDITED): _content(EDITED, step=2)})
    git(repo, "commit", "-q", "-am", "edit one file")
    fake_api.reset()
    second = OneSubtaskPerFile(base=base, wording=reworded, run=1)
    fake_api.policy = second
    out = tmp_path / "again.json"

    again = run_cli(repo, api_env, "--base", "main", "--json", str(out))

    assert again.returncode == 1, again.stdout + again.stderr
    # One file is too small a delta to scout again: the sweep reviews it, alone.
    assert fake_api.requests_for("main") == []
    (task,) = second.subagent_tasks
    assert "Sweep review of 1 changed file" in task and _path(EDITED) in task
    assert _path(BUG) not in task
    assert len(fake_api.requests_for("subagent")) == 2  # one concern: bash, then its report
    assert f"{FILES} of {FILES} changed files covered ({FILES - 1} reused" in again.stdout
    assert f"{_path(BUG)}:2" in again.stdout  # the earlier finding is carried over
    assert _tokens(fake_api) <= 0.1 * first_bytes, (_tokens(fake_api), first_bytes)
    assert len(fake_api.message_requests) == 2  # nothing found: no verifier
    data = json.loads(out.read_text())
    assert data["summary"].startswith("A re-review of 1 file changed since an earlier")
    statuses = {f["path"]: f["status"] for f in data["coverage"]["files"]}
    assert statuses.pop(_path(EDITED)) == "covered"
    assert set(statuses.values()) == {"reused"}
    assert data["coverage"]["changed_files"]["reused"] == FILES - 1
    assert data["incomplete"] is False

    # Worded a third way, nothing changed: no subagent runs at all.
    fake_api.reset()
    third = OneSubtaskPerFile(base=base, wording=reworded, run=2)
    fake_api.policy = third
    assert run_cli(repo, api_env, "--base", "main").returncode == 1
    assert fake_api.requests_for("subagent") == [] and third.subagent_tasks == []


def test_the_same_subtask_about_an_edited_file_is_reviewed_again(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    """Worded the same every run: only the files' content tells the runs apart. Four of five
    files are edited, a delta the main agent scouts again."""
    repo = git_repo({"README.md": "# demo\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {_path(n): _content(n + 10) for n in range(5)})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "five files")
    base = git(repo, "rev-parse", "main").strip()
    fake_api.policy = OneSubtaskPerFile(base=base)

    assert run_cli(repo, api_env, "--base", "main").returncode == 0

    write(repo, {_path(1): f"def f1(x: int) -> float:\n    return x / 0  # {MARKER}\n"})
    write(repo, {_path(n): _content(n + 10, step=2) for n in (2, 3, 4)})
    git(repo, "commit", "-q", "-am", "a defect in one file, three more edited")
    fake_api.reset()
    second = OneSubtaskPerFile(base=base)
    fake_api.policy = second

    again = run_cli(repo, api_env, "--base", "main")

    assert again.returncode == 1, again.stdout + again.stderr
    assert len(second.subagent_tasks) == 4  # one subagent per edited file; _path(0) is reused
    assert not any(_path(0) in t for t in second.subagent_tasks)
    assert any(
        f"<subtask>\nReview `{_path(1)}` for defects.\n</subtask>" in t
        for t in second.subagent_tasks
    )
    assert f"{_path(1)}:2" in again.stdout
    assert "5 of 5 changed files covered (1 reused" in again.stdout


class WithCritic(OneSubtaskPerFile):
    """The per-file model, answering the completeness critic too: it proposes nothing."""

    def __call__(self, request: ModelRequest) -> Reply:
        if request.has_tool("report_concerns"):
            return Reply.tool_use("report_concerns", {"concerns": []})
        return super().__call__(request)


def _forty_files(git_repo: GitRepoFactory) -> tuple[Path, str]:
    repo = git_repo({"README.md": "# demo\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {_path(n): _content(n) for n in range(FILES)})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "forty files")
    return repo, git(repo, "rev-parse", "main").strip()


def _tokens(api: FakeMessagesAPI) -> int:
    """What the requests received so far cost in input tokens, as the fake API counts them."""
    return sum(len(json.dumps(r.body)) for r in api.message_requests)


def test_a_re_review_scouts_only_the_delta_and_skips_the_critic_on_a_small_one(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    """40 changed files call for the critic by default; a four-file push does not, and is
    scouted by the main agent (one to three files go to the sweep alone)."""
    env = {k: v for k, v in api_env.items() if k != "ORCH_REVIEW_CRITIC"}
    repo, base = _forty_files(git_repo)
    fake_api.policy = WithCritic(base=base, wording=reworded, run=0)

    assert run_cli(repo, env, "--base", "main").returncode == 1
    first_requests, first_bytes = len(fake_api.message_requests), _tokens(fake_api)
    assert len(fake_api.requests_for("other")) == 1  # the critic proposed nothing

    edited = (EDITED, EDITED + 1, 30, 31)
    write(repo, {_path(n): _content(n, step=2) for n in edited})
    git(repo, "commit", "-q", "-am", "edit four files")
    fake_api.reset()
    fake_api.policy = WithCritic(base=base, wording=reworded, run=1)

    again = run_cli(repo, env, "--base", "main")

    assert again.returncode == 1, again.stdout + again.stderr
    assert f"{FILES} of {FILES} changed files covered ({FILES - 4} reused" in again.stdout
    assert fake_api.requests_for("other") == []  # a four-file delta is small: no critic
    task = fake_api.requests_for("main")[0].model_request().first_user_text
    to_scout = task.split("<files>")[1].split("</files>")[0]
    listed = [line.split()[0] for line in to_scout.strip().splitlines()]
    assert sorted(listed) == sorted(_path(n) for n in edited) and _path(BUG) not in to_scout
    assert "reviewable files: 4 " in task  # the delta, not the whole change
    covered = task.split("<already_covered>")[1].split("</already_covered>")[0].split()
    assert sorted(covered) == sorted(_path(n) for n in range(FILES) if n not in edited)
    assert "1 finding carried over" in task  # the reused verified result is stated
    requests, sent = len(fake_api.message_requests), _tokens(fake_api)
    # The main agent's three turns, and a subagent's two requests per edited file (nothing
    # found: no verifier); the first review's 40 small subtasks ran in 10 packed agents.
    assert requests == 3 + 4 * 2, (requests, first_requests)
    assert sent <= 0.5 * first_bytes, (sent, first_bytes)  # 4 of 40 files, and the scouting


def test_a_re_run_with_nothing_changed_sends_no_request(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo, base = _forty_files(git_repo)
    fake_api.policy = OneSubtaskPerFile(base=base, wording=reworded, run=0, summary="All read.")
    first = run_cli(repo, api_env, "--base", "main")
    assert first.returncode == 1, first.stdout + first.stderr
    fake_api.reset()
    fake_api.policy = OneSubtaskPerFile(base=base, wording=reworded, run=1)
    out = tmp_path / "again.json"

    again = run_cli(repo, api_env, "--base", "main", "--json", str(out))

    assert again.returncode == 1, again.stdout + again.stderr
    assert fake_api.message_requests == []
    assert f"{FILES} of {FILES} changed files covered ({FILES} reused" in again.stdout
    assert f"{_path(BUG)}:2" in again.stdout  # the finding is carried over
    data = json.loads(out.read_text())
    assert data["summary"] == "All read."  # the summary of the review whose inputs these are
    assert data["incomplete"] is False
    assert data["usage"]["total"]["requests"] == 0


def test_reused_coverage_counts_only_for_unchanged_content(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    """The edited file is not covered by the earlier review: when nothing can review it, the
    review is incomplete and names it, although every other file is reused."""
    repo, base = _forty_files(git_repo)
    fake_api.policy = OneSubtaskPerFile(base=base, wording=reworded, run=0)
    assert run_cli(repo, api_env, "--base", "main").returncode == 1
    write(repo, {_path(EDITED): _content(EDITED, step=2)})
    git(repo, "commit", "-q", "-am", "edit one file")
    fake_api.reset()
    fake_api.policy = OneSubtaskPerFile(base=base, wording=reworded, run=1)
    fake_api.add_fault("status", times=None, status=500, match=lambda r: r.role == "subagent")
    out = tmp_path / "again.json"
    env = {**api_env, "ORCH_REVIEW_MAX_RETRIES": "0"}

    again = run_cli(repo, env, "--base", "main", "--json", str(out))

    assert again.returncode == 3, again.stdout + again.stderr
    assert _path(EDITED) in again.stdout
    statuses = {f["path"]: f["status"] for f in json.loads(out.read_text())["coverage"]["files"]}
    assert statuses.pop(_path(EDITED)) not in ("covered", "reused")
    assert set(statuses.values()) == {"reused"}
