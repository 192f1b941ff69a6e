"""The pre-commit hook when there is nothing to review, and ``--version``.

Usage: python -m bench.hook_bench [--runs 10] [--json FILE]

Most commits in a hooked repository touch nothing orch-review reviews; the hook must then
get out of the way. Measured as fresh processes (median of ``--runs`` after a warm-up), the
way pre-commit starts it, with no API key: ``orch-review hook`` with nothing staged, with only
a lock file and a binary file staged, and ``orch-review --version``. Targets: 0.5 s and 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.figures import Figure, write_figures
from bench.startup_bench import command, timed

HOOK_TARGET_S = 0.5
VERSION_TARGET_S = 0.3
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=repo, check=True, env={**os.environ, **GIT_ENV}, capture_output=True
    )


def main(argv: list[str] | None = None) -> list[Figure]:
    """Time the three cases; print and return the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    figures = []
    with tempfile.TemporaryDirectory(prefix="orch-review-hook-bench-") as tmp:
        repo = Path(tmp)
        _git(repo, "init", "-q", "-b", "main")
        for n in range(200):
            (repo / f"src{n}.py").write_text(f"x = {n}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "base")
        cases: list[tuple[str, list[str]]] = [("nothing staged", [])]
        (repo / "poetry.lock").write_text("[[package]]\n")
        (repo / "logo.png").write_bytes(b"\x89PNG\0\0" * 100)
        cases.append(("lock file and binary staged", ["poetry.lock", "logo.png"]))
        for label, files in cases:
            if files:
                _git(repo, "add", *files)
            seconds, code = timed([*command(), "hook", *files], repo, args.runs)
            met = seconds <= HOOK_TARGET_S and code == 0
            print(f"hook, {label}: {seconds * 1000:.0f} ms (exit {code})")
            figures.append(
                Figure(
                    "hook",
                    f"hook, {label}",
                    f"{seconds * 1000:.0f} ms",
                    f"<= {HOOK_TARGET_S * 1000:.0f} ms, exit 0",
                    met,
                )
            )
        seconds, code = timed([*command(), "--version"], repo, args.runs)
        print(f"--version: {seconds * 1000:.0f} ms")
        figures.append(
            Figure(
                "hook",
                "orch-review --version",
                f"{seconds * 1000:.0f} ms",
                f"<= {VERSION_TARGET_S * 1000:.0f} ms",
                seconds <= VERSION_TARGET_S,
            )
        )
    write_figures(args.json, figures)
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
