"""Which files are worth reviewing, and the reason given for each one that is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.scope.reviewable import (
    DEFAULT_MAX_FILE_SIZE,
    SUBMODULE_MODE,
    SYMLINK_MODE,
    ReviewRules,
)

RULES = ReviewRules.build({"": "docs/\n!docs/keep.md\n*.sql\n!keep.sql\n"}, ["tmp/", "*.snap"])


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("src/app.py", None),
        ("docs/guide.md", "excluded by .orch-reviewignore"),
        # As in git: a file inside an excluded directory cannot be re-included.
        ("docs/keep.md", "excluded by .orch-reviewignore"),
        ("db/schema.sql", "excluded by .orch-reviewignore"),
        ("keep.sql", None),
        ("tmp/x.py", "excluded by the `exclude` setting"),
        ("ui/__snapshots__/a.snap", "excluded by the `exclude` setting"),
        ("Cargo.lock", "lock file or generated/vendored code"),
        ("web/package-lock.json", "lock file or generated/vendored code"),
        ("deep/vendor/lib.go", "lock file or generated/vendored code"),
        ("gen/api_pb2_grpc.py", "lock file or generated/vendored code"),
        ("static/site.min.css", "lock file or generated/vendored code"),
        ("vendors.py", None),
    ],
)
def test_exclusions_by_name(path: str, reason: str | None) -> None:
    assert RULES.skip_reason(path, mode="100644", size=10, binary=False) == reason


def test_submodule_binary_and_size_reasons() -> None:
    rules = ReviewRules.build({}, [])

    assert rules.skip_reason("sub", mode=SUBMODULE_MODE, size=None, binary=False) == "submodule"
    assert rules.skip_reason("a.png", mode="100644", size=9, binary=True) == "binary"
    too_big = DEFAULT_MAX_FILE_SIZE + 1
    assert rules.skip_reason("big.py", mode="100644", size=too_big, binary=False) == (
        f"larger than {DEFAULT_MAX_FILE_SIZE:,} bytes ({too_big:,})"
    )
    assert (
        rules.skip_reason("ok.py", mode="100644", size=DEFAULT_MAX_FILE_SIZE, binary=False) is None
    )


@pytest.mark.parametrize(
    ("path", "target", "outside"),
    [
        ("link", "src/app.py", False),
        ("a/b/link", "../../src/app.py", False),
        ("a/link", "../../elsewhere", True),
        ("link", "..", True),
        ("link", "/etc/passwd", True),
    ],
)
def test_symlinks_pointing_outside_the_repository(
    tmp_path: Path, path: str, target: str, outside: bool
) -> None:
    rules = ReviewRules.build({}, [])

    reason = rules.skip_reason(
        path, mode=SYMLINK_MODE, size=5, binary=False, link_target=target, root=tmp_path
    )

    assert (reason == f"symlink pointing outside the repository ({target})") is outside
    assert outside or reason is None


def test_absolute_symlink_into_the_repository_is_inside(tmp_path: Path) -> None:
    rules = ReviewRules.build({}, [])
    target = str(tmp_path / "src" / "app.py")

    reason = rules.skip_reason(
        "link", mode=SYMLINK_MODE, size=5, binary=False, link_target=target, root=tmp_path
    )

    assert reason is None
