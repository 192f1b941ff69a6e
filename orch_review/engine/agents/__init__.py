"""The agents: their loop, prompts and tools, the main agent, the Workflow fan-out with its
verifiers, the critic and the sweep."""
