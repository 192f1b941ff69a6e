"""The languages orch-review can prove findings in, told by a file's suffix."""

from __future__ import annotations

_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
}
#: The suffixes a test file of each language may have.
TEST_SUFFIXES = {"python": (".py",), "javascript": (".js", ".mjs", ".cjs")}


def language_of(path: str) -> str | None:
    """The language of a file proofs know (``python``, ``javascript``), by its suffix."""
    dot = path.rfind(".")
    return None if dot < 0 else _LANGUAGES.get(path[dot:].lower())
