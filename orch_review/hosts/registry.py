"""The hosts orch-review knows, by name: the command line picks an adapter here.

Adapters are imported when asked for, by dotted name, so that naming a host does not load
every host's HTTP client (and so that nothing here imports an adapter)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from orch_review.errors import UsageError

if TYPE_CHECKING:
    from orch_review.hosts.base import Host

# name -> "module:attribute" of the adapter's Host object
ADAPTERS = {
    "github": "orch_review.hosts.github.host:HOST",
    "gitlab": "orch_review.hosts.gitlab.host:HOST",
}


def names() -> tuple[str, ...]:
    """The hosts' names, sorted."""
    return tuple(sorted(ADAPTERS))


def host(name: str) -> Host:
    """The adapter called ``name``; a UsageError naming the known hosts for any other."""
    where = ADAPTERS.get(name)
    if where is None:
        raise UsageError(f"no host called {name[:40]!r}: orch-review knows {', '.join(names())}.")
    module, _, attribute = where.partition(":")
    found: Host = getattr(importlib.import_module(module), attribute)
    return found


def by_local_command(command: str) -> Host:
    """The adapter whose changes ``command`` (``pr``, ``mr``) reviews from a clone."""
    for name in names():
        found = host(name)
        if found.local_command == command:
            return found
    raise UsageError(f"no host reviews changes with `{command[:20]}`.")
