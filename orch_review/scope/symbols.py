"""Names a line of code defines: top-level functions, classes and types of common languages.

A regular expression per language, matched against one line at a time: enough to tell the
main agent which names a change deleted, so it can look for what still refers to them. It
misses definitions split over lines and may take a declaration for a definition; it never
runs anything. Names are ASCII identifiers (``::``, ``~``, ``?``, ``!`` where the language
has them), at most :data:`NAME_MAX` characters: repository text reaches the prompt only as
such a name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NAME_MAX = 80

_ID = r"[A-Za-z_]\w*"
_JS_ID = r"[A-Za-z_$][\w$]*"
_JAVA_MODIFIERS = (
    r"(?:(?:public|protected|private|static|final|abstract|sealed|synchronized|native|default"
    r"|strictfp)\s+)"
)


def _compiled(patterns: Sequence[str]) -> re.Pattern[str]:
    """One pattern of the alternatives (one match per line): each captures the name once."""
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.ASCII)


_PYTHON = _compiled(
    [
        rf"^(?:async\s+)?def\s+({_ID})",
        rf"^class\s+({_ID})",
        # Methods one level in: a deleted method is called as often as a function.
        rf"^(?:    |\t)(?:async\s+)?def\s+({_ID})",
    ]
)
_JAVASCRIPT = _compiled(
    [
        rf"^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*({_JS_ID})",
        rf"^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+({_JS_ID})",
        rf"^(?:export\s+)?(?:const|let|var)\s+({_JS_ID})\s*(?::[^=]*)?=",
        rf"^(?:export\s+)?(?:declare\s+)?(?:interface|type|enum|namespace)\s+({_JS_ID})",
    ]
)
_GO = _compiled(
    [
        rf"^func\s+(?:\([^)]*\)\s*)?({_ID})",
        rf"^type\s+({_ID})",
        rf"^(?:var|const)\s+({_ID})",
    ]
)
_RUST = _compiled(
    [
        r"^(?:    )?(?:pub(?:\([^)]*\))?\s+)?"
        rf'(?:(?:const|async|unsafe|extern\s+"[^"]*")\s+)*fn\s+({_ID})',
        rf"^(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|mod|union|static|const|macro_rules!)\s*({_ID})",
    ]
)
_JAVA = _compiled(
    [
        rf"^\s{{0,8}}{_JAVA_MODIFIERS}*(?:class|interface|enum|record|@interface)\s+({_ID})",
        # A method: at least one modifier, a return type, the name and "(".
        rf"^\s{{0,8}}{_JAVA_MODIFIERS}+(?:<[^>]*>\s*)?[\w<>\[\],.?]+(?:\s+[\w<>\[\],.?]+)*?\s+({_ID})\s*\(",
    ]
)
_C = _compiled(
    [
        r"^#\s*define\s+([A-Za-z_]\w*)",
        r"^(?:typedef\s+)?(?:struct|class|enum(?:\s+class)?|union|namespace)\s+"
        rf"({_ID})\s*[{{:;]?\s*$",
        # A function at column 0: a return type, the (qualified) name and "(".
        r"^(?!(?:return|else|if|for|while|switch|do|case|goto|typedef)\b)"
        r"[A-Za-z_][\w:<>,*& ]*?[\s*&]"
        rf"((?:{_ID}::)*~?{_ID})\s*\([^;]*$",
    ]
)
_RUBY = _compiled(
    [
        r"^\s*def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?)",
        r"^\s*(?:class|module)\s+([A-Z]\w*(?:::[A-Z]\w*)*)",
    ]
)

_BY_SUFFIX: dict[str, re.Pattern[str]] = {
    **dict.fromkeys((".py", ".pyi"), _PYTHON),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"), _JAVASCRIPT),
    ".go": _GO,
    ".rs": _RUST,
    ".java": _JAVA,
    **dict.fromkeys((".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"), _C),
    **dict.fromkeys((".rb", ".rake"), _RUBY),
}
_NOT_NAMES = frozenset(
    {"if", "for", "while", "switch", "return", "new", "else", "main", "__init__", "init"}
)


def patterns_for(path: str) -> re.Pattern[str] | None:
    """The definition pattern of ``path``'s language (None when it is not one of them)."""
    dot = path.rfind(".")
    return _BY_SUFFIX.get(path[dot:].lower()) if dot > path.rfind("/") else None


def defined(pattern: re.Pattern[str] | None, line: str) -> str | None:
    """The name ``line`` defines, or None."""
    match = pattern.match(line) if pattern is not None else None
    if match is None:
        return None
    name = next(group for group in match.groups() if group)
    return None if name in _NOT_NAMES or len(name) > NAME_MAX else name
