"""Telling what orch-review wrote from what someone else put in its place.

A journal travels with a repository's ``.git`` and with CI caches, and a shard's JSON report
travels between jobs as an artifact: anyone who can write those can forge a stored result.
orch-review signs what it stores (journal entries, verified patches in JSON reports) with
HMAC-SHA256 under a key the forger does not hold, and trusts only what carries a valid
signature.

The key is derived (HKDF-SHA256, RFC 5869) from a secret:

- the provider's static credential when there is one (``ANTHROPIC_API_KEY`` or
  ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_FOUNDRY_API_KEY``, ``AWS_BEARER_TOKEN_BEDROCK``, or a
  long-term ``AWS_SECRET_ACCESS_KEY``): every job of a CI workflow that holds the secret
  derives the same key, so shard jobs and the merge job agree;
- otherwise (Bedrock, Vertex AI or Foundry with ambient or short-lived credentials, a gateway
  without a key) a random per-user secret, created once with mode 0600 under the user's
  configuration directory. It is never shared between machines, so what another machine
  signed is not trusted here.

Neither the secret nor the key is ever stored or logged; a different secret simply means that
nothing stored earlier is trusted.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

SALT = b"orch-review signing v1"
JOURNAL = b"journal entries"
REPORTS = b"verified patches in reports"
USER_SECRET_NAME = "signing-secret"

# Per provider: the static secrets that authenticate it, strongest first.
_CREDENTIALS = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "foundry": ("ANTHROPIC_FOUNDRY_API_KEY",),
    "bedrock": ("AWS_BEARER_TOKEN_BEDROCK",),  # and a long-term AWS_SECRET_ACCESS_KEY
    "vertex": (),
}


@dataclass(frozen=True, slots=True)
class Signer:
    """HMAC-SHA256 signatures of JSON-ready values under one derived key."""

    key: bytes = field(repr=False)
    source: str  # "credential" or "user secret": said in the docs, never the secret itself

    def sign(self, *parts: object) -> str:
        """The hex signature of ``parts`` (canonical JSON, so dict order does not matter)."""
        text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hmac.new(self.key, text.encode("ascii"), hashlib.sha256).hexdigest()

    def valid(self, signature: object, *parts: object) -> bool:
        """Whether ``signature`` is this key's signature of ``parts`` (constant time)."""
        if not isinstance(signature, str):
            return False
        return hmac.compare_digest(signature, self.sign(*parts))


def derive_key(secret: bytes, label: bytes) -> bytes:
    """HKDF-SHA256 (extract with a fixed salt, expand to one block with ``label``)."""
    prk = hmac.new(SALT, secret, hashlib.sha256).digest()
    return hmac.new(prk, label + b"\x01", hashlib.sha256).digest()


def credential_secret(env: Mapping[str, str], provider: str) -> bytes | None:
    """The provider's static credential in ``env``, or None when it authenticates otherwise."""
    for name in _CREDENTIALS.get(provider, ()):
        value = env.get(name)
        if value:
            return value.encode("utf-8", "surrogateescape")
    # Temporary AWS keys (with a session token) change every session: nothing signed would
    # ever be trusted again, so the per-user secret serves better.
    long_term = env.get("AWS_SECRET_ACCESS_KEY") and not env.get("AWS_SESSION_TOKEN")
    if provider == "bedrock" and long_term:
        return env["AWS_SECRET_ACCESS_KEY"].encode("utf-8", "surrogateescape")
    return None


def user_secret_path(env: Mapping[str, str]) -> Path | None:
    """Where the per-user secret lives: ``$XDG_CONFIG_HOME/orch-review`` or ``~/.config``."""
    config = env.get("XDG_CONFIG_HOME")
    if config and os.path.isabs(config):
        return Path(config) / "orch-review" / USER_SECRET_NAME
    home = env.get("HOME")
    if home and os.path.isabs(home):
        return Path(home) / ".config" / "orch-review" / USER_SECRET_NAME
    return None


def user_secret(env: Mapping[str, str]) -> bytes | None:
    """This user's random secret, created on first use (mode 0600); None when it cannot be
    read or made, or when it is not this user's alone (then nothing is trusted)."""
    path = user_secret_path(env)
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(secrets.token_hex(32) + "\n")
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, encoding="ascii") as source:
            info = os.fstat(source.fileno())
            text = source.read(200).strip()
    except (OSError, UnicodeDecodeError):
        return None
    mine = info.st_uid == os.geteuid() and stat.S_ISREG(info.st_mode)
    if not mine or info.st_mode & 0o077 or len(text) < 32:
        return None
    return text.encode("ascii")


def report_signer(env: Mapping[str, str]) -> Signer | None:
    """The signer of verified patches in JSON reports. A merge job has no configuration to
    name the provider, so the first static credential of any provider in ``env`` is used
    (the same in every job that holds the same secrets), else the per-user secret."""
    for provider in _CREDENTIALS:
        secret = credential_secret(env, provider)
        if secret is not None:
            return Signer(derive_key(secret, REPORTS), "credential")
    secret = user_secret(env)
    return None if secret is None else Signer(derive_key(secret, REPORTS), "user secret")


def signer_for(env: Mapping[str, str], provider: str, label: bytes) -> Signer | None:
    """The signer for ``label`` (:data:`JOURNAL` or :data:`REPORTS`); None when no secret can
    be had, and then nothing stored is trusted."""
    secret = credential_secret(env, provider)
    if secret is not None:
        return Signer(derive_key(secret, label), "credential")
    secret = user_secret(env)
    if secret is None:
        return None
    return Signer(derive_key(secret, label), "user secret")
