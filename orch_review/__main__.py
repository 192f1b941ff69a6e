"""``python -m orch_review``."""

from orch_review.cli import main

main()
