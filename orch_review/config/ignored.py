"""Configuration that is ignored, said out loud: a configuration file in a subdirectory,
which nothing reads. (An ``ORCH_REVIEW_*`` variable that sets nothing and a
``[tool.orch-review]`` table that lost to ``.orch-review.toml`` are found while the
configuration is read: ``config/settings.py``.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

from orch_review.config.settings import FILE_NAME, check_table, root_relative
from orch_review.errors import ConfigError


def nested_table(path: str, content: bytes, read: Path | None, root: Path) -> str | None:
    """A warning when ``content``, the file at repository path ``path`` (in a subdirectory:
    not the one read), holds orch-review settings; None when it holds none."""
    try:
        data = tomllib.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    dedicated = path.rpartition("/")[2] == FILE_NAME
    table: object = data
    if not dedicated:
        tool = data.get("tool")
        table = tool.get("orch-review") if isinstance(tool, dict) else None
        if table is None:
            return None
    heading = "" if dedicated else " [tool.orch-review]"
    bad = ""
    if isinstance(table, dict):
        try:
            check_table(table, f"`{path}`{heading}")
        except ConfigError as exc:
            bad = f"; it has a mistake too: {exc}"
    used = f"`{root_relative(read, root)}`" if read is not None else "none"
    return (
        f"`{path}`{heading} is ignored: only the configuration at the repository's top is "
        f"read (here: {used}); move the settings there, or pass --config {path}{bad}."
    )
