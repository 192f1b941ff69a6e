"""Every git operation orch-review performs, through GitPython, made inert by
:func:`open_repo` (see :data:`INERT_CONFIG`).

One module per job; this package is the import surface callers use
(``from orch_review.scope import git as gitops``).
"""

from __future__ import annotations

from orch_review.scope.git.attributes import (
    check_attributes,
)
from orch_review.scope.git.blobs import (
    BlobReader,
    blob,
    blob_head,
    show_file,
    write_blobs,
)
from orch_review.scope.git.diff import (
    changed_names,
    diff_lines,
    differences_from,
)
from orch_review.scope.git.index import (
    index_entries,
    index_file,
    index_modes,
    index_tree,
    indexed_files,
    modified_files,
    pathspec_matches,
    skip_worktree_files,
    tree_in_index,
    unmerged_paths,
    untracked_among,
    untracked_entries,
    untracked_files,
    working_tree_tree,
)
from orch_review.scope.git.listing import (
    TreeListing,
)
from orch_review.scope.git.objects import (
    FIXED_DATE,
    SNAPSHOT_IDENTITY,
    commit_tree,
    commit_with_file,
    objects_dir,
    own_objects_pack,
    unpack_into,
    writing_objects_to,
)
from orch_review.scope.git.private import (
    check_out_private,
    index_private,
    init_private_repo,
    point_head,
)
from orch_review.scope.git.refs import (
    default_base,
    default_branch,
    has_commit,
    head_commit,
    head_description,
    is_shallow,
    merge_base,
    resolve_commit,
)
from orch_review.scope.git.remote import (
    clone,
    fetch_isolated,
    remote_url,
)
from orch_review.scope.git.repo import (
    INERT_CONFIG,
    compares_file_modes,
    config_parameters,
    git_dir,
    open_repo,
    user_identity,
    work_tree,
)
from orch_review.scope.git.trees import (
    as_pathspecs,
    directory_entries,
    files_at,
    files_called,
    files_named,
    files_under,
    staged_entries,
    submodules,
    tree_archive,
    tree_blobs,
    tree_entries,
    tree_of,
    whole_tree,
)

__all__ = [
    "FIXED_DATE",
    "INERT_CONFIG",
    "SNAPSHOT_IDENTITY",
    "BlobReader",
    "TreeListing",
    "as_pathspecs",
    "blob",
    "blob_head",
    "changed_names",
    "check_attributes",
    "check_out_private",
    "clone",
    "commit_tree",
    "commit_with_file",
    "compares_file_modes",
    "config_parameters",
    "default_base",
    "default_branch",
    "diff_lines",
    "differences_from",
    "directory_entries",
    "fetch_isolated",
    "files_at",
    "files_called",
    "files_named",
    "files_under",
    "git_dir",
    "has_commit",
    "head_commit",
    "head_description",
    "index_entries",
    "index_file",
    "index_modes",
    "index_private",
    "index_tree",
    "indexed_files",
    "init_private_repo",
    "is_shallow",
    "merge_base",
    "modified_files",
    "objects_dir",
    "open_repo",
    "own_objects_pack",
    "pathspec_matches",
    "point_head",
    "remote_url",
    "resolve_commit",
    "show_file",
    "skip_worktree_files",
    "staged_entries",
    "submodules",
    "tree_archive",
    "tree_blobs",
    "tree_entries",
    "tree_in_index",
    "tree_of",
    "unmerged_paths",
    "unpack_into",
    "untracked_among",
    "untracked_entries",
    "untracked_files",
    "user_identity",
    "whole_tree",
    "work_tree",
    "working_tree_tree",
    "write_blobs",
    "writing_objects_to",
]
