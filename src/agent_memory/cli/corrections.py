"""``agent-memory edit`` and ``sync``: corrections by a person become records (DESIGN.md §3, §9).

``edit`` opens one record's text in the user's editor and saves a changed text as a
correction record that supersedes it; ``sync`` does the same for notes edited by hand in
``notes/``, resolves version-number clashes left by a git merge and remembers new Markdown
files (:mod:`agent_memory.sync.run`). Neither rewrites a version file with new content.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import unicodedata
from pathlib import Path

import click

from agent_memory.cli.common import default_source, echo_json, home_option, json_option, non_empty, open_home

_EDITOR_HINT = 'set VISUAL or EDITOR, e.g. export EDITOR=nano (or EDITOR="code --wait")'


@click.command()
@click.argument("record_id")
@click.option("--reason", default="corrected in an editor", show_default=True, help="Why the text changes.")
@click.option(
    "--source",
    metavar="REF",
    default=None,
    callback=non_empty,
    help="Where the correction came from [default: cli:<user>@<date>].",
)
@click.option(
    "--namespace",
    metavar="NS",
    default=None,
    help="Refuse unless RECORD_ID is in this namespace [default: the record's own].",
)
@home_option
@json_option
def edit(
    record_id: str, reason: str, source: str | None, namespace: str | None, home: str | None, as_json: bool
) -> None:
    """Correct RECORD_ID in $EDITOR; a changed text is saved as a correction that supersedes it.

    The editor is $VISUAL, else $EDITOR (a command line: "code --wait" works), run on a
    temporary Markdown file holding the record's text. When the text comes back changed,
    a new record of it supersedes RECORD_ID (a state record by its new value, a knowledge
    record by the corrected text), keeping its kind, subject, namespace, type, tags,
    confidence, sources and evidence; the old text stays in its history. An unchanged
    text writes nothing. RECORD_ID must be active. If the save fails (another writer
    changed the record meanwhile, an empty text), the edited text is kept in the
    temporary file named by the error. Prints the new record id (--json: the result
    of supersede, with "changed"). Exit status 3 when no editor is set or it fails.
    (DESIGN.md §3 and §9 "Corrections".)
    """
    from agent_memory.errors import AgentMemoryError, RecordError
    from agent_memory.memory import Memory
    from agent_memory.sync.edit import correct, require_active
    from agent_memory.write.plan import normalize_text

    opened = open_home(home)
    history = opened.store().history(record_id)
    record = history[-1]
    require_active(record)
    if namespace is not None and record.effective_namespace != namespace:
        raise RecordError(
            f"is in namespace {record.effective_namespace!r}, not {namespace!r}",
            record_id=record_id,
            field="namespace",
        )
    text, draft = _run_editor(_editor_command(), record.body, record_id)
    if _normal(text) == _normal(record.body):
        shutil.rmtree(draft.parent, ignore_errors=True)
        if as_json:
            echo_json({"record_id": record_id, "changed": False})
        else:
            click.echo(f"unchanged: nothing written for {record_id}", err=True)
        return
    try:
        normalize_text(text)  # an emptied text is refused before the Home is opened for writing
        with Memory.open(opened.root, source_kind="cli") as memory:
            result = correct(
                memory,
                record,
                text,
                source=source or default_source(),
                reason=reason,
                expected_version=len(history),
            )
    except AgentMemoryError as exc:
        kept = f"your edited text is kept in {draft}"
        exc.hint = f"{exc.hint}; {kept}" if exc.hint else kept
        raise
    shutil.rmtree(draft.parent, ignore_errors=True)
    if as_json:
        echo_json({**result.to_json(), "changed": True, "corrects": record_id})
    else:
        click.echo(result.record_id)
        click.echo(f"superseded {record_id}", err=True)


@click.command()
@click.option("--dry-run", is_flag=True, help="Report what would be done; write nothing.")
@click.option(
    "--namespace",
    metavar="NS",
    default="default",
    show_default=True,
    help="Namespace of records made from new files (frontmatter may name another).",
)
@home_option
@json_option
def sync(dry_run: bool, namespace: str, home: str | None, as_json: bool) -> None:
    """Turn hand edits and new files in notes/ into records; resolve version clashes after a git merge.

    A version file edited by hand is restored to its proven bytes (from git, else
    rebuilt from the record's other versions and checked against its id) and the edit
    becomes a correction record that supersedes the record. A file only reformatted is
    restored. Two versions with one number after a git merge: the side that follows
    the history keeps the number, the other is appended when that is a legal move. A
    new Markdown file becomes a new record (source: its path; frontmatter may set type,
    kind, subject, tags, namespace, scope, confidence, occurred_at, valid_from,
    epistemic_status, taint) and is then removed. Anything else is reported with its
    path and reason and left as it is.

    One line per file: the action (correct, restore, resolve, create, problem), the
    path, the record and what was done. Exit status 0 when every file was handled, 1
    when problems remain, 3 when the Home cannot be opened. The result is committed to
    the Home's git repository like every write, except while a merge is unfinished
    (DESIGN.md §6 and §9 "Corrections").
    """
    from agent_memory.memory import Memory
    from agent_memory.sync.run import sync as run_sync

    opened = open_home(home)
    report = run_sync(
        opened,
        open_memory=lambda: Memory.open(opened.root, source_kind="file"),
        dry_run=dry_run,
        namespace=namespace,
    )
    if as_json:
        echo_json(report.to_json())
    else:
        prefix = "would " if dry_run else ""
        for item in report.items:
            verb = item.action if item.action == "problem" else prefix + item.action
            ids = " -> ".join(i for i in (item.record_id, item.new_record_id) if i)
            click.echo(f"{verb:<14} {item.path}{'  ' + ids if ids else ''}: {item.detail}")
            if item.hint:
                click.echo(f"{'':<14} hint: {item.hint}")
        counts = ", ".join(f"{n} {action}" for action, n in report.counts().items() if n)
        click.echo(counts or "nothing to sync: notes/ holds only sound version files", err=True)
    if not report.ok:
        raise click.exceptions.Exit(1)


def _editor_command() -> list[str]:
    """Return the editor command line from $VISUAL, else $EDITOR.

    Raises:
        ConfigError: Neither is set, or the value cannot be split into words.
    """
    from agent_memory.errors import ConfigError

    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError as exc:
                raise ConfigError(f"${name} is not a command line: {exc}", field=name) from None
            if words:
                return words
    raise ConfigError("no editor: neither $VISUAL nor $EDITOR is set", hint=_EDITOR_HINT)


def _run_editor(command: list[str], text: str, record_id: str) -> tuple[str, Path]:
    """Write ``text`` to a private temporary file, run the editor on it and return (new text, file).

    Raises:
        AgentMemoryError: The editor cannot be started or exits non-zero (the file is removed),
            or the file is not UTF-8 afterwards (the file is kept and named).
    """
    from agent_memory.errors import AgentMemoryError

    folder = Path(tempfile.mkdtemp(prefix="agent-memory-edit-"))
    draft = folder / f"{record_id.removeprefix('mem:')[:12]}.md"
    draft.write_text(text + "\n", encoding="utf-8")
    try:
        status = subprocess.run([*command, str(draft)], check=False).returncode  # noqa: S603 - the user's editor
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise AgentMemoryError(
            f"cannot start the editor {command[0]!r}: {exc.strerror or exc}", hint=_EDITOR_HINT
        ) from None
    if status != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise AgentMemoryError(f"the editor {command[0]!r} exited with status {status}; nothing was saved")
    try:
        return draft.read_text(encoding="utf-8"), draft
    except UnicodeDecodeError:
        raise AgentMemoryError("the edited text is not UTF-8; nothing was saved", path=str(draft)) from None


def _normal(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()
