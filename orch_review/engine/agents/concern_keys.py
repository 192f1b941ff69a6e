"""The journal as the fan-out uses it: the key of a concern's agent, and its guidance.

A key holds everything that changes an agent's answer: its role, the tools, the model, effort
and turn limit, the concern, the content of the files it names, the review guidance for them
(and, for a verifier, the findings it checks), so that a rerun pays only for agents whose
answer could differ.
"""

from __future__ import annotations

from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.tools import TOOLS_VERSION
from orch_review.engine.memory.journal import journal_key


class ConcernKeys:
    """Journal keys and guidance for the concerns of one session."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.guidance_truncated = False  # some agent's guidance was cut to the limit

    def guidance_for(self, concern: str) -> str:
        """The review guidance for the files ``concern`` names (empty without guidance)."""
        guidance = self._session.guidance
        if guidance is None:
            return ""
        text, truncated = guidance.for_paths(self._session.workspace.mentioned_files(concern))
        if truncated:
            self.guidance_truncated = True
        return text

    def key(self, role: str, concern: str, *extra: object) -> str:
        """The journal key of ``role``'s agent for ``concern``."""
        session = self._session
        config = session.config
        return journal_key(
            role,
            TOOLS_VERSION,
            config.agent_model,
            config.effort,
            config.subagent_max_turns,
            session.toolset,
            concern,
            session.workspace.content_key(concern),
            self.guidance_for(concern),
            *extra,
        )
