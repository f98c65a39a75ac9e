"""Secret screening (seed 000 §3; issue 6 item 6): a planted fake secret is never stored in clear.

Every fake secret is built at run time from random characters, so the repository holds no
string a secret scanner would flag.
"""

from __future__ import annotations

import base64
import json
import random
import string
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.errors import ConfigError, RecordError
from agent_memory.governance.secrets import (
    REDACTED_TAG,
    SecretsSettings,
    find_secrets,
    screen_text,
)
from agent_memory.home import Home
from agent_memory.jobs.inbox import capture, read_inbox
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.settings import Settings
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.transfer.exchange import import_memory_file

T0 = datetime(2026, 11, 1, tzinfo=UTC)
_RNG = random.Random(20261101)  # noqa: S311 - fake secrets, not real ones; seeded to be reproducible
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "locomo" / "locomo.json"


def _chars(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def fake_secrets() -> dict[str, tuple[str, str]]:
    """Return ``{kind: (text holding the secret, the secret span)}``, freshly random."""
    alnum = string.ascii_letters + string.digits
    upper = string.ascii_uppercase + string.digits
    pem_body = "\n".join(_chars(alnum + "+/", 64) for _ in range(4))
    pem = f"-----BEGIN RSA {'PRIVATE'} KEY-----\n{pem_body}\n-----END RSA {'PRIVATE'} KEY-----"
    jwt = ".".join([_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": "ada"}), _chars(alnum, 43)])
    password = _chars(string.ascii_lowercase, 6) + _chars(string.digits, 4)
    made = {
        "private-key": pem,
        "aws-key": "AK" + "IA" + _chars(upper, 16),
        "gcp-api-key": "AI" + "za" + _chars(alnum, 35),
        "azure-storage-key": "Account" + "Key=" + _chars(alnum, 86) + "==",
        "github-token": "gh" + "p_" + _chars(alnum, 36),
        "gitlab-token": "gl" + "pat-" + _chars(alnum, 20),
        "slack-token": "xo" + "xb-" + _chars(string.digits, 12) + "-" + _chars(string.ascii_lowercase, 24),
        "stripe-key": "sk" + "_live_" + _chars(alnum, 24),
        "jwt": jwt,
        "url-password": password,
    }
    texts = {kind: f"The deploy uses {value} for staging." for kind, value in made.items()}
    texts["private-key"] = f"The deploy key is:\n{pem}\nkeep it safe."
    texts["url-password"] = f"Connect with postgres://ada:{password}@db.internal:5432/app today."
    return {kind: (texts[kind], made[kind]) for kind in made}


SECRETS = fake_secrets()
ORDINARY = [
    "Deploys go to build-07.staging.example.com and db.internal:5432.",
    "Fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39, see PR 1182.",
    "The run id is 1b4e28ba-2fa1-11d2-883f-0016d3cca427.",
    "It supersedes mem:0123456789abcdef0123456789abcdef and mem-2026-11-29-003.",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the empty file.",
    "Docs live at https://example.com/docs/setup#install and ada@example.com answers.",
    "Ada prefers tabs; the API key lives in the team vault, not here.",
]


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_kind_of_fake_secret_is_found_over_its_whole_span(kind: str) -> None:
    text, secret = SECRETS[kind]
    findings = find_secrets(text)
    assert [f.kind for f in findings] == [kind]
    found = text[findings[0].start : findings[0].end]
    assert secret in found
    assert len(found) <= len(secret) + len("AccountKey=")


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_prose_with_hosts_hashes_uuids_and_ids_is_not_flagged(text: str) -> None:
    assert find_secrets(text) == []


def test_locomo_turns_are_almost_never_flagged() -> None:
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo is not at {LOCOMO}")
    data = json.loads(LOCOMO.read_text("utf-8"))
    turns = [
        turn["text"]
        for sample in data
        for key, session in sample["conversation"].items()
        if key.startswith("session") and isinstance(session, list)
        for turn in session
    ]
    flagged = [turn for turn in turns if find_secrets(turn)]
    rate = len(flagged) / len(turns)
    print(f"LoCoMo false positives: {len(flagged)} of {len(turns)} turns ({rate:.4%})")
    assert len(turns) > 1000 and rate < 0.001


def test_refusal_names_the_field_and_kind_and_never_echoes_the_secret() -> None:
    text, secret = SECRETS["github-token"]
    with pytest.raises(RecordError) as caught:
        screen_text(text, field="text")
    assert caught.value.field == "text" and "github-token" in str(caught.value)
    assert secret not in str(caught.value) and secret not in (caught.value.hint or "")


def test_redaction_replaces_every_span_and_tags_once() -> None:
    text = SECRETS["aws-key"][0] + " " + SECRETS["url-password"][0]
    redacted, tags = screen_text(text, field="text", policy=SecretsSettings("redact"), tags=("ops",))
    assert "[redacted:aws-key]" in redacted and "[redacted:url-password]" in redacted
    assert "postgres://ada:[redacted:url-password]@db.internal" in redacted
    assert SECRETS["aws-key"][1] not in redacted and SECRETS["url-password"][1] not in redacted
    assert tags == ("ops", REDACTED_TAG)


@pytest.mark.parametrize("kind", ["github-token", "private-key", "jwt"])
def test_remember_refuses_a_secret_and_writes_nothing(memory: Memory, kind: str) -> None:
    text, secret = SECRETS[kind]
    memory.remember("Ada prefers tabs.", source="s-1")
    before = [r.id for r in memory.store.list()]
    with pytest.raises(RecordError, match=kind):
        memory.remember(text, source="s-1")
    assert [r.id for r in memory.store.list()] == before
    assert all(secret not in r.body for r in memory.store.list())


def test_supersede_refuses_a_secret_and_the_old_record_stays_active(memory: Memory) -> None:
    old = memory.remember("The staging token is kept in the vault.", source="s-1").record_id
    with pytest.raises(RecordError, match="stripe-key"):
        memory.supersede(old, SECRETS["stripe-key"][0], source="s-2", reason="rotated")
    assert memory.store.get(old).state.value == "active"
    assert len(memory.store.history(old)) == 1


def _home(tmp_path: Path, on_detect: str) -> Home:
    home = Home.init(tmp_path / "home", git=False)
    toml = home.root / "memory.toml"
    text = toml.read_text("utf-8")
    assert 'on_detect = "refuse"' in text
    toml.write_text(text.replace('on_detect = "refuse"', f'on_detect = "{on_detect}"'), "utf-8")
    return Home.open(home.root)


def _where(root: Path, secret: str) -> list[str]:
    needle = secret.encode("utf-8")
    return [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_home_set_to_redact_never_stores_any_fake_secret_in_clear(tmp_path: Path) -> None:
    home = _home(tmp_path, "redact")
    with Memory.open(home.root) as memory:
        for kind, (text, _) in SECRETS.items():
            result = memory.remember(text, source="session-1", tags=("ops",))
            record = memory.store.get(result.record_id)
            assert f"[redacted:{kind}]" in record.body and record.tags == ("ops", REDACTED_TAG)
        old = memory.remember("The admin URL is kept private.", source="session-1").record_id
        memory.supersede(old, SECRETS["gitlab-token"][0], source="session-2", reason="rotated")
        assert memory.recall("deploy staging").records
    capture(home, SECRETS["slack-token"][0], source="session-3")
    assert "[redacted:slack-token]" in read_inbox(home).items[-1].text
    for kind, (_, secret) in SECRETS.items():
        assert _where(home.root, secret) == [], kind


def test_a_home_set_to_refuse_keeps_the_inbox_and_store_unchanged(tmp_path: Path) -> None:
    home = _home(tmp_path, "refuse")
    capture(home, "Ada prefers tabs.", source="session-1")
    inbox = (home.root / "inbox.md").read_bytes()
    with pytest.raises(RecordError, match="aws-key") as caught:
        capture(home, SECRETS["aws-key"][0], source="session-1")
    assert caught.value.field == "text"
    assert (home.root / "inbox.md").read_bytes() == inbox
    with Memory.open(home.root) as memory, pytest.raises(RecordError):
        memory.remember(SECRETS["aws-key"][0], source="session-1")
    assert _where(home.root, SECRETS["aws-key"][1]) == []


def test_the_secrets_table_refuses_unknown_keys_and_values(tmp_path: Path) -> None:
    home = Home.init(tmp_path / "home", git=False)
    toml = home.root / "memory.toml"
    text = toml.read_text("utf-8")
    toml.write_text(text.replace('on_detect = "refuse"', 'on_detect = "warn"'), "utf-8")
    with pytest.raises(ConfigError, match="on_detect"):
        Settings.load(toml)
    toml.write_text(text.replace('on_detect = "refuse"', 'on_detect = "refuse"\nmode = 1'), "utf-8")
    with pytest.raises(ConfigError) as caught:
        Settings.load(toml)
    assert caught.value.field == "secrets.mode"
    toml.write_text(text, "utf-8")
    assert Settings.load(toml).secrets == SecretsSettings("refuse")


def _file(*bodies: str) -> MemoryFile:
    records = tuple(
        MemoryRecord.create(
            type="fact", body=body, provenance=Provenance(kind="conversation", ref="s-1"), created_at=T0
        )
        for body in bodies
    )
    return MemoryFile(created_at=T0, records=records)


def test_an_import_holding_a_secret_is_refused_whole_by_default() -> None:
    store = InMemoryStore()
    incoming = _file("Ada prefers tabs.", SECRETS["jwt"][0])
    with pytest.raises(RecordError) as caught:
        import_memory_file(store, incoming, verify=False, path="in.json")
    assert caught.value.path == "in.json" and caught.value.field == "body"
    assert caught.value.record_id == incoming.records[1].id and SECRETS["jwt"][1] not in str(caught.value)
    assert store.list() == []


def test_an_import_set_to_redact_stores_a_new_redacted_record() -> None:
    store = InMemoryStore()
    incoming = _file("Ada prefers tabs.", SECRETS["github-token"][0])
    report = import_memory_file(store, incoming, verify=False, secrets=SecretsSettings("redact"))
    new_id = report.redacted[incoming.records[1].id]
    stored = store.get(new_id)
    assert "[redacted:github-token]" in stored.body and REDACTED_TAG in stored.tags
    assert sorted(report.added) == sorted([incoming.records[0].id, new_id])
    assert all(SECRETS["github-token"][1] not in r.body for r in store.list())


def test_an_import_whose_records_point_at_a_redacted_one_is_refused() -> None:
    store = InMemoryStore()
    secret = _file(SECRETS["aws-key"][0]).records[0]
    linked = MemoryRecord.create(
        type="fact",
        body="See the other note.",
        provenance=Provenance(kind="conversation", ref="s-1"),
        created_at=T0,
        evidence=(secret.id,),
    )
    incoming = MemoryFile(created_at=T0, records=(secret, linked))
    with pytest.raises(RecordError, match="redacted"):
        import_memory_file(store, incoming, verify=False, secrets=SecretsSettings("redact"))
    assert store.list() == []
