from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from orch_review.config.pricing import DEFAULT_PRICES, Price
from orch_review.config.settings import CONFIG_KEYS, Config, load_config
from orch_review.errors import ConfigError, ExitCode


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path


def load(root: Path, env: dict[str, str] | None = None, **overrides: object) -> Config:
    return load_config(root, env or {}, overrides)


def error(root: Path, env: dict[str, str] | None = None, **overrides: object) -> str:
    with pytest.raises(ConfigError) as info:
        load(root, env, **overrides)
    assert info.value.exit_code == ExitCode.USAGE
    return str(info.value)


def test_defaults_without_any_file(tmp_path: Path) -> None:
    config = load(tmp_path)
    assert config == Config()
    assert config.model == "claude-opus-5-5"
    assert config.agent_model == "claude-opus-5-5"
    assert config.effort == "xhigh"
    assert config.max_concurrent == 10
    assert config.journal is True
    assert config.journal_path is None
    assert config.max_cost_usd is None
    assert config.fail_on == "high"
    assert config.exclude == ()
    assert config.source is None


def test_config_keys_document_every_field_in_order() -> None:
    names = [f.name for f in dataclasses.fields(Config) if f.name != "source"]
    assert [k.key for k in CONFIG_KEYS] == [n.replace("_", "-") for n in names]
    assert all(k.doc for k in CONFIG_KEYS)
    by_key = {k.key: k for k in CONFIG_KEYS}
    assert by_key["max-concurrent"].default == 10
    assert by_key["max-concurrent"].env_var == "ORCH_REVIEW_MAX_CONCURRENT"
    assert by_key["prices"].env_var is None


def test_pyproject_table(tmp_path: Path) -> None:
    pyproject = write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.orch-review]\nmodel = "claude-sonnet-5"\n'
        'subagent-model = "claude-haiku-4-5"\nmax-concurrent = 4\nexclude = ["vendor/**"]\n',
    )
    config = load(tmp_path)
    assert config.model == "claude-sonnet-5"
    assert config.agent_model == "claude-haiku-4-5"
    assert config.max_concurrent == 4
    assert config.exclude == ("vendor/**",)
    assert config.source == pyproject


def test_pyproject_without_table_is_no_source(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n[tool.ruff]\nline-length = 100\n')
    assert load(tmp_path) == Config()


def test_dedicated_file_wins_over_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.orch-review]\nmax-concurrent = 4\neffort = 'low'\n")
    dedicated = write(tmp_path, ".orch-review.toml", "max-concurrent = 7\n")
    config = load(tmp_path)
    assert config.max_concurrent == 7
    assert config.effort == "xhigh"  # the pyproject table is not read at all
    assert config.source == dedicated


def test_kebab_and_snake_case_are_the_same_key(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "max_concurrent = 3\nfail-on = 'medium'\n")
    config = load(tmp_path)
    assert (config.max_concurrent, config.fail_on) == (3, "medium")


def test_both_spellings_at_once_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "max_concurrent = 3\nmax-concurrent = 4\n")
    message = error(tmp_path)
    assert "`max-concurrent`" in message and ".orch-review.toml" in message


def test_precedence_file_then_env_then_flags(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".orch-review.toml",
        "max-concurrent = 3\nmodel = 'from-file'\neffort = 'low'\nfail-on = 'info'\n",
    )
    env = {
        "ORCH_REVIEW_MAX_CONCURRENT": "5",
        "ORCH_REVIEW_MODEL": "from-env",
        "ORCH_REVIEW_EFFORT": "medium",
    }
    config = load(tmp_path, env, max_concurrent=8, effort=None)
    assert config.max_concurrent == 8  # flag beats env beats file
    assert config.model == "from-env"  # env beats file
    assert config.effort == "medium"  # a None flag is "not given"
    assert config.fail_on == "info"  # file beats default
    assert config.subagent_model is None  # default


def test_env_parses_every_kind(tmp_path: Path) -> None:
    env = {
        "ORCH_REVIEW_BASH_TIMEOUT": "12.5",
        "ORCH_REVIEW_JOURNAL": "false",
        "ORCH_REVIEW_EXCLUDE": "vendor/**, *.min.js,",
        "ORCH_REVIEW_MAX_COST_USD": "2",
        "ORCH_REVIEW_FAIL_ON": "never",
        "ORCH_REVIEW_SUBAGENT_MODEL": "",  # empty counts as unset
        "UNRELATED": "x",
    }
    config = load(tmp_path, env)
    assert config.bash_timeout == 12.5
    assert config.journal is False
    assert config.exclude == ("vendor/**", "*.min.js")
    assert config.max_cost_usd == 2.0
    assert config.fail_on == "never"
    assert config.subagent_model is None


def test_env_none_clears_an_optional_cap(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "max-cost-usd = 5\n")
    assert load(tmp_path, {"ORCH_REVIEW_MAX_COST_USD": "none"}).max_cost_usd is None


def test_unknown_key_suggests_the_close_one(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "max-concurent = 3\n")
    assert error(tmp_path) == (
        "`.orch-review.toml`: unknown key `max-concurent` (did you mean `max-concurrent`?)"
    )


def test_unknown_key_in_pyproject_names_the_table(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.orch-review]\nfrobnicate = 1\n")
    message = error(tmp_path)
    assert message == "`pyproject.toml` [tool.orch-review]: unknown key `frobnicate`"


def test_tool_table_in_dedicated_file_gets_a_hint(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "[tool.orch-review]\nmodel = 'x'\n")
    assert "top level" in error(tmp_path)


@pytest.mark.parametrize(
    ("line", "key", "expected"),
    [
        ("max-concurrent = 'ten'", "max-concurrent", "an integer from 1 to 100, got 'ten'"),
        ("max-concurrent = 101", "max-concurrent", "an integer from 1 to 100, got 101"),
        ("max-concurrent = 2.0", "max-concurrent", "an integer from 1 to 100, got 2.0"),
        ("max-agents = 0", "max-agents", "an integer of at least 1, got 0"),
        ("max-retries = true", "max-retries", "an integer from 0 to 20, got True"),
        ("bash-timeout = 0", "bash-timeout", "greater than 0 and at most 3600, got 0"),
        ("bash-timeout = 3601.5", "bash-timeout", "at most 3600, got 3601.5"),
        ("max-cost-usd = 'lots'", "max-cost-usd", "a number greater than 0, got 'lots'"),
        ("request-timeout = nan", "request-timeout", "greater than 0, got nan"),
        ("effort = 'extreme'", "effort", "'high', 'xhigh', 'max', got 'extreme'"),
        ("fail-on = 'critical'", "fail-on", "'info', 'never', got 'critical'"),
        ("journal = 'no'", "journal", "must be true or false, got 'no'"),
        ("exclude = 'vendor'", "exclude", "a list of non-empty glob patterns, got 'vendor'"),
        ("exclude = ['a', 3]", "exclude", "a list of non-empty glob patterns, got ['a', 3]"),
        ("model = ''", "model", "a non-empty string, got ''"),
        ("journal-path = 3", "journal-path", "a non-empty path, got 3"),
    ],
)
def test_bad_values_name_key_and_file(tmp_path: Path, line: str, key: str, expected: str) -> None:
    write(tmp_path, "pyproject.toml", f"[tool.orch-review]\n{line}\n")
    message = error(tmp_path)
    assert message.startswith(f"`pyproject.toml` [tool.orch-review]: `{key}` must be ")
    assert message.endswith(expected)


def test_message_matches_the_documented_example(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.orch-review]\nmax-concurrent = 'ten'\n")
    assert error(tmp_path) == (
        "`pyproject.toml` [tool.orch-review]: `max-concurrent` must be an integer from 1 to 100,"
        " got 'ten'"
    )


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("ORCH_REVIEW_MAX_CONCURRENT", "ten", "an integer from 1 to 100, got 'ten'"),
        ("ORCH_REVIEW_MAX_CONCURRENT", "0", "an integer from 1 to 100, got '0'"),
        ("ORCH_REVIEW_MAX_COST_USD", "-1", "a number greater than 0, got '-1'"),
        ("ORCH_REVIEW_JOURNAL", "maybe", "true or false, got 'maybe'"),
        ("ORCH_REVIEW_EFFORT", "HIGHEST", "one of 'low', 'medium', 'high', 'xhigh', 'max'"),
        ("ORCH_REVIEW_BASH_TIMEOUT", "1h", "seconds greater than 0 and at most 3600, got '1h'"),
    ],
)
def test_bad_env_values_name_the_variable(
    tmp_path: Path, var: str, value: str, expected: str
) -> None:
    message = error(tmp_path, {var: value})
    assert message.startswith(f"environment variable {var} must be ")
    assert expected in message


def test_bad_flag_values_name_the_flag(tmp_path: Path) -> None:
    assert error(tmp_path, max_concurrent=0) == (
        "`--max-concurrent` must be an integer from 1 to 100, got 0"
    )
    assert error(tmp_path, fail_on="severe").startswith("`--fail-on` must be one of ")


def test_flags_are_typed_values(tmp_path: Path) -> None:
    config = load(tmp_path, journal=False, exclude=("a/**",), max_cost_usd=3, journal_path="j")
    assert config.journal is False
    assert config.exclude == ("a/**",)
    assert config.max_cost_usd == 3.0 and isinstance(config.max_cost_usd, float)
    assert config.journal_path == tmp_path / "j"


def test_empty_tuple_flag_is_not_given(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "exclude = ['vendor/**']\n")
    assert load(tmp_path, exclude=()).exclude == ("vendor/**",)


def test_unknown_override_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_concurent"):
        load(tmp_path, max_concurent=3)


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "model = 'x'\nmax-concurrent = = 3\n")
    message = error(tmp_path)
    assert message.startswith("`.orch-review.toml` is not valid TOML: ")
    assert "line 2" in message


def test_pyproject_syntax_error_names_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.orch-review\n")
    message = error(tmp_path)
    assert message.startswith("`pyproject.toml` is not valid TOML: ") and "line 1" in message


def test_journal_path_resolves_against_root(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", "journal-path = '.cache/journal.jsonl'\n")
    assert load(tmp_path).journal_path == tmp_path / ".cache" / "journal.jsonl"
    absolute = tmp_path / "elsewhere" / "j.jsonl"
    env = {"ORCH_REVIEW_JOURNAL_PATH": str(absolute)}
    assert load(tmp_path, env).journal_path == absolute


def test_prices_merge_over_defaults(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".orch-review.toml",
        '[prices."claude-x"]\ninput = 2\noutput = 10.0\ncache-write = 2.5\ncache_read = 0.2\n'
        '[prices."claude-opus-5-5"]\noutput = 30\n'
        '[prices."my-model"]\ninput = 1.0\noutput = 2.0\n',
    )
    config = load(tmp_path)
    assert config.prices["claude-x"] == Price(2.0, 10.0, 2.5, 0.2)
    assert config.prices["claude-opus-5-5"] == Price(5.0, 30.0, 6.25, 0.5)
    assert config.prices["my-model"] == Price(1.0, 2.0, 1.25, 0.1)
    assert config.prices["claude-haiku-4-5"] == DEFAULT_PRICES["claude-haiku-4-5"]
    assert DEFAULT_PRICES["claude-opus-5-5"].output == 25.0  # defaults untouched


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('[prices."claude-x"]\ninput = -1\noutput = 1\n', '`prices."claude-x".input` must be'),
        ('[prices."claude-x"]\ninput = 1\noutput = "free"\n', "got 'free'"),
        (
            '[prices."claude-x"]\ninput = 1\noutput = 1\ncache-reed = 1\n',
            "did you mean `cache-read`",
        ),
        ('[prices."claude-x"]\ninput = 1\n', "needs both `input` and `output`"),
        ("prices = 3\n", "`prices` must be a table"),
    ],
)
def test_bad_prices(tmp_path: Path, table: str, expected: str) -> None:
    write(tmp_path, ".orch-review.toml", table)
    message = error(tmp_path)
    assert message.startswith("`.orch-review.toml`: ")
    assert expected in message


def test_price_lookup_exact_prefix_and_unknown() -> None:
    config = dataclasses.replace(
        Config(), prices={**DEFAULT_PRICES, "claude-opus-5-5": Price(6, 30, 7.5, 0.6)}
    )
    assert config.price_for("claude-haiku-4-5") == (DEFAULT_PRICES["claude-haiku-4-5"], True)
    # The longest matching key wins: not "claude-opus-5".
    assert config.price_for("claude-opus-5-5-20261001") == (Price(6, 30, 7.5, 0.6), True)
    assert config.price_for("claude-opus-5-20260101")[0] == DEFAULT_PRICES["claude-opus-5"]
    # A key only matches at a word boundary.
    price, known = config.price_for("claude-opus-55")
    assert known is False
    price, known = config.price_for("gpt-something")
    assert (price, known) == (Price(6, 30, 7.5, 0.6), False)  # the dearest known price


def test_price_cost() -> None:
    price = Price(input=5, output=25, cache_write=6.25, cache_read=0.5)
    assert price.cost(1_000_000, 0) == 5.0
    assert price.cost(1000, 2000, 4000, 10_000) == pytest.approx(
        (1000 * 5 + 2000 * 25 + 4000 * 6.25 + 10_000 * 0.5) / 1e6
    )


def test_config_is_frozen(tmp_path: Path) -> None:
    config = load(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_concurrent = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.prices["claude-x"] = Price(0, 0, 0, 0)  # type: ignore[index]
    derived = dataclasses.replace(config, max_concurrent=3)
    assert derived.max_concurrent == 3 and config.max_concurrent == 10
    assert hash(config) == hash(Config())


def test_sandbox_defaults_to_auto_and_reads_env_and_flags(tmp_path: Path) -> None:
    assert load(tmp_path).sandbox == "auto"
    assert load(tmp_path).bwrap_path is None
    env = {"ORCH_REVIEW_SANDBOX": "off", "ORCH_REVIEW_BWRAP_PATH": "/opt/bwrap"}
    config = load(tmp_path, env)
    assert (config.sandbox, config.bwrap_path) == ("off", Path("/opt/bwrap"))
    assert load(tmp_path, env, sandbox="on").sandbox == "on"
    by_key = {k.key: k for k in CONFIG_KEYS}
    assert by_key["sandbox"].env_var == "ORCH_REVIEW_SANDBOX"
    assert by_key["bwrap-path"].env_var == "ORCH_REVIEW_BWRAP_PATH"


def test_sandbox_rejects_other_values(tmp_path: Path) -> None:
    message = error(tmp_path, {"ORCH_REVIEW_SANDBOX": "maybe"})
    assert message == (
        "environment variable ORCH_REVIEW_SANDBOX must be one of 'auto', 'on', 'off', 'tools', "
        "'bubblewrap', 'landlock', got 'maybe'"
    )


def test_config_file_may_require_the_sandbox(tmp_path: Path) -> None:
    for mode in ("on", "bubblewrap", "tools"):
        write(tmp_path, ".orch-review.toml", f'sandbox = "{mode}"\n')
        assert load(tmp_path).sandbox == mode


def test_no_shell_is_chosen_by_flag_env_or_config_file(tmp_path: Path) -> None:
    assert load(tmp_path, sandbox="tools").sandbox == "tools"
    assert load(tmp_path, {"ORCH_REVIEW_SANDBOX": "tools"}).sandbox == "tools"
    # Stronger than a shell: a change may ask its own review for it.
    write(tmp_path, ".orch-review.toml", 'sandbox = "tools"\n')
    assert load(tmp_path).sandbox == "tools"


def test_config_file_may_not_weaken_the_sandbox(tmp_path: Path) -> None:
    # The config file is part of the change under review: a pull request must not be able
    # to turn the sandbox off or swap bwrap for a program of its own.
    write(tmp_path, ".orch-review.toml", 'sandbox = "off"\n')
    assert error(tmp_path) == (
        "`.orch-review.toml`: `sandbox = 'off'` can only be set with ORCH_REVIEW_SANDBOX or "
        "--sandbox, because the config file is part of the content under review."
    )
    write(tmp_path, ".orch-review.toml", 'sandbox = "landlock"\n')  # where bubblewrap works
    assert "`sandbox = 'landlock'` can only be set with ORCH_REVIEW_SANDBOX" in error(tmp_path)
    write(tmp_path, ".orch-review.toml", 'bwrap-path = "tools/bwrap"\n')
    assert "`bwrap-path = 'tools/bwrap'` can only be set with ORCH_REVIEW_BWRAP_PATH" in error(
        tmp_path
    )


def test_guidance_keys(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".orch-review.toml",
        'guidance-files = ["REVIEW.md", "CLAUDE.md"]\nfocus = ["security"]\n'
        'strictness = "medium"\ninstructions = "No nits."\n'
        'path-instructions = [{glob = "src/**", text = "Check the locking."}]\n',
    )
    config = load_config(tmp_path, {}, {})
    assert config.guidance_files == ("REVIEW.md", "CLAUDE.md")
    assert config.focus == ("security",) and config.strictness == "medium"
    assert config.path_instructions[0].glob == "src/**"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('focus = ["speed"]', "`focus` must be a list of categories among"),
        ('strictness = "very"', "`strictness` must be one of"),
        ("path-instructions = [{glob = 'x'}]", "`path-instructions` entry 1 must be a table"),
        ("path-instructions = 'x'", "`path-instructions` must be a list of tables"),
    ],
)
def test_bad_guidance_keys_name_the_key_and_file(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, ".orch-review.toml", text + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(tmp_path, {}, {})


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("global.anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
            "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
            "claude-haiku-4-5",
        ),
        ("claude-opus-4-5@20251101", "claude-opus-4-5"),
    ],
)
def test_cloud_model_ids_are_priced_as_the_model_they_name(model: str, key: str) -> None:
    assert Config().price_for(model) == (DEFAULT_PRICES[key], True)


def test_a_price_set_for_the_exact_cloud_id_wins(tmp_path: Path) -> None:
    model = "us.anthropic.claude-opus-4-6-v1"
    write(tmp_path, ".orch-review.toml", f'[prices."{model}"]\ninput = 1\noutput = 2\n')
    assert load(tmp_path).price_for(model)[0].output == 2.0


def test_provider_is_a_choice(tmp_path: Path) -> None:
    assert load(tmp_path, {"ORCH_REVIEW_PROVIDER": "foundry"}).provider == "foundry"
    message = error(tmp_path, {"ORCH_REVIEW_PROVIDER": "azure"})
    assert "ORCH_REVIEW_PROVIDER must be one of 'anthropic', 'bedrock', 'vertex'" in message


def test_bedrock_needs_bedrock_model_ids(tmp_path: Path) -> None:
    write(tmp_path, ".orch-review.toml", 'provider = "bedrock"\n')
    assert "`model` is 'claude-opus-5-5', which is not a Bedrock model id" in error(tmp_path)
    bedrock = "global.anthropic.claude-opus-4-6-v1"
    message = error(tmp_path, model=bedrock, subagent_model="claude-sonnet-5")
    assert "`subagent-model` is 'claude-sonnet-5'" in message
    profile = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc"
    assert load(tmp_path, model=bedrock, subagent_model=profile).agent_model == profile


def test_vertex_refuses_a_bedrock_model_id(tmp_path: Path) -> None:
    env = {"ORCH_REVIEW_PROVIDER": "vertex", "ORCH_REVIEW_MODEL": "anthropic.claude-opus-4-6-v1"}
    assert "a Bedrock model id, but the provider is vertex" in error(tmp_path, env)
    env["ORCH_REVIEW_MODEL"] = "claude-opus-4-6"
    assert load(tmp_path, env).model == "claude-opus-4-6"


def test_interrupt_grace_defaults_to_7_s_and_takes_a_positive_number_of_seconds(
    tmp_path: Path,
) -> None:
    assert load_config(tmp_path, {}, {}).interrupt_grace == 7.0
    shorter = load_config(tmp_path, {"ORCH_REVIEW_INTERRUPT_GRACE": "0.5"}, {})
    assert shorter.interrupt_grace == 0.5
    for wrong in ("0", "-1", "61", "soon"):
        with pytest.raises(ConfigError, match="ORCH_REVIEW_INTERRUPT_GRACE must be a number of"):
            load_config(tmp_path, {"ORCH_REVIEW_INTERRUPT_GRACE": wrong}, {})
