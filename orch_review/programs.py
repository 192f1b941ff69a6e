"""The programs orch-review runs, checked before they are needed: a slim or Alpine image
without git or bash gets one sentence naming the package to install, not a crash."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from orch_review.errors import MissingProgram

#: Program -> what it is needed for, for the message.
NEEDED = {
    "git": "orch-review reads the repository with git",
    "bash": "the review agents run their commands in bash",
}


def require(program: str, search_path: str | None = None) -> None:
    """MissingProgram naming what to install when ``program`` is not on ``search_path``
    (the process's PATH when None)."""
    if shutil.which(program, path=search_path) is not None:
        return
    raise MissingProgram(
        f"{program} is not installed or not on PATH ({NEEDED[program]}): install it "
        f"(Debian/Ubuntu: `apt-get install {program}`; Alpine: `apk add {program}`; "
        f"Fedora: `dnf install {program}`) and try again."
    )


def require_git(env: Mapping[str, str] | None = None) -> None:
    """:func:`require` for git, unless ``GIT_PYTHON_GIT_EXECUTABLE`` names git itself."""
    named = (os.environ if env is None else env).get("GIT_PYTHON_GIT_EXECUTABLE")
    if named and os.access(named, os.X_OK):
        return
    require("git")
