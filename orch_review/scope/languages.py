"""The languages orch-review can prove findings in, told by a file's suffix."""

from __future__ import annotations

_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
}
_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
#: The suffixes a test file of each runner may have (vitest's and jest's default patterns).
TEST_SUFFIXES = {
    "pytest": (".py",),
    "unittest": (".py",),
    "node": (".js", ".mjs", ".cjs"),
    "vitest": tuple(f".{kind}{ext}" for kind in ("test", "spec") for ext in _SCRIPT_SUFFIXES),
    "jest": tuple(f".{kind}{ext}" for kind in ("test", "spec") for ext in _SCRIPT_SUFFIXES),
    "go": ("_test.go",),
}


def language_of(path: str) -> str | None:
    """The language of a file proofs know (``python``, ``javascript``, ``typescript``,
    ``go``), by its suffix."""
    dot = path.rfind(".")
    return None if dot < 0 else _LANGUAGES.get(path[dot:].lower())
