"""orch-review: code review with Claude in orchestration mode."""

__version__ = "0.1.0"
