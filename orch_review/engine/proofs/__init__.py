"""Proofs: prover agents, running their tests in the sandbox, and checking suggested patches."""
