"""The walkthrough of a change: one line per changed file (or group), and a Mermaid diagram
of the changed flow when the change spans several components.

The model writes it after the review, with orchestration mode off. It is unverified
description and hostile data: :func:`parse_walkthrough` keeps only what fits the expected
structure (paths that are changed files, one-line summaries of bounded length) and
:func:`parse_mermaid` accepts only a small subset of Mermaid (``flowchart``/``graph``, a
direction, nodes with plain-text labels, plain edges), which is then written out again
from the parsed structure, never passed through as the model wrote it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_ENTRIES = 25
MAX_PATHS_PER_ENTRY = 10
SUMMARY_LIMIT = 200
MAX_NODES = 15
MAX_EDGES = 30
LABEL_LIMIT = 60
MAX_ANSWER = 50_000

DIRECTIONS = frozenset({"TD", "TB", "BT", "LR", "RL"})
# Words Mermaid gives a meaning of their own (and ``end`` closes a subgraph).
_RESERVED = frozenset(
    {
        "end",
        "graph",
        "flowchart",
        "subgraph",
        "click",
        "style",
        "class",
        "classdef",
        "linkstyle",
        "direction",
        "call",
        "href",
    }
)
_ID = r"[A-Za-z][A-Za-z0-9_]{0,30}"
# Plain text only: no quote, bracket, pipe, markup, entity, mention or reference sigil.
_LABEL_TEXT = r"[A-Za-z0-9 _.,:/+=?!()'*-]"
_LABEL = re.compile(rf"{_LABEL_TEXT}{{1,{LABEL_LIMIT}}}")
_NODE = re.compile(rf"(?P<id>{_ID})(?:\[\"(?P<quoted>[^\"]*)\"\]|\[(?P<plain>[^\[\]\"|]*)\])?")
_ARROWS = ("-->", "---", "-.->", "==>")
_EDGE = re.compile(
    rf"^(?P<left>{_ID}(?:\[[^\]]*\])?)\s*(?P<arrow>-->|---|-\.->|==>)"
    rf"(?:\|(?P<label>[^|]*)\|)?\s*(?P<right>{_ID}(?:\[[^\]]*\])?)$"
)


class MermaidError(ValueError):
    """The text is not in the Mermaid subset orch-review emits."""


@dataclass(frozen=True, slots=True)
class Flowchart:
    """A parsed diagram: its direction, nodes (id -> label) and edges."""

    direction: str
    nodes: Mapping[str, str]
    edges: tuple[tuple[str, str, str, str], ...]  # (from, arrow, label, to)

    def render(self) -> str:
        """The canonical Mermaid text of this diagram."""
        lines = [f"flowchart {self.direction}"]
        lines += [f'  {node}["{label}"]' for node, label in self.nodes.items()]
        for left, arrow, label, right in self.edges:
            lines.append(
                f"  {left} {arrow}|{label}| {right}" if label else f"  {left} {arrow} {right}"
            )
        return "\n".join(lines)


def _label(text: str, where: str) -> str:
    text = " ".join(text.split())
    if not _LABEL.fullmatch(text):
        raise MermaidError(
            f"{where}: the label is not plain text of at most {LABEL_LIMIT} characters"
        )
    return text


def _node(text: str, nodes: dict[str, str]) -> str:
    match = _NODE.fullmatch(text.strip())
    if match is None:
        raise MermaidError(f"not a node: {text[:40]!r}")
    node = match.group("id")
    if node.lower() in _RESERVED:
        raise MermaidError(f"{node!r} is a Mermaid keyword, not a node id")
    label = match.group("quoted")
    if label is None:
        label = match.group("plain")
    if label is not None:
        label = _label(label, node)
        if nodes.get(node, label) != label:
            raise MermaidError(f"node {node!r} has two labels")
        nodes[node] = label
    else:
        nodes.setdefault(node, node)
    if len(nodes) > MAX_NODES:
        raise MermaidError(f"more than {MAX_NODES} nodes")
    return node


def parse_mermaid(text: str) -> Flowchart:
    """Parse ``text`` as a flowchart of the accepted subset; MermaidError otherwise."""
    lines = [raw.strip() for raw in text.replace("\r\n", "\n").split("\n")]
    lines = [raw.removesuffix(";").strip() for raw in lines if raw.strip()]
    if not lines:
        raise MermaidError("empty diagram")
    head = lines[0].split()
    if len(head) != 2 or head[0] not in ("flowchart", "graph") or head[1] not in DIRECTIONS:
        raise MermaidError("the diagram must start with `flowchart DIR` (TD, TB, BT, LR, RL)")
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str, str]] = []
    for raw in lines[1:]:
        edge = _EDGE.fullmatch(raw)
        if edge is not None:
            left = _node(edge.group("left"), nodes)
            right = _node(edge.group("right"), nodes)
            label = edge.group("label")
            label = _label(label, f"{left} -> {right}") if label and label.strip() else ""
            edges.append((left, edge.group("arrow"), label, right))
            if len(edges) > MAX_EDGES:
                raise MermaidError(f"more than {MAX_EDGES} edges")
            continue
        if any(arrow in raw for arrow in _ARROWS) or "--" in raw:
            raise MermaidError(f"not an edge of the accepted form: {raw[:40]!r}")
        _node(raw, nodes)
    if not edges:
        raise MermaidError("the diagram has no edge")
    return Flowchart(head[1], dict(nodes), tuple(edges))


@dataclass(frozen=True, slots=True)
class WalkthroughEntry:
    """One line of the walkthrough: changed files and what changed there."""

    paths: tuple[str, ...]
    summary: str


@dataclass(frozen=True, slots=True)
class Walkthrough:
    """The walkthrough, validated; ``diagram`` is canonical Mermaid text or None."""

    entries: tuple[WalkthroughEntry, ...]
    diagram: str | None = None


def components(paths: Collection[str]) -> set[str]:
    """The components ``paths`` touch: their directories (a top-level file is its own)."""
    return {path.rpartition("/")[0] or path for path in paths}


def _one_line(text: object) -> str:
    if not isinstance(text, str):
        return ""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= SUMMARY_LIMIT else flat[: SUMMARY_LIMIT - 1] + "…"


def _json_object(answer: str) -> Mapping[str, Any] | None:
    text = answer[:MAX_ANSWER]
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def parse_walkthrough(answer: str, changed: Sequence[str]) -> Walkthrough | None:
    """The walkthrough in the model's ``answer``, keeping only entries about ``changed``
    files, and the diagram only when it parses and the change spans several components;
    None when nothing usable is left."""
    data = _json_object(answer)
    if data is None:
        return None
    known = set(changed)
    entries: list[WalkthroughEntry] = []
    seen: set[str] = set()
    raw_files = data.get("files")
    for item in raw_files if isinstance(raw_files, list) else []:
        if len(entries) >= MAX_ENTRIES:
            break
        if not isinstance(item, dict):
            continue
        raw_paths = item.get("paths")
        if isinstance(raw_paths, str):
            raw_paths = [raw_paths]
        if not isinstance(raw_paths, list):
            continue
        paths = tuple(
            dict.fromkeys(
                p for p in raw_paths if isinstance(p, str) and p in known and p not in seen
            )
        )[:MAX_PATHS_PER_ENTRY]
        summary = _one_line(item.get("summary"))
        if paths and summary:
            seen.update(paths)
            entries.append(WalkthroughEntry(paths, summary))
    if not entries:
        return None
    diagram: str | None = None
    raw = data.get("diagram")
    if isinstance(raw, str) and raw.strip() and len(components(known)) > 1:
        try:
            diagram = parse_mermaid(raw[:5000]).render()
        except MermaidError:
            diagram = None
    return Walkthrough(tuple(entries), diagram)
