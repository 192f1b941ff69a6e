"""Configuration that is ignored, said out loud: an ``ORCH_REVIEW_*`` variable that sets
nothing (a typo), a ``[tool.orch-review]`` table that lost to ``.orch-review.toml``, and a
configuration file in a subdirectory, which nothing reads."""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from pathlib import Path

from orch_review.config.settings import (
    ENV_PREFIX,
    FILE_NAME,
    OTHER_VARIABLES,
    check_table,
    known_variables,
    parse_toml,
    shown_path,
)
from orch_review.errors import ConfigError


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """A warning for each ``ORCH_REVIEW_*`` variable that is no setting, with the closest
    known name."""
    known = known_variables()
    warnings = []
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or name in OTHER_VARIABLES or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        warnings.append(f"environment variable {name} is not a setting and is ignored{hint}.")
    return warnings


def losing_table(root: Path, source: Path | None) -> list[str]:
    """A warning when ``pyproject.toml`` at ``root`` has a ``[tool.orch-review]`` table that
    is not read because another file was."""
    pyproject = root / "pyproject.toml"
    if source is None or source == pyproject or not pyproject.is_file():
        return []
    try:
        tool = parse_toml(pyproject, root).get("tool")
    except ConfigError:
        return []
    if not isinstance(tool, dict) or "orch-review" not in tool:
        return []
    return [
        "pyproject.toml has a [tool.orch-review] table, which is ignored: "
        f"`{shown_path(source, root)}` is read instead; keep the settings in one file."
    ]


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
    used = f"`{shown_path(read, root)}`" if read is not None else "none"
    return (
        f"`{path}`{heading} is ignored: only the configuration at the repository's top is "
        f"read (here: {used}); move the settings there, or pass --config {path}{bad}."
    )
