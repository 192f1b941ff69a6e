"""The signing key: derived from the credential, else from a private per-user secret."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from orch_review.trust import (
    JOURNAL,
    REPORTS,
    credential_secret,
    report_signer,
    signer_for,
    user_secret_path,
)


def test_the_key_comes_from_the_credential_and_differs_per_label_and_credential(
    tmp_path: Path,
) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-one", "HOME": str(tmp_path)}
    journal = signer_for(env, "anthropic", JOURNAL)
    again = signer_for(dict(env), "anthropic", JOURNAL)
    assert journal is not None and again is not None and journal.source == "credential"
    assert journal.sign("k", "v") == again.sign("k", "v")  # another process, the same key
    assert journal.valid(journal.sign("k", "v"), "k", "v")
    assert not journal.valid(journal.sign("k", "v"), "k", "w")
    assert not journal.valid(None, "k", "v")
    reports = signer_for(env, "anthropic", REPORTS)
    other = signer_for({**env, "ANTHROPIC_API_KEY": "sk-two"}, "anthropic", JOURNAL)
    assert reports is not None and other is not None
    assert len({journal.sign("x"), reports.sign("x"), other.sign("x")}) == 3
    # Neither the credential nor the key is shown or stored anywhere.
    assert "sk-one" not in repr(journal) and journal.key.hex() not in repr(journal)
    assert not (tmp_path / ".config").exists()


def test_credentials_per_provider() -> None:
    assert credential_secret({"ANTHROPIC_AUTH_TOKEN": "t"}, "anthropic") == b"t"
    assert credential_secret({"ANTHROPIC_FOUNDRY_API_KEY": "f"}, "foundry") == b"f"
    assert credential_secret({"AWS_BEARER_TOKEN_BEDROCK": "b"}, "bedrock") == b"b"
    assert credential_secret({"AWS_SECRET_ACCESS_KEY": "s"}, "bedrock") == b"s"
    temporary = {"AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "x"}
    assert credential_secret(temporary, "bedrock") is None
    assert credential_secret({"GOOGLE_APPLICATION_CREDENTIALS": "/f"}, "vertex") is None
    assert credential_secret({"ANTHROPIC_BASE_URL": "http://gateway"}, "anthropic") is None


def test_without_a_credential_a_private_per_user_secret_is_made_once(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    first = signer_for(env, "vertex", JOURNAL)
    second = signer_for(env, "vertex", JOURNAL)
    path = user_secret_path(env)
    assert first is not None and second is not None and path is not None
    assert first.source == "user secret" and first.sign("x") == second.sign("x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert report_signer(env) is not None  # the merge of such shards uses it too
    # Readable by others: not a secret any more, so nothing is trusted.
    path.chmod(0o644)
    assert signer_for(env, "vertex", JOURNAL) is None
    path.chmod(0o600)
    # Another user's (or a fresh machine's) secret is another key.
    other = {"XDG_CONFIG_HOME": str(tmp_path / "elsewhere"), "HOME": str(tmp_path)}
    signer = signer_for(other, "vertex", JOURNAL)
    assert signer is not None and signer.sign("x") != first.sign("x")


def test_a_symlinked_secret_is_not_followed(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    path = user_secret_path(env)
    assert path is not None
    path.parent.mkdir(parents=True)
    target = tmp_path / "planted"
    target.write_text("a" * 64)
    target.chmod(0o600)
    os.symlink(target, path)
    assert signer_for(env, "bedrock", JOURNAL) is None


def test_no_home_and_no_credential_means_no_signer() -> None:
    assert signer_for({}, "anthropic", JOURNAL) is None
    assert report_signer({"HOME": "relative/home"}) is None
