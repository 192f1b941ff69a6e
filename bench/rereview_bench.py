"""What a re-review costs next to the first review of the same change.

Usage: python -m bench.rereview_bench [--files 40] [--json FILE]

A fresh repository whose branch adds ``--files`` small files (one holds a planted defect) is
reviewed three times by ``orch-review --base`` in a child process, with the journal on and the
completeness critic at its default (on for a change of more than 20 files), against the fake
Messages API served from this process. The scripted model words every subtask differently on
every run, so nothing is reused because the model repeated itself:

1. **first**: the first review;
2. **one-file push**: one file is edited and committed, and the change reviewed again;
3. **no change**: the same change reviewed once more;
4. **four-file push**: four more files are edited, a delta the main agent scouts (one to three
   files go to the sweep without it).

Requests are counted at the fake API; tokens and cost are the report's own (the engine's
price table for the fake API's token counts). The goals: a re-review after a one-file push
costs at most 15% of the first review, and a re-run with nothing changed sends at most one
request.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.coverage_bench import make_change
from bench.figures import Figure, write_figures
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.files_model import OneSubtaskPerFile

SHARE_TARGET = 0.15
NO_CHANGE_TARGET = 1
REVIEW = (sys.executable, "-m", "orch_review", "--no-progress")
WORDINGS = (
    "Review `{path}` for defects.",
    "Take a careful look at `{path}` and report anything wrong with it.",
    "Is there a bug in `{path}`? Check its error handling and arithmetic.",
)


def reworded(path: str, run: int) -> str:
    return WORDINGS[run % len(WORDINGS)].format(path=path)


class Model(OneSubtaskPerFile):
    """One subtask per changed file, worded anew each run; the critic proposes nothing.

    ``follows_prompt`` False: the main agent asks for every file of ``git diff --name-only``,
    whatever it was told (the worst case: reuse then rests on content alone). True: it asks
    for the files its first turn lists under ``<files>`` (on a re-review, the delta)."""

    follows_prompt: bool = False

    def __call__(self, request: ModelRequest) -> Reply:
        if request.has_tool("report_concerns"):
            return Reply.tool_use("report_concerns", {"concerns": []})
        if self.follows_prompt and request.role == "main" and request.assistant_turns == 1:
            listed = request.first_user_text.split("<files>")[1].split("</files>")[0]
            names = [line.split("\t")[0] for line in listed.strip().splitlines()]
            subtasks = [self.wording(name, self.run) for name in names]
            return Reply.tool_use("Workflow", {"subtasks": subtasks})
        return super().__call__(request)


@dataclass(frozen=True)
class Run:
    """One review's cost."""

    name: str
    requests: int
    tokens: int
    cost_usd: float
    covered: str
    exit_code: int
    by_role: str


def review(api: FakeMessagesAPI, repo: Path, base: str, name: str, run: int, follows: bool) -> Run:
    api.reset()
    model = Model(base=base, wording=reworded, run=run)
    model.follows_prompt = follows
    api.policy = model
    out = repo.parent / f"report-{run}.json"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))},
        "ANTHROPIC_BASE_URL": api.base_url,
        "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
        "ANTHROPIC_API_KEY": "bench",
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [*REVIEW, "--base", base, "--json", str(out)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if api.policy_errors:
        raise SystemExit(f"the scripted model failed: {api.policy_errors[0]}")
    if done.returncode not in (0, 1):
        raise SystemExit(f"the {name} review exited {done.returncode}:\n{done.stderr[-2000:]}")
    data = json.loads(out.read_text())
    total = data["usage"]["total"]
    tokens = sum(total[k] for k in total if k.endswith("_tokens"))
    coverage = data["coverage"]["changed_files"]
    return Run(
        name,
        len(api.message_requests),
        tokens,
        total["cost_usd"],
        f"{coverage['covered']}/{coverage['total']} ({coverage['reused']} reused)",
        done.returncode,
        ", ".join(
            f"{role} {u['requests']} / ${u['cost_usd']:.4f}"
            for role, u in sorted(data["usage"]["by_role"].items())
        ),
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _edit(repo: Path, files: list[Path], message: str) -> None:
    """Change each of ``files`` without planting a defect, and commit."""
    for edited in files:
        edited.write_text(edited.read_text().replace("x + 1", "x + 2"))
    _git(repo, "commit", "-q", "-am", message)


def scenario(api: FakeMessagesAPI, root: Path, files: int, follows: bool) -> list[Run]:
    """The first review, a re-review after a one-file push, a re-run with no change, and a
    re-review after a four-file push."""
    repo, base, planted = make_change(root, files)
    first = review(api, repo, base, "first", 0, follows)
    unplanted = [p for p in sorted(repo.glob("pkg/*/*.py")) if str(p) not in planted]
    _edit(repo, unplanted[:1], "edit one file")
    push = review(api, repo, base, "one-file push", 1, follows)
    same = review(api, repo, base, "no change", 2, follows)
    _edit(repo, unplanted[1:5], "edit four files")
    four = review(api, repo, base, "four-file push", 3, follows)
    return [first, push, same, four]


def print_table(title: str, runs: list[Run]) -> None:
    first = runs[0]
    print(f"## {title}\n")
    print(
        "| review | requests | tokens | cost | share of first (cost) | covered | exit "
        "| by role (requests / cost) |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---|")
    for run in runs:
        share = run.cost_usd / first.cost_usd if first.cost_usd else 0.0
        print(
            f"| {run.name} | {run.requests} | {run.tokens:,} | ${run.cost_usd:.4f} "
            f"| {share:.1%} | {run.covered} | {run.exit_code} | {run.by_role} |"
        )
    push, same, four = runs[1], runs[2], runs[3]
    print(
        f"\nOne-file push: {push.cost_usd / first.cost_usd:.1%} of the first review's cost, "
        f"{push.tokens / first.tokens:.1%} of its tokens, {push.requests / first.requests:.1%} "
        f"of its requests (target: at most {SHARE_TARGET:.0%}). No change: {same.requests} "
        f"request(s) (target: at most {NO_CHANGE_TARGET}). Four-file push (scouted by the "
        f"main agent): {four.cost_usd / first.cost_usd:.1%} of the first review's cost.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--json", type=Path, help="save the figures for bench/run_all")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeMessagesAPI(None) as api:
        (Path(tmp) / "a").mkdir()
        (Path(tmp) / "b").mkdir()
        follows = scenario(api, Path(tmp) / "a", args.files, True)
        ignores = scenario(api, Path(tmp) / "b", args.files, False)
    print(f"# Re-review cost: a change of {args.files} files\n")
    print_table("A main agent that scouts the files it is given", follows)
    print_table("A main agent that asks for every changed file again (worst case)", ignores)
    figures = []
    for label, runs in (("scouting the delta", follows), ("asking for every file", ignores)):
        first, push, same, _ = runs
        share = push.cost_usd / first.cost_usd
        token_share = push.tokens / first.tokens
        figures += [
            Figure(
                "re-review",
                f"one-file push, cost as a share of the first review ({label})",
                f"{share:.1%}",
                f"<= {SHARE_TARGET:.0%}",
                share <= SHARE_TARGET,
            ),
            Figure(
                "re-review",
                f"one-file push, tokens as a share of the first review ({label})",
                f"{token_share:.1%}",
                f"<= {SHARE_TARGET:.0%}",
                token_share <= SHARE_TARGET,
            ),
        ]
    same = follows[2]
    figures.append(
        Figure(
            "re-review",
            "re-run with nothing changed, requests",
            str(same.requests),
            f"<= {NO_CHANGE_TARGET}",
            same.requests <= NO_CHANGE_TARGET,
        )
    )
    write_figures(args.json, figures)


if __name__ == "__main__":
    main()
