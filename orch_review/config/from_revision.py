"""Loading the configuration a review runs with, from the right revision."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.config import learnings as learned
from orch_review.config.settings import FILE_NAME, Config, load_config
from orch_review.scope import git as gitops
from orch_review.scope.resolve import Scope, ScopeRequest, resolve_scope

if TYPE_CHECKING:
    import git

CONFIG_FILES = (FILE_NAME, "pyproject.toml")


def load_settings(
    repo: git.Repo, request: ScopeRequest, env: Mapping[str, str], overrides: Mapping[str, object]
) -> Config:
    """The configuration for ``request``: from the working tree, or, with ``--base``, from
    the base revision, so a pull request cannot weaken its own review."""
    root = gitops.work_tree(repo)
    if request.base is None:
        return load_config(root, env, overrides)
    revision = gitops.resolve_commit(repo, request.base)
    with tempdirs.directory("config") as tmp:
        for name in CONFIG_FILES:
            content = gitops.show_file(repo, revision, name)
            if content is not None:
                Path(tmp, name).write_bytes(content)
        config = load_config(Path(tmp), env, overrides)
        # Paths in the file are relative to the repository, not to this temporary folder.
        journal_path, source = config.journal_path, config.source
        if journal_path is not None and journal_path.is_relative_to(tmp):
            journal_path = root / journal_path.relative_to(tmp)
        if source is not None and source.is_relative_to(tmp):
            source = root / source.relative_to(tmp)
    return dataclasses.replace(config, journal_path=journal_path, source=source)


def load_learnings(repo: git.Repo, request: ScopeRequest) -> tuple[learned.Learning, ...]:
    """The team's learnings for ``request``, from where the configuration comes: the working
    tree, or with ``--base`` the base revision (a pull request cannot dismiss its own
    findings by editing the file)."""
    if request.base is None:
        return learned.load(gitops.work_tree(repo))
    revision = gitops.resolve_commit(repo, request.base)
    return learned.from_bytes(gitops.show_file(repo, revision, learned.LEARNINGS_FILE))


def settings_and_scope(
    repo: git.Repo,
    request: ScopeRequest,
    env: Mapping[str, str],
    overrides: Mapping[str, object],
    extra_exclude: tuple[str, ...] = (),
) -> tuple[Config, Scope]:
    """The configuration (``extra_exclude`` added to its globs) and the resolved scope;
    raises NothingToReview when the scope is empty."""
    config = load_settings(repo, request, env, overrides)
    if extra_exclude:
        config = dataclasses.replace(config, exclude=(*config.exclude, *extra_exclude))
    scope = resolve_scope(
        repo,
        request,
        exclude=config.exclude,
        env=env,
        generated=config.generated,
        max_file_size=config.max_file_size,
    )
    return config, scope
