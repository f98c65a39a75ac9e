"""``agent-memory export`` and ``import``: MemoryFiles in and out of a Home (seed 001; DESIGN.md §8)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import commit_home, echo_json, home_option, json_option, open_home, quiet_option
from agent_memory.cli.progress import Progress, progress

if TYPE_CHECKING:
    from agent_memory.memory import Memory
    from agent_memory.transfer.exchange import ImportReport

EXIT_NOTHING = 1
"""``import``: nothing was taken in (every input failed, or every item was refused)."""

EXIT_PARTIAL = 4
"""``import``: done with exceptions: some items (or files) were refused, or cleaned, each listed
in the report; the rest was taken in."""


@click.command(name="export")
@click.argument("path", type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "--include-withdrawn",
    is_flag=True,
    help="Also export withdrawn records, with their withdrawal controls (read by agent-memory only).",
)
@home_option
@json_option
def export_(path: str, include_withdrawn: bool, home: str | None, as_json: bool) -> None:
    """Write every record's latest version to the MemoryFile PATH, signed by the Home's key.

    Withdrawn records are left out, unless --include-withdrawn carries them together with
    every withdrawal control, so that an agent-memory import keeps them withdrawn.
    """
    from agent_memory.errors import StoreError
    from agent_memory.governance.erasure.sweep import export_location
    from agent_memory.stores.file_io import write_bytes_atomic
    from agent_memory.transfer.exchange import Refusal, export_memory_file

    opened = open_home(home)
    store, log = opened.store(), opened.log()
    refused: list[Refusal] = []
    keys = opened.identity()
    memory_file = export_memory_file(
        store,
        keys=keys,
        log=log,
        include_withdrawn=include_withdrawn,
        refused=refused,
        witness=opened.witness(keys),
        home_signer=opened.signer(),
        trusted=opened.settings.trusted_signers,
    )
    verified = len(store.version_tokens()) - len(refused)
    omitted = 0 if include_withdrawn else verified - len(memory_file.records)
    try:
        write_bytes_atomic(path, memory_file.dumps())
    except OSError as exc:
        raise StoreError(f"cannot write the MemoryFile: {exc.strerror or exc}", path=path) from None
    details: dict[str, object] = {"path": path, "records": len(memory_file.records)}
    if omitted:
        details["withdrawn_omitted"] = omitted
    if include_withdrawn:
        details["include_withdrawn"] = True
    if refused:
        details["refused"] = [refusal.record_id for refusal in refused]
    # The log names the export so that a later erasure finds and cleans it, in words that mean
    # this Home only (issue 20 item 3): relative to the Home when inside it (a copy of the Home
    # then names its own copy), else absolute together with the Home's root it was made from.
    # Under the writer lock, so the line is signed into the checkpoint beside the key when the
    # lock is released (a bare append left `log --verify` warning of an uncovered entry), then
    # committed like every other write.
    since = time.time()
    with opened.writer_lock():
        log.append(
            "export", actor=opened.settings.owner, details={**details, **export_location(opened.root, path)}
        )
    commit_home(opened, "export", since=since)
    if as_json:
        echo_json({**details, "agent": memory_file.agent})
    else:
        click.echo(f"exported {len(memory_file.records)} records to {path} (signed by {memory_file.agent})")
        if omitted:
            click.echo(f"{omitted} withdrawn records left out (--include-withdrawn carries them)", err=True)
    for refusal in refused:
        click.echo(f"refused (left out of the export): {refusal}", err=True)


@click.command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option(
    "--from",
    "fmt",
    default="memory-file",
    type=click.Choice(
        ["memory-file", "locomo", "longmemeval", "git", "openclaw", "claude-code", "basic-memory", "markdown"]
    ),
    show_default=True,
    help="The input format: a MemoryFile, a LoCoMo or LongMemEval JSON file, a git repository folder, "
    "an OpenClaw workspace, Claude Code memory, a basic-memory folder or a folder of Markdown notes.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Import at most N sessions per conversation (datasets), the N latest commits (git), "
    "the N latest daily logs (openclaw) or N files (the other folder formats).",
)
@click.option(
    "--no-verify", is_flag=True, help="Skip signature checks (every record is then tainted external)."
)
@click.option(
    "--trust",
    is_flag=True,
    help="Vouch for the input (any --from format but memory-file): its records are not tainted "
    "external (by default they are quarantined until approved).",
)
@home_option
@json_option
@quiet_option
def import_(
    paths: tuple[str, ...],
    fmt: str,
    limit: int | None,
    no_verify: bool,
    trust: bool,
    home: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Import PATHS into the Home: MemoryFiles by default, or conversations or a git repository.

    With --from locomo / longmemeval each turn becomes a dated episode "Speaker: text"
    sourced to its position in the file (locomo.json#conv-26/D1:3); dataset labels that give
    answers away are never read. With --from git each commit becomes a dated episode
    (source git:<sha>) and README / docs/*.md become notes sourced to file and line range.
    Every item goes through remember (secrets screening, dedup, log), so importing again
    adds nothing. A file that cannot be read is reported and the others still import.
    Imported records arrive tainted external (quarantined until approved: a conversation or
    a commit message can carry instructions) unless --trust is given.

    With --from openclaw / claude-code / basic-memory / markdown PATH is a folder (or one
    file) of another tool's Markdown memory: records cite FILE#L<first>-L<last>, and arrive
    tainted external (quarantined until approved) unless --trust is given. Symbolic links
    leading out of the folder, binary files and files over 1 MiB are skipped and reported;
    a malformed file is reported and the other files still import. A folder
    holding none of the format's files is an error. A folder that is an agent-memory Home is
    skipped and reported, and agent-memory's own bind block and view footers are never read.
    When everything PATH names was skipped, nothing was taken in: exit status 1.
    The summary counts the records left quarantined (--json: "quarantined"); approve them
    with `agent-memory approve ID…`. Importing again with --trust does not lift the
    quarantine of records already present. See docs/importers.md.

    Verifies each file first (it must be signed; every record naming a signer must verify);
    adds only records whose id is new and reports the others as skipped. Records not
    vouched for by a trusted key (memory.toml [trust], and the Home's own key) arrive
    tainted "external". A file that fails writes nothing; the other files still import.

    Someone's existing data is kept: an item's control characters are replaced (U+0093, a
    mis-decoded Windows-1252 quote, becomes “), said per item ("cleaned") and tagged
    cleaned-text; only an item that cannot be taken in (a secret, a git conflict marker,
    foreign frontmatter, over 1 MiB) is refused, per item.

    The search indexes are brought up to date before the command ends (vectors embedded in
    batches, with a bar on a terminal), so the next recall does not embed the whole import.

    Exit status: 0 everything taken in (files left out on purpose are listed, no exception); 4
    done with exceptions (some items or files refused, or cleaned, each listed); 1 nothing was
    written (every input failed or was refused).
    """
    from agent_memory.errors import AgentMemoryError
    from agent_memory.records.memory_file import MemoryFile

    if fmt != "memory-file":
        _import_items(paths, fmt, limit, home, as_json, trust=trust, quiet=quiet)
        return
    if trust:
        raise click.UsageError(
            "--trust is for --from locomo, longmemeval, git, openclaw, claude-code, basic-memory or "
            "markdown; a MemoryFile is trusted by its signer (memory.toml [trust])"
        )
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    opened = open_home(home)
    results: list[dict[str, object]] = []
    failed = False
    with (
        progress("importing", quiet=quiet or as_json) as bar,
        Memory.open(resolve_home(home), source_kind="import") as memory,
    ):
        for number, path in enumerate(paths, start=1):
            bar.step(f"importing {path} ({number} of {len(paths)})")
            try:
                with open(path, "rb") as handle:
                    memory_file = MemoryFile.loads(handle.read(), path=path)
                report = memory.import_file(
                    memory_file,
                    verify=not no_verify,
                    trusted_signers=opened.settings.trusted_signers,
                    path=path,
                )
            except (AgentMemoryError, OSError) as exc:
                failed = True
                message = (
                    str(exc) if isinstance(exc, AgentMemoryError) else f"{path}: cannot read: {exc.strerror}"
                )
                results.append({"path": path, "error": message})
                if not as_json:
                    click.echo(f"FAIL {message}", err=True)
                continue
            _said(results, report, path, as_json)
        _index(memory, bar)
    if as_json:
        echo_json(results)
    written = any(result.get("added") or result.get("skipped") for result in results)
    refused = any(result.get("erasures_held_back") for result in results)
    raise click.exceptions.Exit(import_status(written=written, exceptions=failed or refused))


def _index(memory: Memory, bar: Progress) -> None:
    """Bring the indexes up to date with what was imported, now, in batches.

    A write leaves a vector index whose model is not loaded to the next query
    (``search/freshness.py``, "Deferred"): after an import that would make the first recall
    embed every record; here the import, already a long command, does it, counting on the bar
    (under the last file's label, which a quick import leaves on screen).
    """
    memory.catalog.refresh(progress=bar.update)


def _said(results: list[dict[str, object]], report: ImportReport, path: str, as_json: bool) -> None:
    """Add one file's report to ``results`` and, without --json, print its lines."""
    results.append(
        {
            "path": path,
            "added": report.added,
            "skipped": report.skipped,
            "tainted": report.tainted,
            "withdrawn": report.withdrawn,
            "controls_added": report.controls_added,
            "controls_refused": report.controls_refused,
            "superseded": report.superseded,
            "disputed": report.disputed,
            "held_back": report.held_back,
            "tombstones": report.tombstones,
            "erased": report.erased,
            "erased_here": report.erased_here,
            "erasures_held_back": report.erasures_held_back,
        }
    )
    if not as_json:
        click.echo(
            f"{path}: added {len(report.added)}, skipped {len(report.skipped)} already present, "
            f"{len(report.tainted)} tainted external"
            + (
                " (quarantined: review them with `agent-memory review`, approve with "
                "`agent-memory approve ID…`; memory.toml [trust] vouches for a signer)"
                if report.tainted
                else ""
            )
        )
        if report.controls_added or report.withdrawn:
            click.echo(
                f"{path}: {len(report.controls_added)} withdrawal controls applied, "
                f"{len(report.withdrawn)} added records withdrawn"
            )
        for control_id, why in report.controls_refused.items():
            click.echo(f"{path}: reinstatement {control_id} not applied: {why}", err=True)
        for new_id, held_id in [*report.superseded.items(), *report.disputed.items()]:
            done = "superseded" if new_id in report.superseded else "disputes (review it)"
            click.echo(f"{path}: state value {new_id} {done} {held_id}")
        for record_id, why in report.held_back.items():
            click.echo(f"{path}: state value {record_id} held back: {why}", err=True)
        for record_id, why in report.erasures_held_back.items():
            click.echo(f"{path}: erasure of {record_id} held back: {why}", err=True)
        if report.tombstones or report.erased or report.erased_here:
            click.echo(
                f"{path}: {len(report.tombstones)} erased records carried as tombstones, "
                f"{len(report.erased)} erased here as in the file, {len(report.erased_here)} "
                "erased here and not brought back"
            )


def _import_items(
    paths: tuple[str, ...],
    fmt: str,
    limit: int | None,
    home: str | None,
    as_json: bool,
    *,
    trust: bool,
    quiet: bool = False,
) -> None:
    from agent_memory.home import resolve_home
    from agent_memory.importers import import_path
    from agent_memory.memory import Memory

    open_home(home)  # the usual error and hint when there is no Home
    reports = []
    with (
        progress(f"importing {fmt}", quiet=quiet or as_json) as bar,
        Memory.open(resolve_home(home), source_kind="import") as memory,
    ):
        for number, path in enumerate(paths, start=1):
            bar.step(f"importing {fmt} {path} ({number} of {len(paths)})")
            reports.append(import_path(memory, fmt, path, limit=limit, trust=trust))
        _index(memory, bar)
    for report in reports:
        if as_json:
            continue
        if report.error is not None:
            click.echo(f"FAIL {report.error}", err=True)
            continue
        click.echo(f"{report.path}: {report.summary()}")
        for problem in report.errors:
            click.echo(f"  refused {problem}", err=True)
        for source, notes in report.cleaned.items():
            click.echo(f"  cleaned {source}: {'; '.join(notes)}", err=True)
        for problem in report.skipped:
            click.echo(f"  skipped {problem}", err=True)
    if as_json:
        echo_json([report.to_json() for report in reports])
    written = any(report.added or report.present for report in reports)
    # A named input whose every file was left out (a binary file given by name) took nothing in.
    exceptions = any(
        report.error is not None or report.partial or (report.skipped and not report.read)
        for report in reports
    )
    raise click.exceptions.Exit(import_status(written=written, exceptions=exceptions))


def import_status(*, written: bool, exceptions: bool) -> int:
    """Return the exit status of ``import``: 0 all taken in, 4 done with exceptions, 1 nothing written.

    Args:
        written: Something was taken in (added, or already held).
        exceptions: Something was refused, cleaned, left out or could not be read.
    """
    if not exceptions:
        return 0
    return EXIT_PARTIAL if written else EXIT_NOTHING
