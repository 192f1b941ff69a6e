"""How a file name, and free text that names files, is written: on one terminal line (git's
C-quoting), in text that must be UTF-8, and in JSON that keeps a name's exact bytes.

A leaf: it imports nothing of the package, so scope, findings and the reporters all use it.
"""

from __future__ import annotations

import base64
import codecs
import re
from typing import Any


def unquote_path(raw: str) -> str:
    """A path as git prints it in a patch header (C-quoted when unusual)."""
    if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
        data, _ = codecs.escape_decode(raw[1:-1].encode("utf-8"))
        return data.decode("utf-8", errors="surrogateescape")
    return raw


# git's short escapes (quote.c sq_lookup); every other control byte is written in octal.
_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v",
              "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}  # fmt: skip


def _c_escape(ch: str) -> str:
    if ch in _C_ESCAPES:
        return _C_ESCAPES[ch]
    if ch.isprintable():
        return ch
    # A byte that was not UTF-8 (decoded with surrogateescape) is that byte; any other
    # unprintable character is its UTF-8 bytes, as git writes them.
    raw = ch.encode("utf-8", "surrogateescape")
    return "".join(f"\\{byte:03o}" for byte in raw)


def quote_path(path: str) -> str:
    """``path`` on one line and in valid UTF-8: C-quoted as git shows it (``"caf\\351.py"``,
    ``"a\\tb"``) when it holds a control character or a byte that is not UTF-8; unchanged
    otherwise (printable non-ASCII names stay readable, as with ``core.quotePath=false``)."""
    if path.isprintable():
        return path
    return '"' + "".join(_c_escape(ch) for ch in path) + '"'


def is_utf8(text: str) -> bool:
    """False when ``text`` holds bytes that were not UTF-8 (surrogate escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class RealPath(str):
    """A file name as the file system has it: UTF-8, with each byte that is not UTF-8 as a
    surrogate escape (U+DC80-U+DCFF, as ``os.fsdecode`` gives it). :func:`json_safe` keeps
    it as it is and :func:`dumps` writes those escapes as ``\\udcXX``, so that
    ``os.fsencode(json.loads(...))`` is the name's exact bytes."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def path_for_json(path: str) -> RealPath:
    """``path`` as every JSON format carries it: the real name (:class:`RealPath`); JSON
    escapes its control characters, :func:`dumps` its bytes that are not UTF-8."""
    return RealPath(path)


def path_for_text(path: str) -> str:
    """``path`` for text that must be valid UTF-8 and has no escapes of its own (XML, a CI
    log's workflow commands): itself when it is UTF-8, else git's C-quoted form."""
    return path if is_utf8(path) else quote_path(path)


def dumps(data: Any, **options: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, **options)`` with every lone surrogate (a byte
    of a :class:`RealPath` that is not UTF-8) written as a ``\\uXXXX`` escape: valid UTF-8
    text, and the exact name again for a reader that decodes with surrogate escapes."""
    import json

    text = json.dumps(data, ensure_ascii=False, **options)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def path_fields(path: str, key: str = "path") -> dict[str, str]:
    """``{key: path_for_json(path)}``, plus ``{key}_bytes_b64``, the name's exact bytes in
    base64, when the name is not UTF-8 (for readers whose JSON decoder refuses a lone
    surrogate)."""
    fields: dict[str, str] = {key: path_for_json(path)}
    if not is_utf8(path):
        raw = path.encode("utf-8", "surrogateescape")
        fields[f"{key}_bytes_b64"] = base64.b64encode(raw).decode("ascii")
    return fields


def json_safe(value: Any) -> Any:
    """JSON-ready ``value`` with every string valid UTF-8 (:func:`text_for_json`), file
    names (:class:`RealPath`) aside: :func:`dumps` writes those."""
    if isinstance(value, RealPath):
        return value
    if isinstance(value, str):
        return text_for_json(value)
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def text_for_json(text: str) -> str:
    """Free text (a description naming paths) with any non-UTF-8 byte written in octal."""
    if is_utf8(text):
        return text
    return "".join(_c_escape(ch) if not is_utf8(ch) else ch for ch in text)
