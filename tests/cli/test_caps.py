"""Caps that hold, and a capped review that buys verified coverage, through the real CLI.

A change of many small files, a model that asks for one subtask per file, and many request
slots: the cost and token caps end within the cap plus one request per slot, the spend ends
mostly in verified coverage, and a cap touched once every file was covered is no exit 3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.files_model import MARKER, OneSubtaskPerFile
from tests.helpers import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("caps-change")]

FILES = 60
BUGS = (7, 31, 52)
SLOTS = 20


def _path(number: int) -> str:
    return f"pkg/m{number // 20}/f{number:02d}.py"


def _content(number: int) -> str:
    body = f"    return x / 0  # {MARKER}\n" if number in BUGS else "    return x + 1\n"
    return f"def f{number}(x: int) -> float:\n{body}"


@pytest.fixture(scope="module")
def change(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose branch `feature` adds 60 small files (built once, cloned)."""
    repo = tmp_path_factory.mktemp("caps") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"README.md": "# demo\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial commit")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {_path(n): _content(n) for n in range(FILES)})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add many files")
    return repo


def _review(
    change: Path,
    tmp_path: Path,
    fake_api: FakeMessagesAPI,
    env: dict[str, str],
    *flags: str,
    capped_sweep: str = "false",
) -> tuple[int, dict[str, Any], str]:
    """One review of the change; by default the main agent plans it under any cap (the
    caps are held on its fan-out), with ``capped_sweep="true"`` the sweep alone when the cap
    is below the estimate's high end."""
    fake_api.reset()
    tmp_path = tmp_path / ("run-b" if flags else "run-a")  # paths of one length
    tmp_path.mkdir()
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(change), str(repo))
    git(repo, "branch", "-q", "main", "origin/main")
    fake_api.policy = OneSubtaskPerFile(base=git(repo, "rev-parse", "main").strip())
    out = tmp_path / "report.json"
    result = run_cli(
        repo,
        {**env, "ORCH_REVIEW_CAPPED_SWEEP": capped_sweep},
        "--base",
        "main",
        "--no-progress",
        "--max-concurrent",
        str(SLOTS),
        "--json",
        str(out),
        *flags,
        timeout=600,
    )
    assert result.returncode in (0, 1, 3), result.stdout[-3000:] + result.stderr[-3000:]
    return result.returncode, json.loads(out.read_text()), result.stdout


def _per_request(report: dict[str, Any]) -> tuple[float, float]:
    """Twice the mean cost and tokens of one request of ``report``'s review: the bound
    on what one request adds (the scripted model's requests are all of a size)."""
    total = report["usage"]["total"]
    return 2 * total["cost_usd"] / total["requests"], 2 * total["total_tokens"] / total["requests"]


def test_the_cost_cap_holds_within_one_request_per_slot(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], change: Path, tmp_path: Path
) -> None:
    _, full, _ = _review(change, tmp_path, fake_api, api_env)
    cost, _ = _per_request(full)
    cap = round(full["usage"]["total"]["cost_usd"] * 0.3, 4)

    code, data, stdout = _review(change, tmp_path, fake_api, api_env, "--max-cost-usd", str(cap))

    spent = data["usage"]["total"]["cost_usd"]
    # Admission stops short of the cap when the next concern and its verifier would not fit.
    assert spent <= cap + SLOTS * cost, (cap, spent, cost)
    assert code == 3 and data["usage"]["cap_reached"].startswith("cost cap reached ($")
    assert "cost cap reached" in stdout


def test_the_token_cap_holds_within_one_request_per_slot(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], change: Path, tmp_path: Path
) -> None:
    _, full, _ = _review(change, tmp_path, fake_api, api_env)
    _, tokens = _per_request(full)
    cap = int(full["usage"]["total"]["total_tokens"] * 0.3)

    code, data, _ = _review(change, tmp_path, fake_api, api_env, "--max-total-tokens", str(cap))

    spent = data["usage"]["total"]["total_tokens"]
    assert spent <= cap + SLOTS * tokens, (cap, spent, tokens)
    assert code == 3 and data["usage"]["cap_reached"] == f"token cap reached ({cap:,} tokens)"


def test_a_capped_review_spends_on_verified_coverage_and_says_so(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], change: Path, tmp_path: Path
) -> None:
    _, full, _ = _review(change, tmp_path, fake_api, api_env)
    assert full["usage"]["verified_share"] >= 0.8
    cap = round(full["usage"]["total"]["cost_usd"] * 0.5, 4)

    code, data, stdout = _review(change, tmp_path, fake_api, api_env, "--max-cost-usd", str(cap))

    assert code == 3
    files = data["coverage"]["files"]
    covered = [f for f in files if f["status"] == "covered"]
    assert len(files) == FILES and 0 < len(covered) < FILES
    share = data["usage"]["verified_share"]
    assert share >= 0.8, data["usage"]
    verified = data["usage"]["verified_cost_usd"]
    fan_out = sum(data["usage"]["by_role"][r]["cost_usd"] for r in ("subagent", "verifier"))
    assert verified == pytest.approx(share * fan_out, rel=1e-3)
    assert f"{share:.0%} of the spend ended in verified coverage" in stdout
    # The verifiers ran: what the subagents found is verified, not left hanging.
    concerns = [c for c in data["concerns"] if c["status"] == "reviewed"]
    assert concerns and sum(c["covered"] for c in concerns) >= 0.8 * len(concerns)


def test_a_cap_touched_once_every_file_is_covered_is_not_exit_3(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], change: Path, tmp_path: Path
) -> None:
    _, full, _ = _review(change, tmp_path, fake_api, api_env)
    main = full["usage"]["by_role"]["main"]
    assert main["requests"] == 3
    # The main agent's last turn (its summary) comes after every file is covered: a token
    # cap inside a quarter of what that turn adds is touched by it alone (admission keeps a
    # verifier free below the cap, which the rest of that turn leaves room for).
    cap = full["usage"]["total"]["total_tokens"] - _last_main_tokens(fake_api) // 4

    code, data, stdout = _review(
        change, tmp_path, fake_api, api_env, "--max-total-tokens", str(cap)
    )

    assert data["usage"]["cap_reached"] == f"token cap reached ({cap:,} tokens)"
    assert all(f["status"] == "covered" for f in data["coverage"]["files"])
    assert data["incomplete"] is False
    assert code == 1, stdout[-2000:]  # the planted bugs, confirmed
    assert "INCOMPLETE" not in stdout
    assert "token cap reached" in stdout  # noted, not an exit 3


def _last_main_tokens(fake_api: FakeMessagesAPI) -> int:
    """The input tokens of the main agent's last request of the review just run."""
    from tests.fakes.wire import prompt_blocks, token_count

    body = fake_api.requests_for("main")[-1].body
    prompt = sum(token_count(value) for value, _ in prompt_blocks(body))
    return prompt


def test_a_cap_below_the_estimates_high_end_plans_cheaply_and_covers_every_file(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], change: Path, tmp_path: Path
) -> None:
    _, full, _ = _review(change, tmp_path, fake_api, api_env)
    # Half the main agent's review: well below the estimate's high end.
    cap = round(full["usage"]["total"]["cost_usd"] / 2, 4)

    code, data, stdout = _review(
        change, tmp_path, fake_api, api_env, "--max-cost-usd", str(cap), capped_sweep="true"
    )

    # No main agent: the sweep's groups covered every file, and the bugs were confirmed.
    assert fake_api.requests_for("main") == []
    assert data["summary"].startswith("Planned without the main agent: the cost cap ($")
    assert [f["status"] for f in data["coverage"]["files"]] == ["covered"] * FILES
    assert data["incomplete"] is False and code == 1, stdout[-2000:]
    confirmed = {f["path"] for f in data["findings"] if f["status"] == "confirmed"}
    assert confirmed == {_path(n) for n in BUGS}
    assert data["usage"]["total"]["cost_usd"] <= cap
