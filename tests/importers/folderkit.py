"""Small folders in the real OpenClaw, Claude Code, basic-memory and Markdown formats, for the tests.

Each text follows the format as its tool documents it (OpenClaw's ``MEMORY.md`` and
``memory/YYYY-MM-DD.md``; Claude Code's ``CLAUDE.md`` with ``@path`` imports, ``.claude/rules``
and an auto-memory folder; basic-memory's observations and relations), trimmed to what a
test checks.
"""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

from importkit import ZONE

from agent_memory.importers import Item, Problem, read_all

BERLIN = ZoneInfo(ZONE)

OPENCLAW = {
    "MEMORY.md": """# Long-Term Memory

## About the User
- Name: Max
- Timezone: America/New_York

## Current Projects
- **Tiles library** (active)
  - Goal: a greedy layout engine
  - Status: writing the docs

Max prefers short answers.
""",
    "memory/2026-03-18.md": """# 2026-03-18

## 09:12 — Fixed the flaky deploy
- Root cause: stale DNS cache on the runner
- Decided to pin the resolver

## 2:05 PM Standup
Talked about the tiles release.

## Notes
Remember to renew the certificate.
""",
    "memory/2026-03-19-standup.md": "## [08:30] Standup\nShipped tiles 1.0.\n",
    "memory/projects/tiles.md": "# Tiles\n\nThe release train leaves on Fridays.\n",
    "AGENTS.md": "# AGENTS.md\n\nRead SOUL.md first.\n",
    "DREAMS.md": "Generated dream diary.\n",
}

CLAUDE_PROJECT = {
    "CLAUDE.md": """# Project conventions

See @README for the overview and @docs/git-instructions.md for the git workflow.

## Code style
- Use 2-space indentation
- Never write `@not/an/import` literally; mail ada@example.org for help

## Commands
Run the tests with:

```sh
make test  # see @fenced/not-an-import.md
```
""",
    "README": "Tiles: a mosaic layout library.\n",
    "docs/git-instructions.md": "INLINE-MARKER: always rebase before merging.\n",
    "packages/web/CLAUDE.md": "## Web\n- Use pnpm, not npm\n",
    ".claude/rules/testing.md": (
        '---\npaths:\n  - "tests/**/*.py"\n---\n# Testing\n- Plain test functions, no classes\n'
    ),
    "CLAUDE.local.md": "- My sandbox is at http://localhost:8080\n",
}

CLAUDE_MEMORY = {
    "MEMORY.md": """# Memory index

- [Response style](feedback_style.md) — keep answers short
- [Ada's background](user_role.md) — senior Go developer
- The staging database is read-only on Fridays
""",
    "feedback_style.md": """---
name: Response style
description: How Ada wants answers written
type: feedback
---
Lead with the answer; no summary at the end.
""",
    "user_role.md": """---
name: Ada's background
description: Who Ada is
metadata:
  type: user
---
Senior Go developer, new to the React side of this repo.
""",
}

BASIC_MEMORY = {
    "coffee/Coffee Brewing Methods.md": """---
title: Coffee Brewing Methods
type: note
tags: [coffee, brewing]
permalink: coffee-brewing-methods
date: 2024-05-02
---
# Coffee Brewing Methods

A comparison of the methods we tried at the office.

## Observations
- [method] Pour over provides more flavor clarity than French press
- [technique] Water temperature at 205°F extracts optimal compounds #brewing
- [preference] Ethiopian beans work well with lighter roasts (personal experience)
- [ ] buy a new grinder
- [00:01:12] said in the podcast
- Descaling monthly keeps the machine alive #maintenance

## Relations
- relates_to [[Coffee Bean Origins]]
- "pairs well with" [[Breakfast Pastries]] (weekend only)
- see also [[Tea Brewing Methods]] for a contrast

```text
- [fenced] not an observation
```

> - [callout] not an observation either
""",
}

NOTES = {
    "grout.md": "Use sanded grout for joints wider than 3 mm.\n",
    "journal/2024-01-15 kickoff.md": """---
title: Kickoff
date: 2024-01-15
tags: meeting, tiles
version: 1.10
draft: no
---
We agreed on a greedy layout engine.
""",
    ".obsidian/workspace.md": "editor state, not a note\n",
    "node_modules/pkg/README.md": "a dependency's readme\n",
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``root`` and return ``root``."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def read(fmt: str, path: Path, limit: int | None = None) -> tuple[dict[str, Item], list[Problem]]:
    """Read ``path`` in ``fmt``: ``({source anchor: item}, problems)``."""
    items, problems = read_all(fmt, str(path), zone=BERLIN, limit=limit)
    by_source = {item.source: item for item in items}
    assert len(by_source) == len(items), "two items share one source anchor"
    return by_source, problems


def cited(root: Path, source: str) -> list[str]:
    """Return the lines a ``file#L<first>-L<last>`` anchor cites, blank ones left out."""
    name, lines = source.split("#L")
    first, last = (int(n.lstrip("L")) for n in lines.split("-"))
    text = (root / name).read_text(encoding="utf-8").split("\n")[first - 1 : last]
    return [line for line in text if line.strip()]
