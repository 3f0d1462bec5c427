"""Model addresses (aliases, bare providers, known ids), `elelem models`,
`elelem aliases` and `elelem keys`: subprocess runs with exact output."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from cli_helpers import KEY, base_env, run, text_reply
from elelem.errors import ConfigError
from elelem.providers import Catalog, load_catalog
from elelem.providers.keys import load_keys, save_key
from elelem.providers.models import ALIASES, resolve_address
from elelem.testing.servers import LoopbackServer, replay, status


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return base_env(tmp_path)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("ollama:llama3.2:3b", ("ollama", "llama3.2:3b")),
        ("anthropic", ("anthropic", "claude-sonnet-4-5")),
        ("google", ("google", "gemini-2.5-flash")),
        ("claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("gpt-4.1-mini", ("openai", "gpt-4.1-mini")),
        (
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            ("bedrock", "anthropic.claude-3-5-sonnet-20240620-v1:0"),
        ),
        ("sonnet", ("anthropic", "claude-sonnet-4-5")),
        ("opus", ("anthropic", "claude-opus-4-5")),
        ("gpt-5", ("openai", "gpt-5")),
        ("gemini-flash", ("google", "gemini-2.5-flash")),
        ("  sonnet ", ("anthropic", "claude-sonnet-4-5")),
    ],
)
def test_every_address_form_resolves(address: str, expected: tuple[str, str]) -> None:
    spec, model = Catalog().resolve(address)
    assert (spec.name, model) == expected


def test_config_aliases_win_and_point_anywhere() -> None:
    catalog = Catalog(aliases={"sonnet": "openai:gpt-4o", "fast": "groq"})
    assert resolve_address("sonnet", catalog, catalog.aliases) == ("openai", "gpt-4o")
    assert resolve_address("fast", catalog, catalog.aliases) == (
        "groq",
        "llama-3.3-70b-versatile",
    )


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("", "the model must not be empty (e.g. -m anthropic:claude-sonnet-4-5)"),
        (
            "ollama",
            "provider 'ollama' has no default model: name one as ollama:MODEL "
            "(`elelem models --remote ollama` lists what it serves)",
        ),
        (
            "clade-sonnet",
            "model 'clade-sonnet' is not provider:model, a provider, a known model "
            "(`elelem models`) or an alias (`elelem aliases`)",
        ),
        ("anthropic:", "model 'anthropic:' names no model after 'anthropic:'"),
    ],
)
def test_bad_addresses_say_which_forms_exist(address: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Catalog().resolve(address)
    assert str(info.value) == message


def test_alias_of_an_alias_is_refused() -> None:
    catalog = Catalog(aliases={"mine": "sonnet"})
    with pytest.raises(ConfigError) as info:
        catalog.resolve("mine")
    assert str(info.value) == "alias 'mine' names another alias ('sonnet'); name a model"


def test_ask_with_an_alias_and_a_bare_provider(env: dict[str, str]) -> None:
    for model in ("sonnet", "anthropic", "claude-sonnet-4-5"):
        with LoopbackServer([replay(text_reply("Hi."))]) as server:
            server_env = {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
            result = run(server_env, "ask", "--no-store", "-m", model, "hello")
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("Hi.\n")
        assert json.loads(server.requests[0].body)["model"] == "claude-sonnet-4-5"


def test_models_lists_offline_with_defaults_and_aliases(env: dict[str, str]) -> None:
    result = run(env, "models", "anthropic")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "anthropic:claude-opus-4-5  (alias opus)\n"
        "anthropic:claude-sonnet-4-5  (default, alias claude, alias sonnet)\n"
        "anthropic:claude-haiku-4-5  (alias haiku)\n"
        "anthropic:claude-opus-4-1\n"
        "anthropic:claude-opus-4-0\n"
        "anthropic:claude-sonnet-4-0\n"
        "anthropic:claude-3-7-sonnet-latest\n"
        "anthropic:claude-3-5-haiku-latest\n"
    )
    as_json = run(env, "models", "deepseek", "--json")
    # Each record also carries the model's limits (tests/test_model_catalog.py).
    named = ("provider", "model", "address", "default", "aliases")
    lines = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [{k: line[k] for k in named} for line in lines] == [
        {
            "provider": "deepseek",
            "model": "deepseek-chat",
            "address": "deepseek:deepseek-chat",
            "default": True,
            "aliases": [],
        },
        {
            "provider": "deepseek",
            "model": "deepseek-reasoner",
            "address": "deepseek:deepseek-reasoner",
            "default": False,
            "aliases": ["deepseek-r1"],
        },
    ]
    unknown = run(env, "models", "nope")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("elelem: unknown provider 'nope' (known: alibaba, anthropic, ")


ANTHROPIC_PAGE_1 = {
    "data": [{"id": "claude-x-1", "display_name": "Claude X 1", "type": "model"}],
    "has_more": True,
    "last_id": "claude-x-1",
}
ANTHROPIC_PAGE_2 = {
    "data": [{"id": "claude-y-2", "display_name": "Claude Y 2", "type": "model"}],
    "has_more": False,
    "last_id": "claude-y-2",
}


def _json(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_models_remote_anthropic_pages_and_authenticates(env: dict[str, str]) -> None:
    replies = [
        replay(_json(p), content_type="application/json")
        for p in (ANTHROPIC_PAGE_1, ANTHROPIC_PAGE_2)
    ]
    with LoopbackServer(replies) as server:
        result = run(
            {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY},
            "models",
            "--remote",
            "anthropic",
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "anthropic:claude-x-1  (Claude X 1)\nanthropic:claude-y-2  (Claude Y 2)\n"
    )
    first, second = server.requests
    assert first.path == "/v1/models?limit=1000"
    assert second.path == "/v1/models?limit=1000&after_id=claude-x-1"
    assert first.headers["x-api-key"] == KEY
    assert first.headers["anthropic-version"] == "2023-06-01"


@pytest.mark.parametrize(
    ("provider", "base_var", "key_var", "page", "path", "expected"),
    [
        (
            "openai",
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            {"object": "list", "data": [{"id": "gpt-9", "object": "model"}]},
            "/models",
            "openai:gpt-9\n",
        ),
        (
            "google",
            "GOOGLE_GEMINI_BASE_URL",
            "GEMINI_API_KEY",
            {"models": [{"name": "models/gemini-9-flash", "displayName": "Gemini 9 Flash"}]},
            "/v1beta/models?pageSize=1000",
            "google:gemini-9-flash  (Gemini 9 Flash)\n",
        ),
        (
            "ollama-native",
            "ELELEM_OLLAMA_NATIVE_BASE_URL",
            "OLLAMA_API_KEY",
            {"models": [{"name": "qwen3:4b", "model": "qwen3:4b", "size": 2}]},
            "/api/tags",
            "ollama-native:qwen3:4b\n",
        ),
        (
            "groq",
            "ELELEM_GROQ_BASE_URL",
            "GROQ_API_KEY",
            {"object": "list", "data": [{"id": "llama-9", "object": "model"}]},
            "/models",
            "groq:llama-9\n",
        ),
    ],
)
def test_models_remote_each_listing(
    env: dict[str, str],
    provider: str,
    base_var: str,
    key_var: str,
    page: object,
    path: str,
    expected: str,
) -> None:
    with LoopbackServer([replay(_json(page), content_type="application/json")]) as server:
        result = run({**env, base_var: server.url, key_var: KEY}, "models", "--remote", provider)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
    assert server.requests[0].path == path


def test_models_remote_error_is_typed_and_redacted(env: dict[str, str]) -> None:
    body = _json({"error": {"type": "authentication_error", "message": f"bad key {KEY}"}})
    with LoopbackServer([status(401, body)]) as server:
        result = run(
            {**env, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": KEY},
            "models",
            "--remote",
            "openai",
        )
    assert result.returncode == 1
    assert KEY not in result.stderr
    assert result.stderr.startswith("elelem: authentication: openai 401: listing models failed: ")
    assert "[redacted]" in result.stderr


def test_aliases_lists_builtins_and_config(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[aliases]\nfast = "groq:llama-3.1-8b-instant"\nsonnet = "anthropic:claude-sonnet-4-0"\n'
    )
    result = run({**env, "ELELEM_CONFIG": str(config)}, "aliases")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "fast               groq:llama-3.1-8b-instant  (config)" in lines
    assert "sonnet             anthropic:claude-sonnet-4-0  (config)" in lines
    assert "opus               anthropic:claude-opus-4-5" in lines
    assert len(lines) == len({**ALIASES, "fast": ""})
    as_json = json.loads(run({**env, "ELELEM_CONFIG": str(config)}, "aliases", "--json").stdout)
    assert as_json["fast"] == "groq:llama-3.1-8b-instant"
    assert as_json["gemini-flash"] == "google:gemini-2.5-flash"


def test_keys_set_from_stdin_list_path_and_use(env: dict[str, str], tmp_path: Path) -> None:
    path = run(env, "keys", "path")
    assert path.stdout == f"{tmp_path / 'home' / 'keys.json'}\n"
    saved = run(env, "keys", "set", "anthropic", stdin=KEY + "\n")
    assert saved.returncode == 0, saved.stderr
    assert (
        saved.stderr
        == f"elelem: saved the anthropic key in {tmp_path / 'home' / 'keys.json'}\n".removeprefix(
            "elelem: "
        )
    )
    file = tmp_path / "home" / "keys.json"
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    assert json.loads(file.read_text()) == {"anthropic": KEY}
    listing = run({**env, "OPENAI_API_KEY": "sk-env"}, "keys", "list")
    assert KEY not in listing.stdout and "sk-env" not in listing.stdout
    lines = dict(line.split("  ", 1) for line in listing.stdout.splitlines())
    assert lines["anthropic"] == f"set (keys file {file})"
    assert lines["openai"] == "set ($OPENAI_API_KEY)"
    assert lines["ollama"] == "no key needed"
    assert lines["vertex"] == "not set: the cloud's credentials are used (see `elelem providers`)"
    assert lines["deepseek"] == "not set"
    # The saved key is sent; the environment wins over it.
    for extra, sent in (({}, KEY), ({"ANTHROPIC_API_KEY": "sk-from-env"}, "sk-from-env")):
        with LoopbackServer([replay(text_reply("Hi."))]) as server:
            result = run(
                {**env, "ANTHROPIC_BASE_URL": server.url, **extra},
                "ask",
                "--no-store",
                "-m",
                "sonnet",
                "hi",
            )
        assert result.returncode == 0, result.stderr
        assert server.requests[0].headers["x-api-key"] == sent
    removed = run(env, "keys", "remove", "anthropic")
    assert removed.returncode == 0
    assert json.loads(file.read_text()) == {}
    again = run(env, "keys", "remove", "anthropic")
    assert (again.returncode, again.stderr) == (2, "elelem: no key saved for anthropic\n")


def test_keys_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "keys.json"
    save_key("openai", "sk-1", file)
    os.chmod(file, 0o644)
    with pytest.raises(ConfigError) as info:
        load_keys(file)
    assert str(info.value) == (
        f"{file}: the keys file is readable by other users; run: chmod 600 {file}"
    )


@pytest.mark.parametrize("bad", ["", "   ", "sk-\u00e9", "sk-1\r\nx-evil: 1"])
def test_keys_that_no_header_can_carry_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        save_key("openai", bad, tmp_path / "keys.json")
    assert "sk-" not in str(info.value)
    assert not (tmp_path / "keys.json").exists()


def test_api_key_env_names_the_variable_of_a_custom_endpoint(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[providers.local]\ncompatible = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "MY_LOCAL_KEY"\n'
    )
    catalog = load_catalog(config, env={})
    spec = catalog.get("local")
    assert spec.key_env == ("MY_LOCAL_KEY",)
    assert spec.key_required is True
    endpoint = catalog.endpoint(spec, {"MY_LOCAL_KEY": "k-local"})
    assert endpoint.request_headers({})["authorization"] == "Bearer k-local"


def test_keys_and_providers_agree_and_the_missing_key_names_both_ways(
    env: dict[str, str],
) -> None:
    """`keys set` makes `providers` say the key is set, as `keys list` does;
    before it, the error and `providers` name `elelem keys set` and the
    variable."""
    missing = run(env, "ask", "-m", "anthropic:claude-sonnet-4-5", "hi")
    assert (missing.returncode, missing.stderr) == (
        2,
        "elelem: provider anthropic needs an API key: "
        "run 'elelem keys set anthropic' or set ANTHROPIC_API_KEY\n",
    )
    before = [x for x in run(env, "providers").stdout.splitlines() if x.startswith("anthropic ")]
    assert before[0].split("  https://")[0].split() == [
        "anthropic",
        "anthropic_messages",
        "missing:",
        "elelem",
        "keys",
        "set",
        "anthropic,",
        "or",
        "ANTHROPIC_API_KEY",
    ]
    assert run(env, "keys", "set", "anthropic", stdin=KEY).returncode == 0
    after = [x for x in run(env, "providers").stdout.splitlines() if x.startswith("anthropic ")]
    assert after[0].split() == [
        "anthropic",
        "anthropic_messages",
        "key",
        "set",
        "(keys",
        "file)",
        "https://api.anthropic.com",
    ]
    listed = [x for x in run(env, "keys", "list").stdout.splitlines() if x.startswith("anthropic ")]
    assert listed[0] == f"anthropic  set (keys file {Path(env['ELELEM_HOME']) / 'keys.json'})"
    assert KEY not in run(env, "providers").stdout


def _status_rows(env: dict[str, str], *names: str) -> dict[str, tuple[str, str]]:
    """Each provider's line in `keys list` and its key cell in `providers`."""
    listed = run(env, "keys", "list")
    table = run(env, "providers")
    assert (listed.returncode, table.returncode) == (0, 0), listed.stderr + table.stderr
    rows = {}
    for name in names:
        (row,) = (x for x in table.stdout.splitlines() if x.startswith(name + " "))
        cells = [c.strip() for c in row.split("  ") if c.strip()]
        (line,) = (x for x in listed.stdout.splitlines() if x.startswith(name + " "))
        rows[name] = (line, cells[2])
    return rows


def test_keys_list_and_providers_read_one_credential_status(env: dict[str, str]) -> None:
    """Both commands ask `credential_status`: AWS signing credentials are
    Bedrock's credential in both (`keys list` said "not set" while
    `providers` said they were set); half a pair is none in both; a plain
    key from the environment is the same source in both."""
    aws = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIEXAMPLEKEY"}
    assert _status_rows({**env, **aws, "MISTRAL_API_KEY": KEY}, "bedrock", "mistral") == {
        "bedrock": (
            "bedrock  not set: AWS credentials are used (AWS_ACCESS_KEY_ID)",
            "AWS credentials set (AWS_ACCESS_KEY_ID)",
        ),
        "mistral": ("mistral  set ($MISTRAL_API_KEY)", "key set (MISTRAL_API_KEY)"),
    }
    missing = (
        "bedrock  not set",
        "missing: elelem keys set bedrock, or AWS_BEARER_TOKEN_BEDROCK or AWS credentials",
    )
    assert _status_rows(env, "bedrock", "mistral", "vertex") == {
        "bedrock": missing,
        "mistral": ("mistral  not set", "missing: elelem keys set mistral, or MISTRAL_API_KEY"),
        "vertex": (
            "vertex  not set: the cloud's credentials are used (see `elelem providers`)",
            "Google credentials (ADC) (or set GOOGLE_VERTEX_API_KEY)",
        ),
    }
    # Half a pair signs nothing (a request says which half is missing).
    assert _status_rows({**env, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"}, "bedrock") == {
        "bedrock": missing
    }
