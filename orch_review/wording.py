"""How orch-review words amounts in text for people: money and counted things.

One formatter for each, so every message, table and summary says them the same way: a cap of
$0.001 is never shown as "$0.00", and one file is never "1 files".
"""

from __future__ import annotations

import math

#: Nouns whose plural is not the noun plus "s" (or "es" after s, x, z, ch, sh).
_IRREGULAR = {
    "patch": "patches",
    "vulnerability": "vulnerabilities",
    "entry": "entries",
    "directory": "directories",
    "reply": "replies",
}


def usd(amount: float, *, exact: bool = False) -> str:
    """``amount`` US dollars as text, with enough digits to be true.

    Whole cents when that loses nothing that matters (``$1.25``, ``$12.00``); below a dollar,
    as many more decimals as two significant digits need (``$0.0042``, ``$0.00012``), so a
    non-zero amount never reads as ``$0.00``. ``exact`` (for amounts a person typed, such as
    a cap) keeps every significant decimal (``$1.005``).
    """
    if not math.isfinite(amount):
        return f"${amount}"
    sign = "-" if amount < 0 else ""
    value = abs(amount)
    if value == 0:
        return "$0.00"
    # Whole cents from a dollar up; below, down to the second significant digit.
    decimals = 2 if value >= 1 else max(2, 1 - math.floor(math.log10(value)))
    if exact:
        while decimals < 12 and not math.isclose(round(value, decimals), value, rel_tol=1e-9):
            decimals += 1
    text = f"{value:,.{decimals}f}"
    if decimals > 2:
        whole, fraction = text.split(".")
        text = f"{whole}.{fraction.rstrip('0').ljust(2, '0')}"
    return f"{sign}${text}"


def plural(noun: str) -> str:
    """The plural of an English ``noun`` (the last word of a phrase such as "changed file")."""
    head, _, last = noun.rpartition(" ")
    prefix = f"{head} " if head else ""
    if last in _IRREGULAR:
        return prefix + _IRREGULAR[last]
    if last.endswith(("s", "x", "z", "ch", "sh")):
        return f"{prefix}{last}es"
    return f"{prefix}{last}s"


def counted(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``count`` and ``noun`` agreeing: "1 file", "2 files", "0 changed files"."""
    word = noun if count == 1 else (plural_noun or plural(noun))
    return f"{count:,} {word}"


def noun_for(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``noun`` in the number ``count`` asks for, without the count: "file", "files"."""
    return noun if count == 1 else (plural_noun or plural(noun))


def unit_noun(count: int, unit: str) -> str:
    """A unit named in the plural ("files", "changed files") in the number ``count`` asks
    for: "1 of 1 changed file", "2 of 3 changed files"."""
    return unit.removesuffix("s") if count == 1 else unit
