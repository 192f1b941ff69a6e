"""``python -m orch_review``."""

from orch_review.cli import main

main(prog_name="orch-review")  # as the installed script names itself in usage lines
