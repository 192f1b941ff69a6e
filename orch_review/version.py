"""The version of orch-review: a leaf, so what reports it imports nothing else of the package.

The package metadata reads it from here (``[tool.hatch.version]`` in pyproject.toml).
"""

__version__ = "0.1.0"
