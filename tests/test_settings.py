from pathlib import Path

import pytest

from agent_memory.errors import ConfigError
from agent_memory.settings import HOME_FORMAT, Settings

VALID = f'''
format = "{HOME_FORMAT}"
home_id = "abc123"
timezone = "Europe/Berlin"
[identity]
key_file = "/keys/abc.key"
[actors]
owner = "ada"
[trust]
trusted_signers = ["amp:key:FAe4sisG95oZ42w7buUn5qEE4TAnfTTFPiguZUHmhiF"]
'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "memory.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_settings_are_read_with_every_key(tmp_path: Path) -> None:
    settings = Settings.load(write(tmp_path, VALID))
    assert settings.home_id == "abc123"
    assert settings.timezone == "Europe/Berlin"
    assert settings.key_file == Path("/keys/abc.key")
    assert settings.owner == "ada"
    assert settings.trusted_signers == ("amp:key:FAe4sisG95oZ42w7buUn5qEE4TAnfTTFPiguZUHmhiF",)


def test_the_written_template_reads_back_to_the_same_settings(tmp_path: Path) -> None:
    settings = Settings.load(write(tmp_path, VALID))
    assert Settings.load(write(tmp_path, settings.to_toml())) == settings


def test_a_missing_file_says_how_to_create_a_home(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a Home") as info:
        Settings.load(tmp_path / "memory.toml")
    assert info.value.hint is not None
    assert "agent-memory init" in info.value.hint


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (VALID.replace('timezone = "Europe/Berlin"', 'timezone = "Mars/Olympus"'), "timezone"),
        (VALID.replace(HOME_FORMAT, "agent-memory-home/9"), "format"),
        ("colour = 1\n" + VALID, "colour"),
        (VALID.replace('owner = "ada"', 'owner = "ada"\nadmin = "bob"'), "actors.admin"),
        (VALID.replace('home_id = "abc123"', "home_id = 5"), "home_id"),
        (VALID.replace('home_id = "abc123"\n', ""), "home_id"),
        (VALID.replace('["amp:key:', '["key:'), "trust.trusted_signers"),
    ],
)
def test_bad_settings_name_the_file_and_key(tmp_path: Path, text: str, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        Settings.load(write(tmp_path, text))
    assert info.value.field == field
    assert info.value.path == str(tmp_path / "memory.toml")


def test_a_file_that_is_not_toml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings.load(write(tmp_path, "format = \n"))
