"""Hostile text for machine formats: controls shown as escapes, and any lone surrogate (a
byte that was not UTF-8) written as a backslash escape, since JSON and XML text is UTF-8."""

from __future__ import annotations

from orch_review.sanitize import controls


def machine_text(text: str) -> str:
    """``text`` safe to embed in JSON or XML text, on any sink."""
    return controls(text).encode("utf-8", "backslashreplace").decode("utf-8")
