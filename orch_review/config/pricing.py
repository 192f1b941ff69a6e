"""Token prices per model, used to estimate what a review costs."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from orch_review.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of each kind."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        cache_write_tokens: int = 0,
        cache_read_tokens: int = 0,
    ) -> float:
        """Cost in USD of the given token counts."""
        return (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_write_tokens * self.cache_write
            + cache_read_tokens * self.cache_read
        ) / 1_000_000


_OPUS = Price(input=5.0, output=25.0, cache_write=6.25, cache_read=0.5)
_SONNET = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)
_HAIKU = Price(input=1.0, output=5.0, cache_write=1.25, cache_read=0.1)

# Estimates, not a price list: they go stale. Users override or add models under
# `[tool.orch-review.prices."<model>"]`, and costs are only ever reported as estimates.
DEFAULT_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "claude-opus-5-5": _OPUS,
        "claude-opus-5": _OPUS,
        "claude-opus-4-8": _OPUS,
        "claude-opus-4-7": _OPUS,
        "claude-opus-4-6": _OPUS,
        "claude-opus-4-5": _OPUS,
        "claude-sonnet-5": _SONNET,
        "claude-sonnet-4-6": _SONNET,
        "claude-sonnet-4-5": _SONNET,
        "claude-haiku-4-5": _HAIKU,
    }
)

PRICE_KEYS = ("input", "output", "cache-write", "cache-read")


def lookup_price(prices: Mapping[str, Price], model: str) -> tuple[Price, bool]:
    """Price for `model` and whether it is known (False: the dearest known price, a guess).

    An exact key wins, then the longest key that prefixes the model id at a word boundary,
    so dated ids like "claude-opus-5-5-20261001" find "claude-opus-5-5". Cloud providers'
    spellings of the same model are read as the Claude API's: Vertex AI's
    "claude-opus-4-5@20251101", Bedrock's "us.anthropic.claude-opus-4-5-20251101-v1:0" and
    inference profile ARNs ending in such an id.
    """
    if model in prices:
        return prices[model], True
    name = model.rpartition("/")[2]
    name = name.partition("anthropic.")[2] or name
    if name in prices:
        return prices[name], True
    prefixes = [
        key
        for key in prices
        if name.startswith(key) and len(name) > len(key) and not name[len(key)].isalnum()
    ]
    if prefixes:
        return prices[max(prefixes, key=len)], True
    # Overestimating is the safe direction when the numbers feed a budget cap.
    known = prices.values() or DEFAULT_PRICES.values()
    return max(known, key=lambda p: (p.output, p.input, p.cache_write, p.cache_read)), False


def parse_prices(table: object, where: str, base: Mapping[str, Price]) -> Mapping[str, Price]:
    """Validate a `prices` table from a config file and merge it over `base`.

    `where` names the file for messages. A model already in `base` may set only some keys;
    a new model needs `input` and `output`, and its cache prices default to the usual
    1.25x and 0.1x of input.
    """
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: `prices` must be a table of models, got {table!r}")
    merged = dict(base)
    for model, entry in table.items():
        label = f'prices."{model}"'
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: `{label}` must be a table of prices, got {entry!r}")
        values: dict[str, float] = {}
        for raw_key, value in entry.items():
            key = raw_key.replace("_", "-")
            if key not in PRICE_KEYS:
                close = difflib.get_close_matches(key, PRICE_KEYS, n=1)
                hint = f" (did you mean `{close[0]}`?)" if close else ""
                raise ConfigError(f"{where}: unknown key `{label}.{raw_key}`{hint}")
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ConfigError(
                    f"{where}: `{label}.{raw_key}` must be a number of USD per million tokens"
                    f" of at least 0, got {value!r}"
                )
            values[key.replace("-", "_")] = float(value)
        if model in merged:
            old = merged[model]
            merged[model] = Price(
                input=values.get("input", old.input),
                output=values.get("output", old.output),
                cache_write=values.get("cache_write", old.cache_write),
                cache_read=values.get("cache_read", old.cache_read),
            )
        elif "input" in values and "output" in values:
            merged[model] = Price(
                input=values["input"],
                output=values["output"],
                cache_write=values.get("cache_write", values["input"] * 1.25),
                cache_read=values.get("cache_read", values["input"] * 0.1),
            )
        else:
            raise ConfigError(
                f"{where}: `{label}` is a model without a built-in price, so it needs both"
                " `input` and `output` (USD per million tokens)"
            )
    return MappingProxyType(merged)
