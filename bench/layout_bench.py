"""The package's layout as it stands: circles between its layers, and how far each is from
the floors the layout test will enforce.

Usage: python -m bench.layout_bench [--json FILE]

A layer is a top-level package or module of ``orch_review`` (``scope``, ``config``,
``engine``, ``core``, ...). Printed: the groups of layers that import each other in a
circle, counting imports made when a module loads and, apart, imports anywhere (inside
functions too); imports from a floor above the importer's own (the floors are
tests/test_layout.py's ``FLOORS``); leaves importing the package; the imports from one host
adapter into another; what ``scope`` takes from ``config`` and ``findings``; and the largest
folder. Targets: 0 for each count and at most 24 modules. tests/test_layout.py enforces
what already holds; these are the rest.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.figures import Figure, write_figures
from tests.test_layout import (
    FLOORS,
    LEAVES,
    MODULES,
    PACKAGE,
    adapter_of,
    circles,
    imports,
    package_graph,
)

MAX_FOLDER = 24


def _edges(source: str, targets: tuple[str, ...]) -> list[str]:
    """``module -> module`` for each import from layer ``source`` into one of ``targets``."""
    return sorted(
        f"{module} -> {target}"
        for module, tree in MODULES.items()
        if module.split(".")[1:2] == [source]
        for target in imports(module, tree, top_level_only=False)
        if target.split(".")[1:2] and target.split(".")[1] in targets
    )


def _floor(layer: str) -> int | None:
    return next((i for i, floor in enumerate(FLOORS) if layer in floor), None)


def _upward() -> list[str]:
    """``module -> module`` for each import from a floor above the importer's, and for each
    import by or of a layer that stands on no floor."""
    found = []
    for module, tree in MODULES.items():
        layer = module.split(".")[1] if "." in module else ""
        for target in imports(module, tree, top_level_only=False):
            other = target.split(".")[1] if "." in target else ""
            if not layer or not other or layer == other:
                continue
            low, high = _floor(other), _floor(layer)
            if low is None or high is None or low > high:
                found.append(f"{module} -> {target}")
    return sorted(found)


def _count(label: str, edges: list[str]) -> Figure:
    print(f"{label}: {len(edges)}")
    for edge in edges:
        print(f"  {edge}")
    return Figure("layout", label, str(len(edges)), "0", not edges)


def _folders() -> dict[str, int]:
    """Modules (``__init__`` included) directly in each package folder."""
    counts: dict[str, int] = {}
    for module in MODULES:
        parts = module.split(".")
        is_package = (PACKAGE.parent.joinpath(*parts) / "__init__.py").exists()
        folder = module if is_package else ".".join(parts[:-1])
        counts[folder] = counts.get(folder, 0) + 1
    return counts


def figures() -> list[Figure]:
    """Measure the layout; print it and return the figures."""
    found: list[Figure] = []
    for label, top_level_only in (("when a module loads", True), ("anywhere", False)):
        groups = circles(package_graph(top_level_only=top_level_only))
        shown = "; ".join(" <-> ".join(group) for group in groups) or "none"
        print(f"circles between layers, imports {label}: {len(groups)} ({shown})")
        found.append(
            Figure(
                "layout",
                f"circles between layers, imports {label}",
                str(len(groups)),
                "0",
                not groups,
            )
        )
    found.append(_count("imports from a floor above", _upward()))
    leaves = sorted(
        f"{module} -> {target}"
        for module, tree in MODULES.items()
        if module.split(".")[1:2] and module.split(".")[1] in LEAVES
        for target in imports(module, tree, top_level_only=False)
        if target not in ("orch_review", "orch_review.errors")
    )
    found.append(_count("leaves importing the package (errors aside)", leaves))
    adapters = sorted(
        f"{module} -> {target}"
        for module, tree in MODULES.items()
        if adapter_of(module)
        for target in imports(module, tree, top_level_only=False)
        if adapter_of(target) and adapter_of(target) != adapter_of(module)
    )
    print(f"adapter-to-adapter imports: {len(adapters)}")
    for edge in adapters:
        print(f"  {edge}")
    found.append(
        Figure("layout", "adapter-to-adapter imports", str(len(adapters)), "0", not adapters)
    )
    upward = _edges("scope", ("config", "findings"))
    print(f"scope importing config or findings: {len(upward)}")
    for edge in upward:
        print(f"  {edge}")
    found.append(
        Figure("layout", "scope importing config or findings", str(len(upward)), "0", not upward)
    )
    folder, size = max(_folders().items(), key=lambda item: item[1])
    print(f"largest folder: {folder}, {size} modules")
    found.append(
        Figure(
            "layout",
            f"largest folder ({folder})",
            f"{size} modules",
            f"<= {MAX_FOLDER}",
            size <= MAX_FOLDER,
        )
    )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description="The package's layout as it stands.")
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    args = parser.parse_args()
    write_figures(args.json, figures())


if __name__ == "__main__":
    main()
