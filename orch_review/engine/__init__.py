"""The review engine: agents, their tools and the orchestration that runs them."""
