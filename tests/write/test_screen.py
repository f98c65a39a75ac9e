"""The write screen (issue 18): one table of hazards, refused for a person, cleaned for an importer.

Cases 10 (the LLM providers' keys), 6 (git conflict markers) and 8 (control characters in
someone's existing data) as regression tests with their repros. Fake keys are built at run time
from random characters, so the repository holds no string a secret scanner would flag.
"""

from __future__ import annotations

import random
import string

import pytest

from agent_memory.errors import ScreenError
from agent_memory.governance.secrets import find_secrets
from agent_memory.memory import Memory
from agent_memory.write.screen import CLEANED_TAG, HAZARDS, MAX_TEXT_BYTES, Hazard, screen

_RNG = random.Random(20261202)  # noqa: S311 - fake keys, not real ones; seeded to be reproducible
ALNUM = string.ascii_letters + string.digits


def _chars(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def provider_keys() -> dict[str, str]:
    """Return ``{kind: fake key}`` in each provider's shape (issue 18 case 10)."""
    return {
        "openai-key": "sk" + "-" + _chars(ALNUM, 48),
        "openai-project-key": "sk" + "-proj-" + _chars(ALNUM + "_-", 120) + "A1",
        "anthropic-key": "sk" + "-ant-api03-" + _chars(ALNUM + "_-", 93) + "AA",
        "gcp-api-key": "AI" + "za" + _chars(ALNUM, 35),
        "huggingface-token": "hf" + "_" + _chars(string.ascii_letters, 34),
        "slack-token": "xo" + "xe-1-" + _chars(ALNUM, 40),
        "stripe-key": "sk" + "_live_" + _chars(ALNUM, 99),
        "stripe-restricted-key": "rk" + "_live_" + _chars(ALNUM, 99),
    }


KEYS = provider_keys()
ISSUE_KEY = "sk" + "-" + string.ascii_lowercase + string.digits + "ABCDEFGHIJKL"
"""The key of the issue's repro, ``sk-abc…xyz0123456789ABCDEFGHIJKL``."""

NOT_KEYS = [
    "We use sk-learn-style pipelines and scikit-learn for the baseline model.",
    "The sk-2024-budget-planning-notes file is in the shared drive.",
    "Set OPENAI_API_KEY=your_key_here in .env before the first run.",
    "Export OPENAI_API_KEY=${OPENAI_API_KEY} from the vault, never paste it.",
    "ANTHROPIC_API_KEY=<your-key> goes in the CI secrets.",
    "Tokens look like hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in the docs.",
    "The task-force met about risk-assessment-2026-quarterly-report again.",
    "Call hf_hub_download(repo_id, filename) to fetch a model file.",
    "The slack channel xoxo-friends is for the team party.",
]


@pytest.mark.parametrize("name", sorted(KEYS))
def test_each_providers_key_is_refused_by_remember_and_nothing_is_written(name: str) -> None:
    memory = Memory.in_memory()
    with pytest.raises(ScreenError) as caught:
        memory.remember(f"my key is {KEYS[name]} for the staging agent", source="chat")
    assert caught.value.hazard == "secret" and caught.value.field == "text"
    assert KEYS[name] not in str(caught.value)
    assert memory.store.list() == []


def test_the_issue_repro_key_and_the_api_key_assignments_are_refused() -> None:
    memory = Memory.in_memory()
    texts = [
        f"my key is {ISSUE_KEY}",
        "OPENAI_API_KEY=" + KEYS["openai-project-key"],
        "export ANTHROPIC_API_KEY=" + KEYS["anthropic-key"],
        "MY_SERVICE_API_KEY=" + _chars(ALNUM, 32),
        "DB_PASSWORD=hunter2hunter2",
    ]
    for text in texts:
        with pytest.raises(ScreenError, match="looks like a secret"):
            memory.remember(text, source="chat")
    assert memory.store.list() == []


def test_an_assignment_is_redacted_to_its_value_so_the_name_stays() -> None:
    value = _chars(ALNUM, 40)
    findings = find_secrets(f"MY_SERVICE_API_KEY={value} in prod")
    assert [(f.kind, f.start, f.end) for f in findings] == [("api-key-assignment", 19, 19 + len(value))]


@pytest.mark.parametrize("text", NOT_KEYS)
def test_ordinary_words_placeholders_and_names_that_start_like_keys_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


CONFLICT = "The VPN gateway is\n<<<<<<< HEAD\nvpn-a\n=======\nvpn-b\n>>>>>>> laptop\n"


def test_a_git_conflict_block_is_refused_naming_its_line_for_a_person_and_an_importer() -> None:
    for clean in (False, True):
        with pytest.raises(ScreenError, match="conflict marker at line 2") as caught:
            screen(CONFLICT, clean=clean, path="notes/vpn.md")
        assert caught.value.hazard == "conflict" and caught.value.path == "notes/vpn.md"
    memory = Memory.in_memory()
    with pytest.raises(ScreenError):
        memory.remember(CONFLICT, source="chat")
    assert memory.store.list() == []


def test_a_markdown_heading_underline_is_not_a_conflict_marker() -> None:
    assert screen("Setup\n=======\n\nRun make.").text == "Setup\n=======\n\nRun make."


def test_a_persons_control_character_is_refused_and_an_importers_is_cleaned_and_said() -> None:
    text = "She said \x93yes\x94 and left\x07."
    with pytest.raises(ScreenError, match="U\\+0093 at character 10") as caught:
        screen(text)
    assert caught.value.hazard == "control"
    cleaned = screen(text, clean=True, tags=("chat",))
    assert cleaned.text == "She said \u201cyes\u201d and left\ufffd."
    assert cleaned.tags == ("chat", CLEANED_TAG)
    assert cleaned.cleaned == (
        "U+0093 at character 10 replaced by \u201c (Windows-1252)",
        "U+0094 at character 14 replaced by \u201d (Windows-1252)",
        "U+0007 at character 24 replaced by U+FFFD",
    )


def test_an_importers_remember_keeps_the_item_and_says_the_cleaning_in_its_result() -> None:
    memory = Memory.in_memory()
    result = memory.remember("User: I said \x93fine\x94.", source="chat.json#/0/1", clean=True)
    stored = memory.get(result.record_id)
    assert stored.body == "User: I said \u201cfine\u201d." and CLEANED_TAG in stored.tags
    assert result.cleaned and result.to_json()["cleaned"] == list(result.cleaned)


def test_foreign_frontmatter_and_oversized_text_are_refused_at_either_column() -> None:
    for clean in (False, True):
        with pytest.raises(ScreenError) as front:
            screen("---\ntitle: Notes\ntags: [a]\n---\nThe body.", clean=clean)
        assert front.value.hazard == "frontmatter"
        with pytest.raises(ScreenError) as big:
            screen("x" * (MAX_TEXT_BYTES + 1), clean=clean)
        assert big.value.hazard == "size"
    assert screen("---\nA rule line above a sentence.").text.endswith("sentence.")


def test_the_table_names_every_hazard_with_both_columns() -> None:
    assert set(HAZARDS) == set(Hazard)
    assert all(len(columns) == 2 for columns in HAZARDS.values())
    assert HAZARDS[Hazard.CONTROL] == ("refuse", "clean")
