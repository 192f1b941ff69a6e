"""What the team taught orch-review: ``.orch-review/learnings.toml``.

Each ``[[learning]]`` table records a finding the team dismissed::

    [[learning]]
    # finding: app.py:6 (security)
    # claim: SQL query built with an f-string from the caller's `name`: injection.
    fingerprint = "0f3c...:1"      # or: glob = "tests/**"  (exactly one of the two)
    category = "security"          # optional
    reason = "the input is a constant"
    who = "octo-maintainer"
    when = "2026-11-30"           # ISO date, a string or a TOML date

The comments name what a fingerprint silences, for whoever reviews the file; orch-review
writes them and never reads them. A learning with a fingerprint suppresses that finding in every
review; every learning is given
to the agents as guidance ("the team dismissed these before"). The file is read like the
configuration: from the base revision for a pull request, from the working tree otherwise. It
is repository content, so hostile: it is validated strictly and bounded in size, and a broken
file is a :class:`ConfigError` naming the file and the entry, as a broken configuration is.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orch_review.errors import ConfigError
from orch_review.sanitize import controls

LEARNINGS_FILE = ".orch-review/learnings.toml"
MAX_BYTES = 256 * 1024
MAX_LEARNINGS = 500
MAX_REASON = 500
MAX_FIELD = 200
FINGERPRINT = re.compile(r"[0-9a-f]{32}:\d{1,6}")
_CATEGORY = re.compile(r"[a-z][a-z0-9-]{0,39}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_KEYS = frozenset({"fingerprint", "glob", "category", "reason", "who", "when"})


@dataclass(frozen=True, slots=True)
class Learning:
    """One dismissal the team recorded: a finding (``fingerprint``) or files (``glob``)."""

    reason: str
    who: str
    when: str  # YYYY-MM-DD
    fingerprint: str | None = None
    glob: str | None = None
    category: str | None = None
    # What the fingerprint silences, written as comments beside the table for the people
    # who review the file: the finding's place (``app.py:6``) and its claim. Never read back.
    location: str | None = field(default=None, compare=False)
    claim: str | None = field(default=None, compare=False)

    def guidance(self) -> str:
        """The learning as one line of guidance for the agents."""
        about = f"finding {self.fingerprint}" if self.fingerprint else f"files `{self.glob}`"
        kind = f" ({self.category} findings)" if self.category else ""
        return f"- {about}{kind}: {' '.join(self.reason.split())}"


def parse_learnings(text: str, where: str = LEARNINGS_FILE) -> tuple[Learning, ...]:
    """The learnings in ``text`` (the file's content); ConfigError naming ``where``."""
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise ConfigError(f"`{where}` is larger than {MAX_BYTES // 1024} KiB: keep it short.")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
        raise ConfigError(f"`{where}` is not valid TOML: {exc}") from None
    unknown = set(data) - {"learning"}
    if unknown:
        raise ConfigError(
            f"`{where}`: unknown key `{sorted(unknown)[0]}`; the file holds `[[learning]]` tables."
        )
    entries = data.get("learning", [])
    if not isinstance(entries, list):
        raise ConfigError(f"`{where}`: `learning` must be an array of tables (`[[learning]]`).")
    if len(entries) > MAX_LEARNINGS:
        raise ConfigError(f"`{where}` has {len(entries)} learnings; at most {MAX_LEARNINGS}.")
    return tuple(_learning(entry, f"`{where}` learning {n}") for n, entry in enumerate(entries, 1))


def _learning(entry: object, where: str) -> Learning:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table.")
    unknown = set(entry) - _KEYS
    if unknown:
        known = ", ".join(sorted(_KEYS))
        raise ConfigError(f"{where}: unknown key `{sorted(unknown)[0]}` (known: {known}).")
    if ("fingerprint" in entry) == ("glob" in entry):
        raise ConfigError(f"{where} must have exactly one of `fingerprint` and `glob`.")
    fingerprint = _text(entry, "fingerprint", where, required=False)
    if fingerprint is not None and not FINGERPRINT.fullmatch(fingerprint):
        raise ConfigError(
            f"{where}: `fingerprint` must be a finding's fingerprint such as "
            f"`{'0' * 32}:1` (from the JSON report), got {fingerprint!r}."
        )
    category = _text(entry, "category", where, required=False)
    if category is not None and not _CATEGORY.fullmatch(category):
        raise ConfigError(f"{where}: `category` must be a category name such as `security`.")
    when = entry.get("when")
    if isinstance(when, dt.date) and not isinstance(when, dt.datetime):
        when = when.isoformat()
    if not isinstance(when, str) or not _DATE.fullmatch(when):
        raise ConfigError(f"{where}: `when` must be an ISO date such as `2026-11-30`.")
    return Learning(
        reason=_text(entry, "reason", where, limit=MAX_REASON) or "",
        who=_text(entry, "who", where) or "",
        when=when,
        fingerprint=fingerprint,
        glob=_text(entry, "glob", where, required=False),
        category=category,
    )


def _text(
    entry: Mapping[str, object], key: str, where: str, *, required: bool = True, limit: int = 0
) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    limit = limit or MAX_FIELD
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ConfigError(f"{where}: `{key}` must be a non-empty string of at most {limit} chars.")
    return value.strip()


def load(root: Path) -> tuple[Learning, ...]:
    """The learnings file of the working tree at ``root`` (none when there is no file)."""
    path = root / LEARNINGS_FILE
    if not path.is_file():
        return ()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"`{LEARNINGS_FILE}` could not be read: {exc}") from None
    return parse_learnings(text)


def from_bytes(data: bytes | None) -> tuple[Learning, ...]:
    """The learnings of a file read from a revision (None: there is no file there)."""
    if data is None:
        return ()
    if len(data) > MAX_BYTES:
        raise ConfigError(f"`{LEARNINGS_FILE}` is larger than {MAX_BYTES // 1024} KiB.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"`{LEARNINGS_FILE}` is not UTF-8: {exc}") from None
    return parse_learnings(text)


def dismissed(learnings: Iterable[Learning]) -> dict[str, str]:
    """Fingerprint -> why, for the learnings that name a finding."""
    return {
        item.fingerprint: f"dismissed by a learning ({LEARNINGS_FILE}, {item.who}): {item.reason}"
        for item in learnings
        if item.fingerprint
    }


def guidance(learnings: Sequence[Learning]) -> str:
    """The learnings as guidance for the agents (empty when there are none)."""
    if not learnings:
        return ""
    return "\n".join(
        [
            "The team dismissed these findings before; do not report them again, nor the same "
            "kind of finding where a line below says it does not apply:",
            *(item.guidance() for item in learnings),
        ]
    )


# -- writing ---------------------------------------------------------------------------------


_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and every control character
    escaped (the bidirectional overrides too, as every sink shows them), so the value stays
    on one line and reads as what it holds, wherever the table is posted or saved."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif controls(char) != char:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


#: Characters of a comment's text; the rest is cut.
COMMENT_LIMIT = 200


def toml_comment(text: str, limit: int = COMMENT_LIMIT) -> str:
    """``text`` (hostile: a model's claim, a file name) as the text of one TOML comment: on
    one line (every line break, Unicode's too, becomes a space, so nothing after it can read
    as a key or a table), without control or format characters (TOML forbids the first in a
    comment, and the bidirectional overrides would make it read as something else), cut at
    ``limit`` characters."""
    spaced = "".join(
        " " if c.isspace() or unicodedata.category(c).startswith("Z") else c for c in text
    )
    kept = "".join(c for c in spaced if not unicodedata.category(c).startswith("C"))
    line = " ".join(kept.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _comments(learning: Learning) -> list[str]:
    lines = []
    if learning.location:
        kind = f" ({learning.category})" if learning.category else ""
        lines.append(f"# finding: {toml_comment(learning.location + kind)}")
    if learning.claim:
        lines.append(f"# claim: {toml_comment(learning.claim)}")
    return lines


def to_toml(learning: Learning) -> str:
    """One ``[[learning]]`` table, with comments naming what it silences when known."""
    lines = ["[[learning]]", *_comments(learning)]
    for key in ("fingerprint", "glob", "category", "reason", "who", "when"):
        value = getattr(learning, key)
        if value is not None:
            lines.append(f"{key} = {toml_string(value)}")
    return "\n".join(lines) + "\n"


def append(root: Path, learning: Learning) -> Path:
    """Add ``learning`` to the learnings file of the working tree at ``root``, keeping what
    is there (entries and comments); the file is checked first and written atomically."""
    path = root / LEARNINGS_FILE
    old = ""
    if path.is_file():
        try:
            old = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"`{LEARNINGS_FILE}` could not be read: {exc}") from None
        parse_learnings(old)  # never append to a file that does not load
    separator = "" if not old else ("\n" if old.endswith("\n") else "\n\n")
    new = old + separator + to_toml(learning)
    if parse_learnings(new)[-1] != learning:  # the table must read back as written
        raise ConfigError(f"the learning could not be written to `{LEARNINGS_FILE}` as given.")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".learnings-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(new)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def new_learning(
    *,
    reason: str,
    who: str,
    today: dt.date,
    fingerprint: str | None = None,
    glob: str | None = None,
    category: str | None = None,
) -> Learning:
    """A learning checked as the file's would be (ConfigError naming what is wrong)."""
    entry: dict[str, object] = {"reason": reason, "who": who, "when": today.isoformat()}
    for key, value in (("fingerprint", fingerprint), ("glob", glob), ("category", category)):
        if value is not None:
            entry[key] = value
    return _learning(entry, "the new learning")
