"""The value sets of settings that have a fixed list of choices.

One place for config validation, the CLI's ``click.Choice`` lists and the type hints, kept
free of imports so the command line can use it without slowing ``--version``.
"""

from __future__ import annotations

from typing import Literal, get_args

Effort = Literal["low", "medium", "high", "xhigh", "max"]
FailOn = Literal["high", "medium", "low", "info", "never"]
FilterMode = Literal["added", "diff_context", "file", "nofilter"]
Strictness = Literal["info", "low", "medium", "high"]
SandboxMode = Literal["auto", "on", "off", "tools", "bubblewrap", "landlock"]
Provider = Literal["anthropic", "bedrock", "vertex", "foundry"]
#: Where ``orch-review github`` puts its findings.
CommentMode = Literal["review", "summary", "annotations", "none"]
#: GitHub's reaction contents (docs.github.com/rest/reactions), and "none".
Reaction = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes", "none"]
#: Which confirmed findings a prover tries to show with a failing test.
ProveLevel = Literal["off", "high", "all"]

EFFORTS: tuple[str, ...] = get_args(Effort)
FAIL_ON_LEVELS: tuple[str, ...] = get_args(FailOn)
FILTER_MODES: tuple[str, ...] = get_args(FilterMode)
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)
COMMENT_MODES: tuple[str, ...] = get_args(CommentMode)
PROVE_LEVELS: tuple[str, ...] = get_args(ProveLevel)

# What a finding may be about: offered to the subagents, accepted by `focus`, listed in SARIF.
CATEGORIES = (
    "correctness",
    "security",
    "concurrency",
    "error-handling",
    "performance",
    "resource-leak",
    "api-misuse",
    "data-loss",
    "compatibility",
    "testing",
    "maintainability",
    "documentation",
    "intent",
)
