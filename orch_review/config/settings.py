"""Configuration: one frozen :class:`Config`, built once and passed down explicitly.

Sources, in increasing precedence: defaults < file < environment < flags. The file is
`<root>/.orch-review.toml` (the whole file is the table) or else the `[tool.orch-review]`
table of `<root>/pyproject.toml`. Every source goes through the same table of keys
(`_KEYS`), so a value is validated the same way wherever it comes from. Environment
variables are `ORCH_REVIEW_<KEY>` (comma-separated for `exclude`); an empty one counts as
unset, and `none` clears an optional setting such as a budget cap.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NamedTuple, get_args

from orch_review.config.choices import (
    CATEGORIES,
    Effort,
    FailOn,
    FilterMode,
    ProveLevel,
    Provider,
    Reaction,
    SandboxMode,
    Strictness,
)
from orch_review.config.pricing import DEFAULT_PRICES, Price, lookup_price, parse_prices
from orch_review.errors import ConfigError
from orch_review.scope.reviewable import DEFAULT_GENERATED, DEFAULT_MAX_FILE_SIZE

FOCUS_CATEGORIES = CATEGORIES


class PathInstruction(NamedTuple):
    """Review instructions for the files matching a gitignore-style glob."""

    glob: str
    text: str


FILE_NAME = ".orch-review.toml"
ENV_PREFIX = "ORCH_REVIEW_"


@dataclass(frozen=True, slots=True)
class Config:
    """Everything configurable about a review; build it with :func:`load_config`."""

    provider: Provider = "anthropic"
    model: str = "claude-opus-5-5"
    subagent_model: str | None = None
    effort: Effort = "xhigh"
    max_concurrent: int = 10
    max_subtasks: int = 200
    subagent_max_turns: int = 15
    inline_file_bytes: int = 24_000  # three tool outputs' worth
    pack_subtasks: bool = True
    capped_sweep: bool = True
    hedge: bool = True
    main_max_turns: int = 30
    bash_timeout: float = 60.0
    tool_output_cap: int = 8000
    request_timeout: float = 600.0
    # Within a CI runner's notice before it kills a cancelled job (GitHub Actions: 7.5 s from
    # SIGINT to SIGTERM, whose arrival ends the wait too).
    interrupt_grace: float = 7.0
    max_output_tokens: int = 64000
    refresh_interval: int = 10
    max_retries: int = 4
    journal_path: Path | None = None
    journal: bool = True
    max_agents: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    eval_max_total_cost_usd: float | None = None
    confirm_above_usd: float = 5.0
    fail_on: FailOn = "high"
    exclude: tuple[str, ...] = ()
    sandbox: SandboxMode = "auto"
    bwrap_path: Path | None = None
    filter_mode: FilterMode | None = None
    generated: tuple[str, ...] = DEFAULT_GENERATED
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    require_key: bool = True
    guidance_files: tuple[str, ...] = ("REVIEW.md",)
    guidance_max_bytes: int = 20_000
    agent_rules: bool = True
    instructions: str | None = None
    focus: tuple[str, ...] = ()
    strictness: Strictness = "info"
    critic: bool | None = None
    verify: bool = True
    walkthrough: bool = True
    trigger: str = "@orch-review"
    ignore_reaction: Reaction = "-1"
    suggestion_check: str | None = None
    prove: ProveLevel | None = None  # None: "high" where a runner is found
    prove_timeout: float = 120.0  # seconds the report waits for proofs after verification
    issue_projects: tuple[str, ...] = ()
    path_instructions: tuple[PathInstruction, ...] = ()
    # A mapping proxy is unhashable, and the table is too long to be useful in a repr.
    prices: Mapping[str, Price] = field(
        default_factory=lambda: DEFAULT_PRICES, hash=False, repr=False
    )
    source: Path | None = None

    @property
    def agent_model(self) -> str:
        """Model for subagents and verifiers."""
        return self.subagent_model or self.model

    def price_for(self, model: str) -> tuple[Price, bool]:
        """Price of `model`; the flag is False when it is a guess for an unknown model."""
        return lookup_price(self.prices, model)


@dataclass(frozen=True, slots=True)
class _Kind:
    """How to check one type of value, and how to read it from an environment string."""

    expected: str  # completes "must be ..."
    check: Callable[[object], object]  # native value -> typed value; ValueError if invalid
    from_text: Callable[[str], object] = str  # env string -> native value for `check`


def _or_text(convert: Callable[[str], object]) -> Callable[[str], object]:
    """Convert env text, leaving it a string when it does not parse so `check` rejects it."""

    def parse(text: str) -> object:
        try:
            return convert(text.strip())
        except ValueError:
            return text

    return parse


def _integer(lo: int, hi: int | None = None) -> _Kind:
    def check(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError
        if value < lo or (hi is not None and value > hi):
            raise ValueError
        return value

    expected = f"an integer from {lo} to {hi}" if hi is not None else f"an integer of at least {lo}"
    return _Kind(expected, check, _or_text(int))


def _positive(hi: float | None = None, unit: str = "a number") -> _Kind:
    def check(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError
        if not math.isfinite(value) or value <= 0 or (hi is not None and value > hi):
            raise ValueError
        return float(value)

    expected = f"{unit} greater than 0" + (f" and at most {hi:g}" if hi is not None else "")
    return _Kind(expected, check, _or_text(float))


def _choice(options: tuple[str, ...]) -> _Kind:
    def check(value: object) -> object:
        if value not in options:
            raise ValueError
        return value

    return _Kind("one of " + ", ".join(repr(o) for o in options), check)


def _check_text(value: object) -> object:
    if not isinstance(value, str) or not value.strip():
        raise ValueError
    return value


def _check_bool(value: object) -> object:
    if not isinstance(value, bool):
        raise ValueError
    return value


def _bool_from_text(text: str) -> object:
    words = {"1": True, "true": True, "yes": True, "on": True}
    words |= {"0": False, "false": False, "no": False, "off": False}
    return words.get(text.strip().lower(), text)


def _check_path(value: object) -> object:
    if isinstance(value, os.PathLike) or (isinstance(value, str) and value.strip()):
        return Path(value)
    raise ValueError


def _check_globs(value: object) -> object:
    if not isinstance(value, list | tuple):
        raise ValueError
    if not all(isinstance(item, str) and item.strip() for item in value):
        raise ValueError
    return tuple(value)


def _globs_from_text(text: str) -> object:
    return [item.strip() for item in text.split(",") if item.strip()]


_TEXT = _Kind("a non-empty string", _check_text)
_BOOL = _Kind("true or false", _check_bool, _bool_from_text)
_PATH = _Kind("a non-empty path", _check_path)
_GLOBS = _Kind("a list of non-empty glob patterns", _check_globs, _globs_from_text)
_SECONDS_TO_HOUR = _positive(3600, "a number of seconds")


def _check_categories(value: object) -> object:
    checked = _check_globs(value)
    assert isinstance(checked, tuple)
    if not all(item in FOCUS_CATEGORIES for item in checked):
        raise ValueError
    return checked


_CATEGORIES = _Kind(
    "a list of categories among " + ", ".join(FOCUS_CATEGORIES), _check_categories, _globs_from_text
)


def _check_trigger(value: object) -> object:
    if not isinstance(value, str) or not re.fullmatch(r"@[A-Za-z0-9][A-Za-z0-9-]{0,38}", value):
        raise ValueError
    return value


_TRIGGER = _Kind("an @-mention such as `@orch-review`", _check_trigger)
_PROJECT_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _check_projects(value: object) -> object:
    checked = _check_globs(value)
    assert isinstance(checked, tuple)
    for project in checked:
        parts = project.split("/")
        if len(parts) < 2 or not all(_PROJECT_PART.fullmatch(p) and p != ".." for p in parts):
            raise ValueError
    return checked


_PROJECTS = _Kind(
    "a list of project paths such as `octo/other` or `group/subgroup/project`",
    _check_projects,
    _globs_from_text,
)
_NAMES = _Kind("a list of file names", _check_globs, _globs_from_text)


def _never(_: object) -> bool:
    return False


class _Key(NamedTuple):
    name: str  # the Config field, snake_case
    kind: _Kind
    doc: str
    # Values the config file may not set. The file is part of the repository under review,
    # so a change could edit it: it must not be able to weaken the sandbox.
    refused_in_file: Callable[[object], bool] = _never

    @property
    def kebab(self) -> str:
        return self.name.replace("_", "-")

    @property
    def env_var(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def optional(self) -> bool:
        return _DEFAULTS[self.name] is None


_DEFAULTS: dict[str, object] = {f.name: getattr(Config(), f.name) for f in fields(Config)}

# Every scalar Config field, in the order the docs list them.
_KEYS: tuple[_Key, ...] = (
    _Key(
        "provider",
        _choice(get_args(Provider)),
        "Where the models run: `anthropic` (the Claude API, or a gateway at ANTHROPIC_BASE_URL),"
        " `bedrock`, `vertex` or `foundry`; each reads its own credentials from the environment.",
    ),
    _Key(
        "model",
        _TEXT,
        "Model for the main (orchestrating) agent, as the provider names it (Bedrock: a model id"
        " or inference profile such as `global.anthropic.claude-opus-4-6-v1`).",
    ),
    _Key("subagent_model", _TEXT, "Model for subagents and verifiers; defaults to `model`."),
    _Key("effort", _choice(get_args(Effort)), "Reasoning effort for every agent."),
    _Key("max_concurrent", _integer(1, 100), "Agents' model requests in flight at once."),
    _Key("max_subtasks", _integer(1, 1000), "Most subtasks one Workflow call may start."),
    _Key("subagent_max_turns", _integer(1, 200), "Turn limit for each subagent."),
    _Key(
        "inline_file_bytes",
        _integer(0, 1_000_000),
        "Bytes of the files a subtask names that its subagent's task shows, numbered, so it"
        " need not spend a turn reading them; `0` shows none.",
    ),
    _Key(
        "pack_subtasks",
        _BOOL,
        "Run a Workflow call's small subtasks (files under 4,000 bytes, shown in the task)"
        " in as many agents as run at once when there are more of them; `false` gives each"
        " its own agent.",
    ),
    _Key(
        "capped_sweep",
        _BOOL,
        "When `max-cost-usd` is below the estimate's high end, plan without the main agent:"
        " the sweep's groups cover every file, so the money goes to coverage; `false` keeps"
        " the main agent.",
    ),
    _Key(
        "hedge",
        _BOOL,
        "Send a fan-out agent's request once more when it is late (outstanding as long as"
        " its role's 95th percentile in this review, or its 75th while a request slot is"
        " free) and take the first answer: a few more requests, a shorter tail; never near a"
        " cap. `false` sends each request once.",
    ),
    _Key("main_max_turns", _integer(1, 500), "Turn limit for the main agent."),
    _Key("bash_timeout", _SECONDS_TO_HOUR, "Seconds before a bash tool call is stopped."),
    _Key("tool_output_cap", _integer(500, 1_000_000), "Characters of tool output kept."),
    _Key("request_timeout", _positive(unit="a number of seconds"), "Seconds per API request."),
    _Key(
        "interrupt_grace",
        _positive(60, "a number of seconds"),
        "Seconds an interrupted review waits for the replies in flight.",
    ),
    _Key("max_output_tokens", _integer(1, 1_000_000), "Output token limit per API request."),
    _Key("refresh_interval", _integer(1, 1000), "User turns between mode refreshers."),
    _Key("max_retries", _integer(0, 20), "API retries per request on transient errors."),
    _Key("journal_path", _PATH, "Where to write the session journal (relative to the root)."),
    _Key("journal", _BOOL, "Write a session journal; `false` disables it."),
    _Key("max_agents", _integer(1), "Session cap on agents started."),
    _Key("max_total_tokens", _integer(1), "Session cap on tokens across all agents."),
    _Key("max_cost_usd", _positive(), "Session cap on estimated cost in USD."),
    _Key(
        "eval_max_total_cost_usd",
        _positive(),
        "`eval`: cap on the estimated cost of all its cases together, in USD.",
    ),
    _Key(
        "confirm_above_usd",
        _positive(),
        "In a terminal, ask before starting a review whose estimated cost may exceed this many"
        " USD (never in CI, with `--yes`, or when not on a terminal).",
    ),
    _Key("fail_on", _choice(get_args(FailOn)), "Lowest severity that makes the exit code 1."),
    _Key("exclude", _GLOBS, "Gitignore-style globs of paths not to review."),
    _Key(
        "sandbox",
        _choice(get_args(SandboxMode)),
        "Where agents' commands run: `auto` takes the strongest sandbox that passes a start-up"
        " self-test (`bubblewrap`, then `landlock`, then `tools`: no shell, read-only tools);"
        " `on` a sandboxed shell or exit 2; `bubblewrap`, `landlock` or `tools` that one only;"
        " `off` an unsandboxed shell, with a warning. The config file may not say `off`, nor"
        " `landlock` where bubblewrap would do.",
        refused_in_file=lambda value: value in ("off", "landlock"),
    ),
    _Key(
        "bwrap_path",
        _PATH,
        "The bubblewrap executable; default: `bwrap` on PATH. 0.11 or later shows a large change"
        " as one overlay instead of a link per file. Not settable in the config file.",
        refused_in_file=lambda value: True,
    ),
    _Key(
        "filter_mode",
        _choice(get_args(FilterMode)),
        "Which confirmed findings to report: `added` (on added or changed lines), "
        "`diff_context` (in the diff hunks), `file` (in changed files), `nofilter`. "
        "Default: `added` for a change, `nofilter` for --all.",
    ),
    _Key(
        "generated",
        _GLOBS,
        "Globs of lock files and generated or vendored code to skip (replaces the built-in list).",
    ),
    _Key("max_file_size", _integer(1), "Files larger than this many bytes are skipped."),
    _Key(
        "require_key",
        _BOOL,
        "With no API key the pre-commit hook fails (exit 2) saying what to set; `false` lets "
        "it pass with one line saying the review was skipped.",
    ),
    _Key(
        "guidance_files",
        _NAMES,
        "Names of review guidance files read at the root and in every directory "
        "(e.g. `REVIEW.md`, `CLAUDE.md`).",
    ),
    _Key("guidance_max_bytes", _integer(100), "Guidance sent per agent at most; more is cut."),
    _Key(
        "agent_rules",
        _BOOL,
        "Read the rules written for coding agents (AGENTS.md, CLAUDE.md, Cursor and Copilot "
        "rules, .windsurfrules) as review guidance; `false` reads only `guidance-files`.",
    ),
    _Key("instructions", _TEXT, "House rules for every agent of the review."),
    _Key("focus", _CATEGORIES, "Categories to concentrate on (empty: all)."),
    _Key(
        "strictness",
        _choice(get_args(Strictness)),
        "The lowest severity reported: `info` (everything) to `high`.",
    ),
    _Key(
        "critic",
        _BOOL,
        "Run the completeness critic after the first wave (default: for --all and for changes "
        "of more than 20 files or 500 lines).",
    ),
    _Key(
        "verify",
        _BOOL,
        "Run the verification wave; `false` leaves every finding unverified and the review "
        "incomplete (for measuring what verification buys).",
    ),
    _Key(
        "walkthrough",
        _BOOL,
        "Add a walkthrough of the change (a line per file, a Mermaid diagram) to the summary "
        "comment of `github`, `gitlab`, `pr --post` and `mr --post`: unverified description.",
    ),
    _Key(
        "trigger",
        _TRIGGER,
        "The mention that asks orch-review a question in a pull request comment.",
    ),
    _Key(
        "ignore_reaction",
        _choice(get_args(Reaction)),
        "The reaction on an orch-review comment that dismisses its finding for the pull request"
        " (`none`: only `@orch-review ignore`).",
    ),
    _Key(
        "suggestion_check",
        _TEXT,
        "A shell command a suggested replacement must pass before it is offered as a "
        "committable fix, run in the sandbox on a scratch copy with the replacement applied; "
        "`{path}` is the file's repository-relative path, shell-quoted.",
    ),
    _Key(
        "prove",
        _choice(get_args(ProveLevel)),
        "Which confirmed findings a prover tries to show with a failing test that orch-review "
        "runs in the sandbox: `off`, `high` or `all` (default: `high` where a runner is found).",
    ),
    _Key(
        "prove_timeout",
        _SECONDS_TO_HOUR,
        "Seconds the report waits for proofs still running once verification has ended;"
        " proofs not finished by then are reported `not-proven` (time limit).",
    ),
    _Key(
        "issue_projects",
        _PROJECTS,
        "Other projects (`OWNER/NAME` on GitHub, the project's path on GitLab) whose issues"
        " a pull or merge request's description may link for the intent check; issues of any"
        " other project are not read (default: only the request's own project).",
    ),
)
_BY_NAME = {key.name: key for key in _KEYS}
_PATH_INSTRUCTIONS_DOC = (
    "Instructions for files matching a glob: a list of tables with `glob` and `text`."
)
_PRICES_DOC = (
    "USD per million tokens per model (input, output, cache-write, cache-read),"
    " merged over built-in estimates."
)


class ConfigKey(NamedTuple):
    """One documented configuration key, as spelled in the config file."""

    key: str
    default: object
    doc: str

    @property
    def env_var(self) -> str | None:
        """The environment variable that sets this key, if any."""
        name = self.key.replace("-", "_")
        return ENV_PREFIX + name.upper() if name in _BY_NAME else None


CONFIG_KEYS: tuple[ConfigKey, ...] = (
    *(ConfigKey(k.kebab, _DEFAULTS[k.name], k.doc) for k in _KEYS),
    ConfigKey("path-instructions", (), _PATH_INSTRUCTIONS_DOC),
    ConfigKey("prices", DEFAULT_PRICES, _PRICES_DOC),
)


# ORCH_REVIEW_* variables that are not configuration keys but are read all the same.
OTHER_VARIABLES = frozenset({"ORCH_REVIEW_CACHE_DIR"})
DEFAULT_ORIGIN = "default"


@dataclass(frozen=True)
class Explained:
    """A configuration, where each of its settings came from, and what was ignored."""

    config: Config
    # Config field name -> "default", the file's name, "environment variable X" or "--flag".
    origins: Mapping[str, str]
    warnings: tuple[str, ...] = ()


def load_config(
    root: Path,
    env: Mapping[str, str],
    overrides: Mapping[str, object],
    config_file: Path | None = None,
) -> Config:
    """Build the configuration for a review of the project at `root`.

    `env` is the process environment (passed in, never read here); `overrides` maps Config
    field names to values from command-line flags, where None means "not given";
    `config_file` (``--config``) replaces the file found at `root`.
    Raises ConfigError naming the key and where it came from.
    """
    return explain_config(root, env, overrides, config_file).config


def explain_config(
    root: Path,
    env: Mapping[str, str],
    overrides: Mapping[str, object],
    config_file: Path | None = None,
) -> Explained:
    """:func:`load_config`, with the origin of every setting and warnings about what was
    ignored (an ``ORCH_REVIEW_*`` variable that is no setting, a table that lost)."""
    source: Path | None
    if config_file is not None:
        table, source, where = _read_given(config_file, root)
    else:
        table, source, where = _read_file(root)
    label = where.replace("`", "")
    warnings = unknown_variables(env)
    if config_file is None:  # --config is a choice: the files it replaces are not news
        warnings += losing_table(root, source)
    origins: dict[str, str] = {}
    changes: dict[str, Any] = {}  # Any: each value is checked against its field's kind
    for name, value in _file_items(table, where):
        origins[name] = label
        if name == "prices":
            changes["prices"] = parse_prices(value, where, DEFAULT_PRICES)
        elif name == "path_instructions":
            changes["path_instructions"] = _path_instructions(value, where)
        else:
            key = _BY_NAME[name]
            changes[name] = _validate(key, value, f"{where}: `{key.kebab}`")
            if key.refused_in_file(changes[name]):
                raise ConfigError(
                    f"{where}: `{key.kebab} = {value!r}` can only be set with {key.env_var} or "
                    f"--{key.kebab}, because the config file is part of the content under review."
                )
    for key in _KEYS:
        text = env.get(key.env_var)
        if text is None or not text.strip():
            continue  # an empty variable counts as unset, as is usual in shells and CI
        if key.optional and text.strip().lower() == "none":
            changes[key.name] = None
            continue
        where_env = f"environment variable {key.env_var}"
        changes[key.name] = _validate(key, key.kind.from_text(text), where_env, shown=text)
        origins[key.name] = where_env
    for name, value in overrides.items():
        if value is None or value == ():  # () is what click gives for an unused multiple option
            continue
        if name not in _BY_NAME:
            raise ValueError(f"unknown configuration override {name!r}")  # a bug, not user error
        changes[name] = _validate(_BY_NAME[name], value, f"`--{name.replace('_', '-')}`")
        origins[name] = f"--{name.replace('_', '-')}"
    journal_path = changes.get("journal_path")
    if isinstance(journal_path, Path):
        changes["journal_path"] = root / journal_path
    config = replace(Config(), source=source, **changes)
    _check_model_ids(config)
    every = [f.name for f in fields(Config) if f.name != "source"]
    return Explained(
        config, {name: origins.get(name, DEFAULT_ORIGIN) for name in every}, tuple(warnings)
    )


def _check_model_ids(config: Config) -> None:
    """Bedrock names models differently (``anthropic.`` ids, inference profiles, ARNs): catch
    a model id meant for another provider before any request is made."""
    for key, model in (("model", config.model), ("subagent-model", config.subagent_model)):
        if model is None:
            continue
        bedrock_id = "anthropic." in model or model.startswith("arn:")
        if config.provider == "bedrock" and not bedrock_id:
            raise ConfigError(
                f"`{key}` is {model!r}, which is not a Bedrock model id: with provider = "
                "bedrock, set `model` and `subagent-model` to Bedrock ids or inference profiles "
                "such as `global.anthropic.claude-opus-4-6-v1`."
            )
        if config.provider == "vertex" and bedrock_id:
            raise ConfigError(
                f"`{key}` is {model!r}, a Bedrock model id, but the provider is vertex: use a "
                "Vertex AI model id such as `claude-opus-4-5@20251101`."
            )


def _path_instructions(value: object, where: str) -> tuple[PathInstruction, ...]:
    """``[{glob = "...", text = "..."}, ...]`` from the config file."""
    expected = "a list of tables with a `glob` and a `text` string"
    if not isinstance(value, list):
        raise ConfigError(f"{where}: `path-instructions` must be {expected}, got {value!r}")
    out = []
    for number, item in enumerate(value, 1):
        if (
            not isinstance(item, dict)
            or set(item) != {"glob", "text"}
            or not all(isinstance(item[k], str) and item[k].strip() for k in ("glob", "text"))
        ):
            raise ConfigError(
                f"{where}: `path-instructions` entry {number} must be a table with exactly a "
                f"non-empty `glob` and `text`, got {item!r}"
            )
        out.append(PathInstruction(item["glob"], item["text"]))
    return tuple(out)


def _validate(key: _Key, value: object, where: str, shown: object = None) -> object:
    """The one place values are checked, whichever source they came from."""
    try:
        return key.kind.check(value)
    except ValueError:
        got = value if shown is None else shown
        raise ConfigError(f"{where} must be {key.kind.expected}, got {got!r}") from None


def _read_file(root: Path) -> tuple[dict[str, object], Path | None, str]:
    """The config table, the file it came from, and how messages should name it."""
    dedicated = root / FILE_NAME
    if dedicated.is_file():
        return _parse_toml(dedicated, root), dedicated, f"`{_shown(dedicated, root)}`"
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return {}, None, ""
    where = f"`{_shown(pyproject, root)}` [tool.orch-review]"
    tool = _parse_toml(pyproject, root).get("tool")
    table = tool.get("orch-review") if isinstance(tool, dict) else None
    if table is None:
        return {}, None, ""
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table, got {table!r}")
    return table, pyproject, where


def _read_given(path: Path, root: Path) -> tuple[dict[str, object], Path, str]:
    """The table of the file ``--config`` names: a ``pyproject.toml``'s [tool.orch-review],
    else the whole file, as in ``.orch-review.toml``."""
    shown = _shown(path, root)
    if not path.is_file():
        raise ConfigError(f"--config {shown}: no such file; check the path.")
    data = _parse_toml(path, root)
    if path.name != "pyproject.toml":
        return data, path, f"`{shown}`"
    tool = data.get("tool")
    table = tool.get("orch-review") if isinstance(tool, dict) else None
    where = f"`{shown}` [tool.orch-review]"
    if table is None:
        raise ConfigError(f"--config {shown}: it has no [tool.orch-review] table.")
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table, got {table!r}")
    return table, path, where


def parse_toml(path: Path, root: Path) -> dict[str, object]:
    """A TOML file's data; ConfigError naming it when it cannot be read or parsed."""
    return _parse_toml(path, root)


def _parse_toml(path: Path, root: Path) -> dict[str, object]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
        raise ConfigError(f"`{_shown(path, root)}` is not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"`{_shown(path, root)}` could not be read: {exc}") from None


def check_table(table: Mapping[str, object], where: str) -> None:
    """ConfigError when ``table`` has an unknown or doubled key (values are not checked)."""
    _file_items(table, where)


def known_variables() -> list[str]:
    """The environment variables that set configuration keys."""
    return [key.env_var for key in _KEYS]


def _file_items(table: Mapping[str, object], where: str) -> list[tuple[str, object]]:
    """(field name, value) pairs of a config table, rejecting unknown or doubled keys."""
    known = [key.kebab for key in _KEYS] + ["path-instructions", "prices"]
    items: dict[str, object] = {}
    for raw, value in table.items():
        kebab = raw.replace("_", "-")
        if kebab not in known:
            raise ConfigError(f"{where}: unknown key `{raw}`{_suggest(kebab, known, where)}")
        name = kebab.replace("-", "_")
        if name in items:
            raise ConfigError(f"{where}: `{kebab}` is set twice, in kebab-case and snake_case")
        items[name] = value
    return list(items.items())


def _suggest(kebab: str, known: list[str], where: str) -> str:
    if kebab == "tool" and where.endswith(f"{FILE_NAME}`"):
        return f" ({FILE_NAME} is itself the table: put its keys at the top level)"
    close = difflib.get_close_matches(kebab, known, n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""


def root_relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when inside it."""
    return _shown(path, root)


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def setting_from_text(name: str, text: str) -> object:
    """The value a configuration key (Config field name) takes from ``text``, as its
    environment variable would give it; ConfigError for an unknown key or a bad value."""
    key = _BY_NAME.get(name)
    if key is None:
        known = ", ".join(k.kebab for k in _KEYS)
        raise ConfigError(f"unknown setting `{name.replace('_', '-')}`; known: {known}")
    return _validate(key, key.kind.from_text(text), f"`{key.kebab}`", shown=text)


__all__ = [
    "CONFIG_KEYS",
    "Config",
    "ConfigKey",
    "Explained",
    "Price",
    "explain_config",
    "load_config",
]


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """A warning for each ``ORCH_REVIEW_*`` variable that is no setting, with the closest
    known name."""
    known = known_variables()
    warnings = []
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or name in OTHER_VARIABLES or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        warnings.append(f"environment variable {name} is not a setting and is ignored{hint}.")
    return warnings


def losing_table(root: Path, source: Path | None) -> list[str]:
    """A warning when ``pyproject.toml`` at ``root`` has a ``[tool.orch-review]`` table that
    is not read because another file was."""
    pyproject = root / "pyproject.toml"
    if source is None or source == pyproject or not pyproject.is_file():
        return []
    try:
        tool = parse_toml(pyproject, root).get("tool")
    except ConfigError:
        return []
    if not isinstance(tool, dict) or "orch-review" not in tool:
        return []
    return [
        "pyproject.toml has a [tool.orch-review] table, which is ignored: "
        f"`{root_relative(source, root)}` is read instead; keep the settings in one file."
    ]
