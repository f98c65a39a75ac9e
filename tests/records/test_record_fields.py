"""The closed vocabularies of record_fields: an unknown word is a RecordError naming its field."""

from __future__ import annotations

import pytest

from agent_memory.errors import RecordError
from agent_memory.memory import Memory
from agent_memory.records.fields import EpistemicStatus, Kind, RecordType, Scope, State, UnknownWordError


def test_an_unknown_kind_passed_to_remember_is_a_record_error_naming_the_field_and_the_kinds() -> None:
    memory = Memory.in_memory()
    with pytest.raises(RecordError) as info:
        memory.remember("Prefers tabs over spaces.", source="chat", kind="preference")
    assert str(info.value) == "kind: unknown value 'preference' (one of: state, knowledge)"
    assert info.value.field == "kind"
    assert (
        info.value.hint
        == "'preference' is a record type (seed 003), not a kind: pass it as the type (--type preference)"
    )
    assert memory.log.last() is None and memory.store.list() == []
    kept = memory.remember("Prefers tabs over spaces.", source="chat", type="preference")
    assert memory.get(kept.record_id).tags == ("preference",)


@pytest.mark.parametrize(
    ("vocabulary", "field", "allowed"),
    [
        (Kind, "kind", "state, knowledge"),
        (State, "state", "active, superseded, transitional, archived"),
        (RecordType, "type", "fact, episode, procedure, rule"),
        (Scope, "scope", "global, project, environment, workflow, user-preference"),
        (EpistemicStatus, "epistemic_status", "confirmed, observed-once, inferred, unknown"),
    ],
)
def test_every_vocabulary_names_its_field_and_words_and_is_still_a_value_error(
    vocabulary: type[Kind], field: str, allowed: str
) -> None:
    with pytest.raises(UnknownWordError) as info:
        vocabulary("maybe")
    assert isinstance(info.value, RecordError) and isinstance(info.value, ValueError)
    assert (info.value.field, str(info.value)) == (
        field,
        f"{field}: unknown value 'maybe' (one of: {allowed})",
    )
    assert info.value.hint is None
    assert [vocabulary(member.value) for member in vocabulary] == list(vocabulary)
