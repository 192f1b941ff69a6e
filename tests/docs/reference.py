"""The generated references of the docs site, imported from the mkdocs hook that renders them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def hook() -> ModuleType:
    """docs/hooks/reference.py, the module `mkdocs build` runs."""
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(name: str) -> str:
    """The Markdown source of a docs page."""
    return (DOCS / name).read_text(encoding="utf-8")
