"""Loading the configuration a review runs with, from the right revision."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.config import learnings as learned
from orch_review.config.ignored import nested_table
from orch_review.config.settings import FILE_NAME, Config, Explained, explain_config
from orch_review.scope import git as gitops
from orch_review.scope.resolve import Scope, ScopeRequest, resolve_scope

if TYPE_CHECKING:
    import git

CONFIG_FILES = (FILE_NAME, "pyproject.toml")


def load_settings(
    repo: git.Repo,
    request: ScopeRequest,
    env: Mapping[str, str],
    overrides: Mapping[str, object],
    config_file: Path | None = None,
) -> Config:
    """The configuration for ``request``: from the working tree, or, with ``--base``, from
    the base revision, so a pull request cannot weaken its own review; ``config_file``
    (``--config``) instead of either."""
    return explain_settings(repo, request, env, overrides, config_file).config


def explain_settings(
    repo: git.Repo,
    request: ScopeRequest,
    env: Mapping[str, str],
    overrides: Mapping[str, object],
    config_file: Path | None = None,
) -> Explained:
    """:func:`load_settings` with each setting's origin, and warnings about configuration
    that is ignored (also the files in subdirectories, which nothing reads)."""
    root = gitops.work_tree(repo)
    revision = None
    if config_file is not None:
        explained = explain_config(root, env, overrides, config_file.resolve())
    elif request.base is None:
        explained = explain_config(root, env, overrides)
    else:
        revision = gitops.resolve_commit(repo, request.base)
        explained = _from_revision(repo, revision, root, env, overrides)
    if config_file is not None:
        return explained  # --config is a choice: the files it replaces are not news
    nested = _nested_tables(repo, revision, root, explained.config.source)
    return dataclasses.replace(explained, warnings=(*explained.warnings, *nested))


def _from_revision(
    repo: git.Repo,
    revision: str,
    root: Path,
    env: Mapping[str, str],
    overrides: Mapping[str, object],
) -> Explained:
    with tempdirs.directory("config") as tmp:
        for name in CONFIG_FILES:
            content = gitops.show_file(repo, revision, name)
            if content is not None:
                Path(tmp, name).write_bytes(content)
        explained = explain_config(Path(tmp), env, overrides)
        config = explained.config
        # Paths in the file are relative to the repository, not to this temporary folder.
        journal_path, source = config.journal_path, config.source
        if journal_path is not None and journal_path.is_relative_to(tmp):
            journal_path = root / journal_path.relative_to(tmp)
        if source is not None and source.is_relative_to(tmp):
            source = root / source.relative_to(tmp)
    config = dataclasses.replace(config, journal_path=journal_path, source=source)
    return dataclasses.replace(explained, config=config)


def _nested_tables(
    repo: git.Repo,
    revision: str | None,
    root: Path,
    read: Path | None,
) -> list[str]:
    """Warnings for the configuration files below the top (tracked, or in ``revision``)."""
    warnings = []
    for name in CONFIG_FILES:
        for path in gitops.files_named(repo, revision, name):
            if "/" not in path:
                continue
            if revision is not None:
                content = gitops.show_file(repo, revision, path)
            else:
                try:
                    content = (root / path).read_bytes()
                except OSError:
                    content = None
            warning = nested_table(path, content, read, root) if content is not None else None
            if warning is not None:
                warnings.append(warning)
    return warnings


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
    config_file: Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[Config, Scope]:
    """The configuration (``extra_exclude`` added to its globs) and the resolved scope;
    raises NothingToReview when the scope is empty. ``warn`` is given each warning about
    configuration that is ignored."""
    explained = explain_settings(repo, request, env, overrides, config_file)
    for warning in explained.warnings:
        if warn is not None:
            warn(warning)
    config = explained.config
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
