"""Remembered and imported notes with the same texts and dates rank alike (issue 21).

One Home imports a LoCoMo-format conversation with ``agent-memory import --from locomo`` (record
time: the import; event time: each session's date). The other remembers the same turns as an
agent would have, each at its session's date and anchored to its turn (so both Homes know the
same conversation threads). ``agent-memory recall`` must rank both alike: the
retrieval benchmark once found the second kind losing more than half of what its index found,
because recency counted from record time let recent small talk bury an old, better answer.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from installed import Cli

from agent_memory.memory import Memory
from agent_memory.records.wire import utc_now

SESSIONS = [  # (days before today, turns as (speaker, text))
    (
        300,
        [
            ("Mel", "I adopted a grey tabby kitten from the shelter and named her Luna."),
            ("Caroline", "Luna the kitten sounds lovely, what shelter did you adopt her from?"),
            ("Mel", "The riverside animal shelter, they had so many kittens."),
        ],
    ),
    (
        2,
        [
            ("Caroline", "I saw a cat video today."),
            ("Mel", "My neighbour's dog barked all night, no sleep for me."),
        ],
    ),
]
QUESTIONS = ["What did Mel name the kitten she adopted?", "Which shelter did the kitten come from?", "cat"]


def locomo_file(path: Path, today: datetime) -> list[tuple[str, str, datetime]]:
    """Write a one-conversation LoCoMo file; return each turn's note text, anchor and session date."""
    conversation: dict[str, object] = {"speaker_a": "Mel", "speaker_b": "Caroline"}
    turns = []
    for number, (days, said) in enumerate(SESSIONS, start=1):
        when = (today - timedelta(days=days)).replace(hour=13, minute=56, second=0, microsecond=0)
        conversation[f"session_{number}_date_time"] = when.strftime("%-I:%M %p on %-d %B, %Y").lower()
        conversation[f"session_{number}"] = [
            {"speaker": speaker, "text": text, "dia_id": f"D{number}:{i}"}
            for i, (speaker, text) in enumerate(said, start=1)
        ]
        turns += [
            (f"{speaker}: {text}", f"locomo.json#conv-1/D{number}:{i}", when)
            for i, (speaker, text) in enumerate(said, start=1)
        ]
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation}]), "utf-8")
    return turns


def ranked(cli: Cli, home: Path, question: str) -> list[tuple[str, float]]:
    out = json.loads(cli.ok("recall", question, "--home", str(home), "--json", "--include-archived"))
    return [(r["body"], r["score"]) for r in out["records"]]


def test_a_home_of_remembered_notes_ranks_like_one_of_imported_notes(cli: Cli) -> None:
    today = utc_now()
    imported, remembered = cli.home("imported"), cli.home("remembered")
    turns = locomo_file(cli.root / "locomo.json", today)
    cli.ok("import", "--from", "locomo", str(cli.root / "locomo.json"), "--trust", "--home", str(imported))
    with Memory.open(remembered) as memory:
        for text, anchor, when in turns:
            memory.remember(text, source=anchor, type="episode", occurred_at=when, tags=["locomo"], now=when)
    for question in QUESTIONS:
        got_imported, got_remembered = ranked(cli, imported, question), ranked(cli, remembered, question)
        assert [body for body, _ in got_imported] == [body for body, _ in got_remembered], question
        for (_, a), (_, b) in zip(got_imported, got_remembered, strict=True):
            assert abs(a - b) < 1e-3, question
    assert ranked(cli, remembered, QUESTIONS[0])[0][0] == turns[0][0]  # the old, better answer first
