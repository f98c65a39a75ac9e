from pathlib import Path

import pytest

from agent_memory.errors import ConfigError
from agent_memory.settings import HOME_FORMAT, RecallSettings, Settings

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


def test_recall_recency_defaults_to_a_mild_valid_time_decay_when_the_table_is_absent(tmp_path: Path) -> None:
    settings = Settings.load(write(tmp_path, VALID))
    assert settings.recall == RecallSettings(recency="valid", recency_half_life_days=30.0, recency_weight=0.1)
    assert settings.recall.half_life_days == 30.0 and settings.recall.weight == 0.1
    assert "[recall]\n" in settings.to_toml()


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('recency = "off"', RecallSettings("off", 30.0)),
        ("recency_half_life_days = 7", RecallSettings("valid", 7.0)),
        ('recency = "updated"\nrecency_half_life_days = 2.5e-3', RecallSettings("updated", 0.0025)),
        ('recency = "off"\nrecency_half_life_days = 90.25', RecallSettings("off", 90.25)),
        ('recency = "updated"\nrecency_weight = 1', RecallSettings("updated", 30.0, 1.0)),
        ("recency_weight = 0.0", RecallSettings("valid", 30.0, 0.0)),
    ],
)
def test_the_recall_table_is_read_and_written_back_the_same(
    tmp_path: Path, table: str, expected: RecallSettings
) -> None:
    settings = Settings.load(write(tmp_path, VALID + "[recall]\n" + table + "\n"))
    assert settings.recall == expected
    assert settings.recall.half_life_days == (
        None if expected.recency == "off" else expected.recency_half_life_days
    )
    assert Settings.load(write(tmp_path, settings.to_toml())) == settings


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ('recency = "sometimes"', "recall.recency"),
        ('recency = "Off"', "recall.recency"),
        ("recency = 1", "recall.recency"),
        ("recency_half_life_days = 0", "recall.recency_half_life_days"),
        ("recency_half_life_days = -30.0", "recall.recency_half_life_days"),
        ('recency_half_life_days = "30"', "recall.recency_half_life_days"),
        ("recency_half_life_days = true", "recall.recency_half_life_days"),
        ("recency_half_life_days = inf", "recall.recency_half_life_days"),
        ("recency_half_life_days = nan", "recall.recency_half_life_days"),
        ("half_life = 30", "recall.half_life"),
        ("recency_weight = 1.5", "recall.recency_weight"),
        ("recency_weight = -0.1", "recall.recency_weight"),
        ("recency_weight = nan", "recall.recency_weight"),
        ('recency_weight = "0.1"', "recall.recency_weight"),
        ("recency_weight = true", "recall.recency_weight"),
    ],
)
def test_a_bad_recall_setting_names_the_file_and_the_dotted_key(
    tmp_path: Path, table: str, field: str
) -> None:
    path = write(tmp_path, VALID + "[recall]\n" + table + "\n")
    before = path.read_bytes()
    with pytest.raises(ConfigError) as info:
        Settings.load(path)
    assert info.value.field == field
    assert info.value.path == str(path)
    assert "memory.toml" in str(info.value)
    assert path.read_bytes() == before


def test_a_recall_key_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must be a table") as info:
        Settings.load(write(tmp_path, "recall = 5\n" + VALID))
    assert info.value.field == "recall"


def test_recall_settings_built_in_code_are_checked_too() -> None:
    with pytest.raises(ConfigError) as info:
        RecallSettings(recency="never")
    assert info.value.field == "recall.recency"
    with pytest.raises(ConfigError) as info:
        RecallSettings(recency_half_life_days=0.0)
    assert info.value.field == "recall.recency_half_life_days"
