"""Git attributes of paths, as git assigns them."""

from __future__ import annotations

import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs

if TYPE_CHECKING:
    import git


def check_attributes(
    repo: git.Repo, paths: Collection[str], names: tuple[str, ...], rev: str | None
) -> dict[str, dict[str, str]]:
    """Path -> {attribute: value} for the ``names`` git assigns to ``paths`` ("set",
    "unset", "unspecified" or a value). With ``rev``, the ``.gitattributes`` files are those
    of the tree of ``rev`` and the working tree's are never read; else git's usual order
    (working tree, then index)."""
    found: dict[str, dict[str, str]] = {path: {} for path in paths}
    if not found:
        return found
    listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in found)
    with tempdirs.directory("attr") as tmp:
        env = {}
        command = ["git", "check-attr", "-z", "--stdin"]
        if rev is not None:
            # `check-attr --source` needs git 2.40; an index of the tree works everywhere.
            env["GIT_INDEX_FILE"] = str(Path(tmp, "index"))
            repo.git.execute(["git", "read-tree", rev], env=env)
            command.append("--cached")
        with tempfile.TemporaryFile() as stdin:
            stdin.write(listing)
            stdin.seek(0)
            out = repo.git.execute(
                [*command, *names], istream=stdin, env=env, stdout_as_string=False
            )
    assert isinstance(out, bytes)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        if path in found:
            found[path][name] = value
    return found
