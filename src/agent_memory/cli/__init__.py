"""The ``agent-memory`` command line (DESIGN.md §8): one group, one module per family of commands.

Start-up stays light: the group is a :class:`~agent_memory.cli.lazy.LazyGroup`, so a command's
module is imported only when that command runs; ``agent-memory --help`` lists every command
from :data:`COMMANDS` and imports none of them (nor the record, store or search code).
Errors become one line on stderr plus an optional hint, in one place (:func:`main`).

To add a command: one line in :data:`COMMANDS`, ``name: ("module:function", short help)``,
the short help being the first sentence of the command's docstring (a test checks they agree).

Exit status: 0 success; 1 a check found problems (``verify``, ``doctor``, ``sync``); 2 a usage
error; 3 the operation could not be done (bad input, unreadable file, store error).
``import``: 0 everything taken in; 4 done with exceptions (some items refused or cleaned, each
listed); 1 nothing was written.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from agent_memory.cli.lazy import LazyGroup

__all__ = ["COMMANDS", "EXIT_ERROR", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "cli", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_ERROR = 3

COMMANDS: dict[str, tuple[str, str]] = {
    "accept": (
        "agent_memory.cli.proposals:accept",
        "Accept maintenance proposals (re-validated, then applied) or write pending records (mem:…).",
    ),
    "approve": (
        "agent_memory.cli.governance:approve",
        "Approve the quarantined records RECORD_ID…: they may then be autoloaded (review events in the log).",
    ),
    "archive": (
        "agent_memory.cli.memory:archive_",
        "Retire RECORD_ID (terminal; the content is kept, recall shows it only with --include-archived).",
    ),
    "archive-inbox": (
        "agent_memory.cli.jobs:archive_inbox",
        "Archive inbox.md into archive/YYYY-MM-DD.md (append-only) and start a fresh inbox.",
    ),
    "bind": (
        "agent_memory.cli.bind:bind",
        "Bind AGENT to the Home: a memory-protocol block in its instruction file, and the MCP server.",
    ),
    "capture": (
        "agent_memory.cli.jobs:capture",
        "Append TEXT to the Home's inbox.md and print its id (mem-YYYY-MM-DD-NNN).",
    ),
    "consolidate": (
        "agent_memory.cli.maintenance:consolidate",
        "Consolidate the Home: dedup, near-duplicates, state, contradictions, promotion, rule flags, decay.",
    ),
    "controls": (
        "agent_memory.cli.governance:controls",
        "List every withdrawal and reinstatement, oldest first, marking the withdrawals in force.",
    ),
    "decline": (
        "agent_memory.cli.proposals:decline",
        "Decline maintenance proposals, or drop pending records (mem:…) without writing them.",
    ),
    "demo": (
        "agent_memory.cli.demo:demo",
        "Build a Home from real input, then capture, consolidate, render, recall, supersede, dispute, withdraw.",  # noqa: E501 - one sentence, as click shows it
    ),
    "distill": (
        "agent_memory.cli.maintenance:distill",
        "Distill archived inbox lines into proposals for review (autodream, seed 000 §14).",
    ),
    "doctor": (
        "agent_memory.cli.doctor:doctor",
        "Check the Home: notes, signatures, log chain, intents, indexes, views, archive, state, salience.",
    ),
    "edit": (
        "agent_memory.cli.corrections:edit",
        "Correct RECORD_ID in $EDITOR; a changed text is saved as a correction that supersedes it.",
    ),
    "erase": (
        "agent_memory.cli.erasure:erase",
        "Erase records irreversibly from every holder and print the receipt (seed 000 §12.3).",
    ),
    "export": (
        "agent_memory.cli.transfer:export_",
        "Write every record's latest version to the MemoryFile PATH, signed by the Home's key.",
    ),
    "feedback": (
        "agent_memory.cli.feedback:feedback",
        "Record how memory performed: retrievals, outcomes, feedback, policy proposals (seed 000 §23).",
    ),
    "forget": (
        "agent_memory.cli.erasure:forget",
        'Route a "forget" request (seed 000 §12.1): withdraw the scope and print the surface receipt.',
    ),
    "golden": (
        "agent_memory.cli.search:golden",
        "Run golden.yaml's questions through recall; print recall@k and the misses.",
    ),
    "history": (
        "agent_memory.cli.records:history",
        "Print every version of RECORD_ID, oldest first: version, time, state and why it changed.",
    ),
    "import": (
        "agent_memory.cli.transfer:import_",
        "Import PATHS into the Home: MemoryFiles by default, or conversations or a git repository.",
    ),
    "inbox": (
        "agent_memory.cli.jobs:inbox",
        "Check inbox.md: list its items and report each malformed line with its number.",
    ),
    "init": (
        "agent_memory.cli.home:init",
        "Create a Home at PATH (default: --home, $AGENT_MEMORY_HOME, else ./memory).",
    ),
    "init-key": (
        "agent_memory.cli.home:init_key",
        "Create a new key pair for a Home whose key file is lost (memory.toml [identity] key_file).",
    ),
    "list": (
        "agent_memory.cli.records:list_",
        "List the latest version of every record matching the filters, oldest first (by created_at, id).",
    ),
    "log": (
        "agent_memory.cli.log:log",
        "Print the operation log of a Home, oldest first, one entry per line.",
    ),
    "migrate": (
        "agent_memory.cli.migrate:migrate",
        "Copy every version of every record from one store into another, then verify both sides.",
    ),
    "promote": (
        "agent_memory.cli.promotion:promote",
        "Propose promoting RECORD_ID into conventions.md; print the proposal id (mempromo-…).",
    ),
    "promote-accept": (
        "agent_memory.cli.promotion:promote_accept",
        "Accept PROPOSAL_ID: record the decision, then append its rule to conventions.md.",
    ),
    "promote-reject": (
        "agent_memory.cli.promotion:promote_reject",
        "Reject PROPOSAL_ID with a reason; conventions.md is not touched.",
    ),
    "promotions": (
        "agent_memory.cli.promotion:promotions",
        "List promotion proposals: id, status, source record and rule (a JSON list with --json).",
    ),
    "proposals": (
        "agent_memory.cli.proposals:proposals",
        "List pending maintenance proposals: a table, then a diff of the versions each would add.",
    ),
    "recall": (
        "agent_memory.cli.memory:recall",
        "Recall what the Home knows about QUERY, within a token budget, as dated, sourced testimony.",
    ),
    "reindex": (
        "agent_memory.cli.search:reindex",
        "Rebuild the search indexes from the notes, with a progress bar; logs a reindex event.",
    ),
    "reinstate": (
        "agent_memory.cli.governance:reinstate",
        "Lift the withdrawal WITHDRAWAL_ID (memwd-…); print the reinstatement id.",
    ),
    "reject": (
        "agent_memory.cli.governance:reject",
        "Reject RECORD_ID: kept for the record, down-weighted like superseded, never autoloaded.",
    ),
    "remember": ("agent_memory.cli.memory:remember", "Remember TEXT and print the record id."),
    "render": (
        "agent_memory.cli.jobs:render",
        "Write MEMORY.md, index.md and topics/*.md from the Home's notes and log.",
    ),
    "resolve": (
        "agent_memory.cli.memory:resolve",
        "Settle a dispute: WINNER_ID returns to active, LOSER_ID is superseded by it.",
    ),
    "revert": (
        "agent_memory.cli.proposals:revert",
        "Revert an accepted maintenance proposal with correction records; nothing is deleted.",
    ),
    "review": (
        "agent_memory.cli.governance:review",
        "List what waits for a person: quarantined and pending records, then maintenance proposals.",
    ),
    "schedule": (
        "agent_memory.cli.jobs:schedule",
        "Print the crontab line, systemd user units or launchd plist that runs archive-inbox daily.",
    ),
    "serve": (
        "agent_memory.cli.serve:serve",
        "Serve the Home to MCP clients (stdio by default; --http for streamable HTTP on 127.0.0.1).",
    ),
    "show": (
        "agent_memory.cli.records:show",
        "Print the latest version of RECORD_ID as its note file (or its wire object with --json).",
    ),
    "status": (
        "agent_memory.cli.memory:status",
        "Show counts by state, type and kind, open disputes, quarantine, and whether each index is fresh.",
    ),
    "supersede": (
        "agent_memory.cli.memory:supersede",
        "Replace the active record OLD_ID with a new record of TEXT (same kind, subject, namespace).",
    ),
    "sync": (
        "agent_memory.cli.corrections:sync",
        "Turn hand edits and new files in notes/ into records; resolve version clashes after a git merge.",
    ),
    "ui": (
        "agent_memory.cli.ui:ui",
        "Serve a review page for the Home on 127.0.0.1: browse, search and decide in a browser.",
    ),
    "verify": (
        "agent_memory.cli.verify:verify",
        "Check the files or folders PATHS and print one line per record.",
    ),
    "withdraw": (
        "agent_memory.cli.governance:withdraw",
        "Withdraw a scope from recall and export until it is reinstated; print the withdrawal id.",
    ),
}
"""Every command: ``name -> ("agent_memory.cli.<module>:<function>", short help)``."""


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agent-memory")
def cli() -> None:
    """Long-term memory for LLM agents: Markdown notes you can read, diff and carry away."""


_EXTRAS = {
    "psycopg": "postgres",
    "mcp": "mcp",
    "onnxruntime": "embeddings",
    "tokenizers": "embeddings",
    "openai": "llm",
}
"""Optional dependencies by top-level module, and the extra that installs each."""


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn every ``AgentMemoryError`` into a one-line message and exit status 3.

    With ``--json`` among the arguments an error is one JSON object on stderr instead:
    ``{"error": message, "exit": status, "hint"?, "path"?, "record_id"?, "field"?}``, so a
    program driving the CLI reads failures as it reads results (issue 24).
    """
    from agent_memory.errors import AgentMemoryError

    args = sys.argv[1:] if argv is None else argv
    fail = _Failure(as_json="--json" in args[: args.index("--") if "--" in args else len(args)])
    try:
        # Outside standalone mode click returns the code of a ``click.exceptions.Exit``.
        result = cli.main(args=argv, prog_name="agent-memory", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        if not fail.as_json:
            exc.show()
            sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else EXIT_ERROR)
        fail(exc.format_message(), EXIT_USAGE if isinstance(exc, click.UsageError) else EXIT_ERROR)
    except click.exceptions.Abort:
        fail("aborted")
    except AgentMemoryError as exc:
        fail(str(exc), hint=exc.hint, path=exc.path, record_id=exc.record_id, field=exc.field)
    except ImportError as exc:
        # An optional dependency that is not installed: say which extra brings it.
        cause = exc.__cause__ if isinstance(exc.__cause__, ImportError) else exc
        extra = _EXTRAS.get((cause.name or exc.name or "").partition(".")[0])
        if extra is None:
            raise  # a fault of agent-memory itself: keep the traceback
        fail(str(exc), hint=f"pip install 'agent-memory[{extra}]'")
    except OSError as exc:
        # A file system refusal outside our own checks (a path under /proc, a file for a folder).
        where = f": {exc.filename}" if exc.filename else ""
        fail(f"{exc.strerror or exc}{where}", path=str(exc.filename) if exc.filename else None)
    except Exception as exc:
        # sqlite3 is imported by the commands that use it, never at start-up.
        sqlite3 = sys.modules.get("sqlite3")
        if sqlite3 is None or not isinstance(exc, sqlite3.Error):
            raise
        fail(f"SQLite: {exc}", hint="is the path a database of agent-memory's?")
    sys.exit(result if isinstance(result, int) else EXIT_OK)


class _Failure:
    """Report a failure on stderr (``agent-memory: error: …``, ``hint: …``; or one JSON object), then exit."""

    def __init__(self, *, as_json: bool) -> None:
        self.as_json = as_json

    def __call__(
        self, message: str, status: int = EXIT_ERROR, *, hint: str | None = None, **where: str | None
    ) -> NoReturn:
        if self.as_json:
            import json

            found = {key: value for key, value in where.items() if value}
            error = {"error": message, "exit": status, **({"hint": hint} if hint else {}), **found}
            click.echo(json.dumps(error, ensure_ascii=False), err=True)
        else:
            click.echo(f"agent-memory: error: {message}", err=True)
            if hint:
                click.echo(f"hint: {hint}", err=True)
        sys.exit(status)
