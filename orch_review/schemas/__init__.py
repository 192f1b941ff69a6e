"""JSON Schemas of orch-review's machine output, shipped as package data."""
