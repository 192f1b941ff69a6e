"""Measuring reviews: labelled cases, matching, the figures, defect planting and settings
matrices, behind ``orch-review eval``."""
