"""Every registered adapter implements every step the Host interface declares, with the
interface's parameters (each host's steps are driven through the interface against its
fake in ``tests/hosts/<host>/test_host.py``)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from orch_review.hosts import registry
from orch_review.hosts.base import Host


def _declared() -> dict[str, Any]:
    """The Host protocol's members, by name: its methods and its properties."""
    return {
        name: member
        for name, member in vars(Host).items()
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))
    }


def _parameters(function: Any) -> list[tuple[str, Any, bool]]:
    """Each parameter's name, kind and whether it has a default; ``self`` left out."""
    found = inspect.signature(function).parameters.values()
    return [(p.name, p.kind, p.default is not p.empty) for p in found if p.name != "self"]


def test_the_interface_declares_every_step_of_a_hosts_run() -> None:
    assert {
        "read_event", "connect", "read_intent", "read_dismissals", "place", "publish",
        "keep_summary", "answer_questions", "review_local", "run_ci", "supports",
    } <= set(_declared())  # fmt: skip


@pytest.mark.parametrize("name", registry.names())
def test_every_adapter_implements_every_method_with_the_interfaces_parameters(
    name: str,
) -> None:
    adapter = registry.host(name)
    missing, different = [], []
    for member, declared in _declared().items():
        if not hasattr(adapter, member):
            missing.append(member)
            continue
        if isinstance(declared, property):
            assert isinstance(getattr(adapter, member), str), member
            continue
        implemented = getattr(adapter, member)
        assert callable(implemented), member
        # Bound: drop `self` from the protocol's side; the adapter's has none.
        if _parameters(declared) != _parameters(implemented):
            different.append((member, _parameters(declared), _parameters(implemented)))
    assert missing == []
    assert different == []
