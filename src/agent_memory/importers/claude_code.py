"""Read Claude Code's memory files into records (issue 9: ``--from claude-code``).

Claude Code has two kinds of memory (code.claude.com/docs/en/memory):

- **Instruction files** written by people: ``CLAUDE.md`` (project root, ``.claude/CLAUDE.md``,
  nested folders, ``~/.claude/CLAUDE.md``), ``CLAUDE.local.md`` and ``.claude/rules/**/*.md``
  (``~/.claude/rules/*.md`` when ``~/.claude`` is the folder given). Each top-level bullet and
  each run of other blocks becomes a ``procedure`` (how to work here), prefixed with its
  heading, tagged ``claude-code`` and ``claude-md`` (or ``rules``). An ``@path`` import
  (``See @docs/git.md``) is kept as written in the text and named in a tag ``include:<path>``;
  the imported file is never inlined (it may lie outside the folder, and it is its own source).
  As in Claude Code, ``@`` inside code spans and fenced blocks is not an import.
- **Auto memory** written by Claude: a folder (``~/.claude/projects/<project>/memory/``) with
  a ``MEMORY.md`` index and one topic file per memory, whose frontmatter gives ``name``,
  ``description`` and ``type`` (``user``, ``feedback``, ``project``, ``reference``; at the top
  level or under ``metadata``). A topic file becomes one record (chunks when long) headed by
  its name and description; ``feedback`` is a ``procedure``, the others ``fact``; tags
  ``claude-code``, ``auto-memory``, ``memory-type:<type>``. The index's own bullets become
  ``fact`` records, except those that only point at a topic file present in the folder (that
  file is imported itself).

PATH may be one file (anchored as named, home as ``~``), an auto-memory folder, a project
folder (searched for instruction files and ``memory/`` folders holding a ``MEMORY.md``), or
``~/.claude`` itself. Sources are ``<file>#L<first>-L<last>``.

Invariant: an ``@path`` import is never read; a ``MEMORY.md`` in a folder not named ``memory``
(a project's own, an agent-memory Home's view) is never taken for Claude Code's auto memory.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from datetime import tzinfo

from agent_memory.errors import RecordError
from agent_memory.importers.files import SKIP_DIRS, TextFile, resolve_root
from agent_memory.importers.frontmatter import meta_text
from agent_memory.importers.items import Item, Problem
from agent_memory.importers.markdown import (
    Note,
    curated_units,
    item_text,
    note_texts,
    parse_note,
    problem_of,
    source_files,
)

__all__ = ["includes", "read_claude_code"]

INSTRUCTION_FILES = ("CLAUDE.md", "CLAUDE.local.md")
MEMORY_TYPES = {"user": "fact", "feedback": "procedure", "project": "fact", "reference": "fact"}
"""Auto-memory ``type`` → record type: feedback is guidance on how to work."""

_IMPORT = re.compile(r"(?:^|(?<=[\s(]))@((?:~/|\.{1,2}/|/)?[\w.\-][\w.\-/~]*)")
_FENCED = re.compile(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
_INDEX_LINK = re.compile(r"^\[[^\]]*\]\(<?([^)>\s]+\.md)>?\)")


def read_claude_code(path: str, *, zone: tzinfo, limit: int | None = None) -> Iterator[Item | Problem]:
    """Yield records for the Claude Code instruction and auto-memory files of ``path``.

    Args:
        path: One file, or a folder (project, auto-memory folder, or ``~/.claude``).
        zone: Unused: these files carry no dates. Accepted like every reader.
        limit: At most this many files; all when None.

    Raises:
        RecordError: ``path`` does not exist, or a folder holds no Claude Code memory file.
    """
    del zone
    root = resolve_root(path)
    single = not os.path.isdir(root)
    base = os.path.dirname(root) if single else root
    top_rules = os.path.basename(root) == ".claude"

    def role(rel: str) -> str | None:
        return _role(base, rel, top_rules=top_rules)

    found = list(source_files(path, include=lambda rel: role(rel) is not None, descend=_descend, limit=limit))
    if not found:
        raise RecordError(
            "no Claude Code memory here: no CLAUDE.md, .claude/rules/*.md or MEMORY.md",
            path=path,
            hint="pass a project folder, ~/.claude/projects/<project>/memory or one file",
        )
    for file in found:
        if isinstance(file, Problem):
            yield file
            continue
        kind = _single_role(file) if single else role(file.path)
        folder = os.path.dirname(root) if single else os.path.join(root, os.path.dirname(file.path))
        try:
            items = list(_items(parse_note(file), kind or "instructions", folder))
        except RecordError as exc:
            yield problem_of(file.path, exc)
            continue
        yield from items


def _descend(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name not in SKIP_DIRS and (name == ".claude" or not name.startswith("."))


def _role(base: str, rel: str, *, top_rules: bool) -> str | None:
    folder, _, name = rel.rpartition("/")
    if not name.endswith(".md"):
        return None
    if name in INSTRUCTION_FILES:
        return "instructions"
    parts = rel.split("/")
    if any(a == ".claude" and b == "rules" for a, b in itertools.pairwise(parts)):
        return "rules"
    if top_rules and parts[0] == "rules":
        return "rules"
    # Claude Code names the auto-memory folder ``memory``: a project's own MEMORY.md is not one.
    in_memory = os.path.basename(os.path.join(base, folder).rstrip("/")) == "memory"
    if in_memory and os.path.isfile(os.path.join(base, folder, "MEMORY.md")):
        return "index" if name == "MEMORY.md" else "topic"
    return None


def _single_role(file: TextFile) -> str:
    name = file.path.rsplit("/", 1)[-1]
    if name == "MEMORY.md":
        return "index"
    if name in INSTRUCTION_FILES:
        return "instructions"
    if "/rules/" in f"/{file.path}":
        return "rules"
    return "topic" if file.text.startswith("---\n") else "instructions"


def _items(note: Note, kind: str, folder: str) -> Iterator[Item]:
    if kind == "topic":
        yield from _topic(note)
        return
    for first, last, text in curated_units(note):
        source = f"{note.path}#L{first}-L{last}"
        if kind == "index":
            if not _points_at_topic(item_text(note.text(first, last)), folder):
                yield Item(text, source, "fact", tags=("claude-code", "auto-memory"))
            continue
        label = "rules" if kind == "rules" else "claude-md"
        tags = ("claude-code", label, *(f"include:{target}" for target in includes(text, folder)))
        yield Item(text, source, "procedure", tags=tags)


def _topic(note: Note) -> Iterator[Item]:
    meta = note.meta.get("metadata") if isinstance(note.meta.get("metadata"), dict) else {}
    kind = meta_text(note.meta, "type", note.path) or meta_text(meta or {}, "type", note.path)
    name = meta_text(note.meta, "name", note.path)
    description = meta_text(note.meta, "description", note.path)
    tags: tuple[str, ...] = ("claude-code", "auto-memory")
    if kind:
        tags += (f"memory-type:{kind}",)
    record_type = MEMORY_TYPES.get((kind or "").lower(), "fact")
    for index, (first, last, text) in enumerate(note_texts(note, title=name)):
        if index == 0 and description:
            head, _, rest = text.partition("\n\n")
            text = f"{head}\n\n{description}\n\n{rest}" if rest else f"{head}\n\n{description}"
        yield Item(text, f"{note.path}#L{first}-L{last}", record_type, tags=tags)


def _points_at_topic(text: str, folder: str) -> bool:
    match = _INDEX_LINK.match(text)
    if match is None:
        return False
    target = os.path.normpath(os.path.join(folder, match.group(1)))
    return os.path.dirname(target) == os.path.normpath(folder) and os.path.isfile(target)


def includes(text: str, folder: str) -> list[str]:
    """Return the ``@path`` imports of ``text`` as written, outside code spans and fences.

    A token counts when it looks like a path (holds ``/`` or ``.``) or names a file that
    exists beside the file it is in (``@README``), so ``@alice`` is not an import.
    """
    plain = _CODE_SPAN.sub(" ", _FENCED.sub(" ", text))
    found: list[str] = []
    for match in _IMPORT.finditer(plain):
        token = match.group(1).rstrip(".,:;!?")
        if not token:
            continue
        if "/" in token or "." in token or os.path.exists(os.path.join(folder, token)):
            found.append(token)
    return list(dict.fromkeys(found))
