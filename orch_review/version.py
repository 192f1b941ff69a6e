"""The version of orch-review: a leaf, so what reports it imports nothing else of the package.

The package metadata reads it from here (``[tool.hatch.version]`` in pyproject.toml).
"""

__version__ = "0.1.0"
#: Where orch-review is installed from: it is not published on a package index.
REPOSITORY_URL = "https://github.com/orch-review/orch-review"


def install_command(extra: str | None = None) -> str:
    """The pip command that installs this version from its repository, with ``extra``."""
    name = f"orch-review[{extra}]" if extra else "orch-review"
    return f"pip install '{name} @ git+{REPOSITORY_URL}@v{__version__}'"
