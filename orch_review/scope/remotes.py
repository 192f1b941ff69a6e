"""The project a clone's remote points at, read from its URL (hostile: .git/config).

``https://host/owner/name.git``, ``ssh://git@host/group/sub/name``, ``git@host:owner/name``
and local paths (``/srv/git/owner/name.git``) all give ``owner/name`` (GitHub) or the
project path (GitLab, ``group/sub/name``); anything that is not plain path parts is refused.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_SCP = re.compile(r"^(?:[^@/:]+@)?[^/:]+:(?!//)(?P<path>.+)$")


def remote_path(url: str) -> list[str] | None:
    """The path parts of ``url`` without a trailing ``.git``; None when it has none usable."""
    url = url.strip()
    if not url or any(c.isspace() or not c.isprintable() for c in url):
        return None
    if "://" in url:
        path = urlsplit(url).path
    elif (scp := _SCP.match(url)) is not None and not url.startswith("/"):
        path = scp.group("path")
    else:
        path = url
    parts = [p for p in path.split("/") if p]
    if parts:
        parts[-1] = parts[-1].removesuffix(".git")
    if not parts or not all(_PART.fullmatch(p) and p not in {".", ".."} for p in parts):
        return None
    return parts


def remote_host(url: str) -> str | None:
    """The host name of a remote URL (``https://host/...``, ``git@host:path``), lower case;
    None for a local path or a ``file://`` URL."""
    url = url.strip()
    if "://" in url:
        return (urlsplit(url).hostname or "").lower() or None
    if url.startswith(("/", ".")):
        return None
    scp = _SCP.match(url)
    if scp is None:
        return None
    host = url.split(":", 1)[0].rpartition("@")[2]
    return host.lower() or None


def github_repository(url: str) -> str | None:
    """``owner/name`` from a GitHub remote URL (its last two path parts)."""
    parts = remote_path(url)
    if parts is None or len(parts) < 2:
        return None
    return "/".join(parts[-2:])


def gitlab_project(url: str, local_parts: int = 2) -> str | None:
    """A GitLab project's path from a remote URL: the whole path of a URL or ``host:path``
    (GitLab nests groups), the last ``local_parts`` parts of a local path."""
    parts = remote_path(url)
    if parts is None or len(parts) < 2:
        return None
    local = "://" not in url and (url.startswith(("/", ".")) or _SCP.match(url) is None)
    if url.startswith("file://") or local:
        parts = parts[-local_parts:]
    return "/".join(parts)
