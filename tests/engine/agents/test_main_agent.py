"""The main agent's journal key: a hash chain, each message serialized once."""

from __future__ import annotations

from typing import Any

from orch_review.engine.agents.main_agent import ConversationHash


def _conversation() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "review this"},
        {"role": "system", "content": "mode on"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]


def test_equal_conversations_give_equal_digests_in_fresh_chains() -> None:
    assert ConversationHash().digest(_conversation()) == ConversationHash().digest(_conversation())


def test_growing_conversation_matches_hashing_from_scratch() -> None:
    chain = ConversationHash()
    messages = _conversation()[:1]
    chain.digest(messages)
    messages += _conversation()[1:]
    assert chain.digest(messages) == ConversationHash().digest(messages)


def test_replaced_last_message_changes_the_digest() -> None:
    chain = ConversationHash()
    messages = _conversation()
    before = chain.digest(messages)
    messages[-1] = {"role": "assistant", "content": [{"type": "text", "text": "changed"}]}
    after = chain.digest(messages)
    assert after != before
    assert after == ConversationHash().digest(messages)


def test_any_difference_changes_the_digest() -> None:
    base = ConversationHash().digest(_conversation())
    shorter = ConversationHash().digest(_conversation()[:2])
    reordered = ConversationHash().digest(list(reversed(_conversation())))
    assert len({base, shorter, reordered}) == 3
