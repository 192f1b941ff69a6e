"""What a review produces: findings and verdicts, their triage, and the report."""
