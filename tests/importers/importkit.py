"""Small inputs in the real LoCoMo, LongMemEval, Markdown and git formats, written for the importer tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ZONE = "Europe/Berlin"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
"""The shared datasets, read in place (``../shared/datasets`` next to the repository)."""

LOCOMO = [
    {
        "sample_id": "conv-9",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey cat called Pebble."},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:2",
                    "text": "Lovely! Send a photo.",
                    "img_url": ["http://x/y.jpg"],
                    "blip_caption": "a photo of a grey cat on a sofa",
                },
            ],
            "session_2_date_time": "10:05 am on 2 June, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I started pottery classes on Tuesdays."}
            ],
            "session_3_date_time": "9:00 am on 3 June, 2023",
        },
        "qa": [
            {
                "question": "What is the cat called?",
                "answer": "ZEBRA-ANSWER-42",
                "evidence": ["D1:1"],
                "category": 4,
            }
        ],
        "observation": {"session_1_observation": {"Ana": [["OBSERVED-LEAK", "D1:1"]]}},
        "session_summary": {"session_1_summary": "SUMMARY-LEAK"},
    }
]

LONGMEMEVAL = [
    {
        "question_id": "q1abc",
        "question_type": "single-session-user",
        "question": "Which city did I move to?",
        "answer": "ZEBRA-ANSWER-43",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["sharegpt_x1", "answer_deadbeef"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 18:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Recommend a hiking boot for wet trails."},
                {"role": "assistant", "content": ""},
            ],
            [
                {"role": "user", "content": "I just moved to Porto and love the tiles.", "has_answer": True},
                {"role": "assistant", "content": "Porto is lovely in spring.", "has_answer": False},
            ],
        ],
        "answer_session_ids": ["answer_deadbeef"],
    }
]


COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed ``agent-memory`` in ``tmp_path`` with its own config folder and no Home variable."""
    assert COMMAND, "the agent-memory command is not installed next to this Python"
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_HOME"}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return subprocess.run(
        [COMMAND, *args], capture_output=True, text=True, check=False, timeout=120, cwd=tmp_path, env=env
    )


def write_json(path: Path, data: object) -> str:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return str(path)


GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_COMMITTER_NAME": "Robot",
    "GIT_COMMITTER_EMAIL": "robot@example.org",
}


def git(repo: Path, *args: str, author: str = "Ada Lovelace", date: str = "2024-03-01T10:00:00+01:00") -> str:
    env = {
        **os.environ,
        **GIT_ENV,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": "a@example.org",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    done = subprocess.run(
        [shutil.which("git") or "git", "-C", str(repo), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


README = """# Tiles

A library for laying out mosaic tiles.

## Install

Run `pip install tiles` and then `tiles demo`.

```sh
# not a heading: a comment in a fence

tiles check
```

## Design

Tiles are squares of glazed ceramic; the layout engine packs them greedily.
"""
