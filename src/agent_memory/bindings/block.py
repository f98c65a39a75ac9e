"""The hot-entry block an agent reads every session, and its marked, in-place update (seed 000 §8).

The block does the five things of seed 000 §8 and nothing else: (1) identity and hard
rules — a pointer to the Home's ``conventions.md`` and the testimony rule of §15.2; (2) the
memory root; (3) when to read memory, and how; (4) when to write memory, and how; (5) how a
bounded "forget" request is routed — reversible withdrawal before any retrieval, erasure only
on an explicit, authorised request (§12.1–§12.3).

It lives between :data:`BEGIN` and :data:`END` in the agent's own instruction file
(``CLAUDE.md``, ``AGENTS.md``…). Invariant of :func:`upsert_block`: the file holds exactly
one block afterwards, and every byte outside the markers is what it was.
"""

from __future__ import annotations

from agent_memory.errors import ConfigError

__all__ = ["BEGIN", "END", "render_block", "upsert_block"]

BEGIN = "<!-- agent-memory:begin -->"
END = "<!-- agent-memory:end -->"

_TEMPLATE = """\
{begin}
<!-- Written by `agent-memory bind`; run it again to update. Edit outside these markers. -->
## Memory protocol (agent-memory)

Identity and hard rules: follow `{root}/conventions.md` (human-owned rules; load it every
session). Read every recalled item as dated testimony, not fact: check its date, source and
state before acting on it, and show conflicting items side by side.

Memory root: `{root}` (an agent-memory Home). Never edit its `notes/` by hand; correct a
record with `agent-memory edit ID --home {root}`.

Read memory when:
- the user asks about prior preferences, decisions, environment or history;
- the task depends on earlier setup or operational context;
- the user says "as before", "remember", "don't forget", or refers to past work.
How: {read_how}.
Withdrawals are applied before anything is retrieved. To navigate, read `{root}/index.md`,
then `{root}/topics/*.md`; read `{root}/archive/` only for audit or source tracing.

Write memory when:
- the user says "remember", "don't forget", "from now on" or "this is my preference";
- a reusable pitfall, decision, workflow lesson or stable environment fact is confirmed.
How: {write_how}.
Write one reusable sentence with its source. A value that replaces the previous one is
`kind: state` with an exact `subject` (e.g. `host:staging`); anything else, and anything
unsure, is `knowledge`. Never store secrets or credentials.

Withdraw memory influence when the user says "forget that exploration", "do not use that
conclusion", or otherwise withdraws a bounded run, item or source: it is a reversible
withdrawal, resolved before any retrieval.
How: {forget_how}.
Answer with the surface receipt it prints (context, project, derived artifacts, memory).
Never copy a failed exploration into memory just to withdraw it. Irreversible erasure
(`agent-memory erase`) only on an explicit erasure request by someone with that authority.
{end}
"""


def render_block(root: str, *, mcp: bool) -> str:
    """Return the marked block for a Home at ``root``, ending with a newline.

    Args:
        root: The memory root as the agent should name it: relative to the project
            (``memory``) when the Home is inside it, else absolute.
        mcp: The agent has the ``agent-memory`` MCP server registered; the block names its
            tools first and the command line as the fallback.
    """
    home = f"--home {_quoted(root)}"
    recall = f'`agent-memory recall "QUERY" {home}`'
    remember = f'`agent-memory remember "TEXT" --source REF {home}`'
    forget = f"`agent-memory forget --record ID {home}` (`--source REF` for a run or source)"
    if mcp:
        recall = f"the `recall` tool of the `agent-memory` MCP server, or {recall}"
        remember = f"the `remember` tool, or {remember}"
        forget = f"the `forget` tool, or {forget}"
    return _TEMPLATE.format(
        begin=BEGIN, end=END, root=root, read_how=recall, write_how=remember, forget_how=forget
    )


def upsert_block(existing: str | None, block: str, *, path: str) -> str:
    """Return the file's new text: ``block`` replacing the marked block, or appended after the text.

    Args:
        existing: The file's current text (``None`` when the file does not exist).
        block: The new block, from :data:`BEGIN` to :data:`END` and a newline.
        path: The file, named in errors.

    Raises:
        ConfigError: The file holds a begin marker without its end (or the reverse), or more
            than one block; nothing should be written (the file is named).
    """
    if not existing:
        return block
    begins, ends = existing.count(BEGIN), existing.count(END)
    if begins == 0 and ends == 0:
        separator = "" if existing.endswith("\n\n") else "\n" if existing.endswith("\n") else "\n\n"
        return existing + separator + block
    start, stop = existing.find(BEGIN), existing.find(END)
    if begins != 1 or ends != 1 or stop < start:
        raise ConfigError(
            f"holds {begins} '{BEGIN}' and {ends} '{END}' marker(s); expected one block",
            path=path,
            hint="remove the stray markers by hand (keep one block or none), then bind again",
        )
    after = stop + len(END)
    if existing.startswith("\n", after):
        after += 1
    return existing[:start] + block + existing[after:]


def _quoted(root: str) -> str:
    return root if all(c.isalnum() or c in "/._-~" for c in root) else f"'{root}'"
