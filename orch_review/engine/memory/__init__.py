"""What a review keeps: the journal, findings reused by content, the last report, and the
conversation that follow-up questions continue."""
