"""The picture on the front page: a real review's terminal report, exported by rich as SVG.

Usage: python -m bench.readme_svg [--out docs/assets/review.svg] [--check]

A real review (``orch_review.review``, the library front door the CLI calls) of a small
repository with a planted SQL injection and a division that is guarded, against the fake
Messages API (tests/fakes/messages_api.py) playing the scripted model of tests/scripted.py:
one finding confirmed, one refuted. The report is printed as a colour terminal of fixed width
shows it (``Console(record=True)``) and saved with rich's own ``export_svg``.

The picture stops before the usage table and the wall-time line: against the fake API its
token counts are a simulation and its wall time differs on every run, so they would neither
be true figures nor reproducible. Everything shown is the same on every run, which
tests/docs/test_readme_svg.py checks against the committed file.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from orch_review import ReviewOptions, review
from orch_review.reporters import terminal
from tests.fakes.messages_api import FakeMessagesAPI
from tests.scripted import PLANTED_FILES, planted_script

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "assets" / "review.svg"
WIDTH = 100
TITLE = "orch-review --base origin/main"
IDENTITY = {
    "GIT_AUTHOR_NAME": "orch-review",
    "GIT_AUTHOR_EMAIL": "dev@orch-review.invalid",
    "GIT_COMMITTER_NAME": "orch-review",
    "GIT_COMMITTER_EMAIL": "dev@orch-review.invalid",
    "GIT_AUTHOR_DATE": "2026-12-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-12-01T00:00:00Z",
}


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, **IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def make_repo(repo: Path) -> None:
    """``main`` with a README; ``feature`` adds the planted files, committed."""
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# demo\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial commit")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    _git(repo, "checkout", "-q", "-b", "feature")
    for name, text in PLANTED_FILES.items():
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "find users; a ratio")


def render_svg() -> str:
    """Run the review and return the SVG of its terminal report."""
    with tempfile.TemporaryDirectory(prefix="orch-review-svg-") as tmp:
        folder = Path(tmp)
        repo = folder / "demo"
        make_repo(repo)
        home = folder / "home"
        home.mkdir()
        with FakeMessagesAPI(planted_script()) as api:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(home),
                "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_CACHE_HOME": str(home / ".cache"),
                "GIT_CONFIG_NOSYSTEM": "1",
                "ANTHROPIC_BASE_URL": api.base_url,
                "ANTHROPIC_API_KEY": "fake-key",
            }
            options = ReviewOptions(
                base="origin/main", settings={"journal": False, "critic": False, "prove": "off"}
            )
            report = review(repo, options, env=env)
            if api.policy_errors:
                raise RuntimeError(f"the scripted model failed: {api.policy_errors[0]}")
    console = Console(
        record=True,
        file=io.StringIO(),
        width=WIDTH,
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        highlight=False,
        emoji=False,
        markup=False,
    )
    style = terminal._Style(True, True, False, False, None)
    for renderable in terminal._renderables(report, style):
        if isinstance(renderable, Table):
            break  # the usage table: simulated tokens and a varying wall time follow
        console.print(renderable, soft_wrap=False, highlight=False)
    return console.export_svg(title=TITLE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if --out is stale")
    args = parser.parse_args()
    svg = render_svg()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != svg:
            print(f"{args.out} is stale: run python -m bench.readme_svg", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
