"""FileStore beyond the contract: the origin's JSON layout, bad files, path tricks, real processes."""

from __future__ import annotations

import errno
import multiprocessing
import os
import random
import time
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pytest
from fg_agent_id import KeyPair
from fg_agent_id import canonical_json as origin_canonical_json

from agent_memory.errors import RecordNotFound, StoreError
from agent_memory.records.lifecycle import archive
from agent_memory.records.note import dump_note
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import sign_record, verify_record
from agent_memory.stores.files import FileStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FORK = multiprocessing.get_context("fork")
CODECS = ["markdown", "json"]


def make_record(body: str, **fields: Any) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body=body,
        provenance=Provenance(kind="conversation", ref="test"),
        created_at=T0,
        **fields,
    )


def version_files(store: FileStore, record_id: str) -> list[Path]:
    return sorted((store.root / record_id[4:]).glob(f"[0-9]*.{store.extension}"))


def all_bytes(root: Path) -> list[bytes]:
    return [path.read_bytes() for path in root.rglob("*") if path.is_file()]


# ---------------------------------------------------------------------- the origin's layout


def test_a_directory_written_in_the_origins_json_layout_opens_and_reads(
    tmp_path: Path, origin_vectors: dict[str, Any]
) -> None:
    artifacts = origin_vectors["artifacts"]
    wires = [*artifacts["memory_file"]["file"]["records"], artifacts["signed_record"]["record"]]
    written: dict[str, bytes] = {}
    for wire in wires:
        record_dir = tmp_path / wire["id"].removeprefix("mem:")
        record_dir.mkdir(exist_ok=True)
        written[wire["id"]] = origin_canonical_json(wire)
        (record_dir / "000001.json").write_bytes(written[wire["id"]])
    # What the origin may leave behind, and what a person may add: all ignored.
    (tmp_path / wires[0]["id"][4:] / ".tmp-0123456789abcdef0123456789abcdef").write_bytes(b'{"torn')
    (tmp_path / wires[0]["id"][4:] / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "README.md").write_text("a store", encoding="utf-8")

    store = FileStore(tmp_path, codec="json")

    for record_id, data in written.items():
        assert store.get(record_id).canonical_bytes() == data
        assert len(store.history(record_id)) == 1
    listed = store.list()
    assert {r.id for r in listed} == set(written)
    assert [r.id for r in listed] == [r.id for r in sorted(listed, key=lambda r: (r.created_at, r.id))]
    verify_record(store.get(artifacts["signed_record"]["record"]["id"]))


def test_a_new_version_in_an_origin_directory_is_the_next_json_file_and_the_first_is_untouched(
    tmp_path: Path, origin_vectors: dict[str, Any]
) -> None:
    wire = origin_vectors["artifacts"]["memory_file"]["file"]["records"][0]
    first = tmp_path / wire["id"][4:] / "000001.json"
    first.parent.mkdir()
    first.write_bytes(origin_canonical_json(wire))
    store = FileStore(tmp_path, codec="json")

    archived = archive(store.get(wire["id"]), "no longer needed", now=T0)
    assert store.put(archived) == 2

    assert first.read_bytes() == origin_canonical_json(wire)
    assert (first.parent / "000002.json").read_bytes() == archived.canonical_bytes()
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".tmp-")]


def test_each_codec_writes_its_own_exact_bytes(tmp_path: Path, seed_keys: KeyPair) -> None:
    record = sign_record(make_record("Signed notes keep their bytes."), seed_keys)
    markdown, json = FileStore(tmp_path / "md"), FileStore(tmp_path / "json", codec="json")

    markdown.put(record)
    json.put(record)

    assert version_files(markdown, record.id)[0].read_bytes() == dump_note(record)
    assert version_files(json, record.id)[0].read_bytes() == record.canonical_bytes()
    for store in (markdown, json):
        verify_record(store.get(record.id))
        assert oct(version_files(store, record.id)[0].stat().st_mode & 0o777) in ("0o644", "0o640", "0o600")


def test_an_unknown_codec_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unknown codec"):
        FileStore(tmp_path, codec="yaml")


# ---------------------------------------------------------------------- bad files


def corrupt_garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xffnot a note at all")


def corrupt_body(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"Alpha", b"Omega"))


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("corrupt", [corrupt_garbage, corrupt_body])
def test_a_corrupt_or_hand_edited_version_is_named_and_left_as_it_is(
    tmp_path: Path, codec: str, corrupt: Any
) -> None:
    store = FileStore(tmp_path, codec=codec)
    bad, good = make_record("Alpha was here."), make_record("Beta stays readable.")
    store.put(bad)
    store.put(good)
    path = version_files(store, bad.id)[0]
    corrupt(path)
    damaged = path.read_bytes()

    for read in (store.get, store.history):
        with pytest.raises(StoreError) as caught:
            read(bad.id)
        assert str(path) in str(caught.value)
        assert caught.value.hint is not None
        assert "agent-memory doctor" in caught.value.hint
    with pytest.raises(StoreError, match=str(path)):
        store.list()
    with pytest.raises(StoreError, match=str(path)):
        store.put(archive(bad, "tidy up", now=T0))

    assert store.get(good.id) == good
    assert store.history(good.id) == [good]
    assert [str(e.path) for e in store.check()] == [str(path)]
    assert path.read_bytes() == damaged
    assert version_files(store, bad.id) == [path]


def test_a_version_file_of_another_record_is_refused(tmp_path: Path) -> None:
    store = FileStore(tmp_path, codec="json")
    a, b = make_record("Record A."), make_record("Record B.")
    store.put(a)
    store.put(b)
    stray = tmp_path / a.id[4:] / "000002.json"
    stray.write_bytes(b.canonical_bytes())

    with pytest.raises(StoreError, match="not the record its directory names") as caught:
        store.get(a.id)
    assert caught.value.path == str(stray)
    assert store.get(b.id) == b


def test_a_version_file_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store", codec="json")
    record = make_record("Outside the store.")
    outside = tmp_path / "outside.json"
    outside.write_bytes(record.canonical_bytes())
    (store.root / record.id[4:]).mkdir(parents=True)
    (store.root / record.id[4:] / "000001.json").symlink_to(outside)

    with pytest.raises(StoreError, match="cannot read"):
        store.get(record.id)


ESCAPES = [
    "mem:../x",
    "mem:../../etc/passwd",
    "/etc/passwd",
    "../" + "0" * 32,
    "mem:" + "A" * 32,
    "mem:" + "0" * 31 + "\x00",
    "mem:" + "0" * 32 + "/..",
    "mem:" + "0" * 32 + "\n",
]


@pytest.mark.parametrize("record_id", ESCAPES)
def test_ids_that_try_to_escape_the_store_are_refused(tmp_path: Path, record_id: str) -> None:
    store = FileStore(tmp_path / "store")
    for call in (store.get, store.history, store.contains, lambda i: store.erase(i, "why")):
        with pytest.raises(StoreError, match="refused record id") as caught:
            call(record_id)
        assert not isinstance(caught.value, RecordNotFound)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- erasure


def test_erasure_replaces_every_version_and_stray_temp_files_in_place(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    secret = make_record("The vault code is 7351.")
    store.put(secret)
    store.put(archive(secret, "old", now=T0))
    (tmp_path / secret.id[4:] / ".tmp-feedfacefeedfacefeedfacefeedface").write_bytes(dump_note(secret))

    tombstone = store.erase(secret.id, "asked to forget", now=T0)

    assert store.history(secret.id) == [tombstone, tombstone]
    assert not any(b"7351" in data for data in all_bytes(tmp_path))


def test_an_erasure_cut_short_keeps_the_latest_version_and_can_be_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(tmp_path)
    secret = make_record("The vault code is 7351.")
    store.put(secret)
    store.put(secret.evolve(tags=("second",)))
    store.put(archive(secret, "old", now=T0))
    real_replace, calls = os.replace, []

    def replace_then_fill_the_disk(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_then_fill_the_disk)
    with pytest.raises(StoreError, match="run it again"):
        store.erase(secret.id, "asked to forget", now=T0)
    monkeypatch.undo()
    assert [v.redacted for v in store.history(secret.id)] == [True, False, False]

    tombstone = store.erase(secret.id, "asked to forget", now=T0)

    assert store.history(secret.id) == [tombstone] * 3
    assert not any(b"7351" in data for data in all_bytes(tmp_path))


def erase_race_writer(root: Path, wire: dict[str, Any], started: Connection) -> None:
    store, base = FileStore(root), MemoryRecord.from_wire(wire)
    for i in range(10_000):
        try:
            store.put(base.evolve(tags=(f"t{i}",)))
        except StoreError:
            return
        started.send(i)


def test_a_writer_racing_an_erasure_leaves_no_erased_byte(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    secret = make_record("The launch phrase is heliotrope.")
    store.put(secret)
    receiver, sender = FORK.Pipe(duplex=False)
    writer = FORK.Process(target=erase_race_writer, args=(tmp_path, secret.to_wire(), sender))
    writer.start()
    for _ in range(5):
        receiver.recv()

    store.erase(secret.id, "asked to forget", now=T0)
    writer.join(timeout=30)

    assert writer.exitcode == 0
    assert all(version.redacted for version in store.history(secret.id))
    assert not any(b"heliotrope" in data for data in all_bytes(tmp_path))


# ---------------------------------------------------------------------- real processes


def append_versions(root: Path, codec: str, wire: dict[str, Any], label: str, go: Event) -> None:
    store, base = FileStore(root, codec), MemoryRecord.from_wire(wire)
    go.wait()
    for i in range(30):
        store.put(base.evolve(tags=(f"{label}-{i}",)))


@pytest.mark.parametrize("codec", CODECS)
def test_two_processes_appending_to_one_record_lose_nothing(tmp_path: Path, codec: str) -> None:
    store = FileStore(tmp_path, codec=codec)
    shared = make_record("Both writers append here.")
    store.put(shared)
    go = FORK.Event()
    writers = [
        FORK.Process(target=append_versions, args=(tmp_path, codec, shared.to_wire(), label, go))
        for label in ("a", "b")
    ]
    for writer in writers:
        writer.start()
    go.set()
    for writer in writers:
        writer.join(timeout=60)

    assert [w.exitcode for w in writers] == [0, 0]
    history = store.history(shared.id)
    tags = sorted(tag for version in history[1:] for tag in version.tags)
    assert len(history) == 61
    assert tags == sorted(f"{label}-{i}" for label in ("a", "b") for i in range(30))
    assert [p.name for p in version_files(store, shared.id)] == [
        f"{n:06d}.{store.extension}" for n in range(1, 62)
    ]


def write_until_killed(root: Path, codec: str, wire: dict[str, Any], round_: int, sent: Connection) -> None:
    store, shared = FileStore(root, codec), MemoryRecord.from_wire(wire)
    for i in range(10_000):
        store.put(make_record(f"Round {round_}, note {i}."))
        sent.send(i)
        store.put(shared.evolve(tags=(f"r{round_}-{i}",)))
        sent.send(i)


@pytest.mark.parametrize("codec", CODECS)
def test_a_writer_killed_at_random_points_leaves_only_whole_versions(tmp_path: Path, codec: str) -> None:
    rng = random.Random(f"kill-{codec}")  # noqa: S311 - reproducible kill points, not secrecy
    store = FileStore(tmp_path, codec=codec)
    shared = make_record("Killed writers append here.")
    store.put(shared)

    for round_ in range(10):
        receiver, sender = FORK.Pipe(duplex=False)
        writer = FORK.Process(
            target=write_until_killed, args=(tmp_path, codec, shared.to_wire(), round_, sender)
        )
        writer.start()
        for _ in range(rng.randint(1, 4)):
            receiver.recv()
        # Spin for part of a put so the kill lands at a different step each round.
        deadline = time.perf_counter() + rng.uniform(0, 0.002)
        while time.perf_counter() < deadline:
            pass
        writer.kill()
        writer.join()
        assert writer.exitcode == -9

        assert store.check() == []
        for record in store.list():
            numbers = [int(p.name.split(".")[0]) for p in version_files(store, record.id)]
            assert numbers == list(range(1, len(numbers) + 1))
        strays = {p.name[:5] for p in tmp_path.rglob("*") if p.is_file() and not p.name[0].isdigit()}
        assert strays <= {".tmp-"}

    assert len(store.history(shared.id)) >= 11
