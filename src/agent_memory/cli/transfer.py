"""``agent-memory export`` and ``import``: MemoryFiles in and out of a Home (seed 001; DESIGN.md §8)."""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option, open_home


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
    from agent_memory.transfer import export_memory_file, write_bytes_atomic

    opened = open_home(home)
    store, log = opened.store(), opened.log()
    memory_file = export_memory_file(
        store, keys=opened.identity(), log=log, include_withdrawn=include_withdrawn
    )
    omitted = 0 if include_withdrawn else len(store.list()) - len(memory_file.records)
    try:
        write_bytes_atomic(path, memory_file.dumps())
    except OSError as exc:
        raise StoreError(f"cannot write the MemoryFile: {exc.strerror or exc}", path=path) from None
    details: dict[str, object] = {"path": path, "records": len(memory_file.records)}
    if omitted:
        details["withdrawn_omitted"] = omitted
    if include_withdrawn:
        details["include_withdrawn"] = True
    log.append("export", actor=opened.settings.owner, details=details)
    if as_json:
        echo_json({**details, "agent": memory_file.agent})
    else:
        click.echo(f"exported {len(memory_file.records)} records to {path} (signed by {memory_file.agent})")
        if omitted:
            click.echo(f"{omitted} withdrawn records left out (--include-withdrawn carries them)", err=True)


@click.command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "--from",
    "fmt",
    default="memory-file",
    type=click.Choice(["memory-file"]),
    show_default=True,
    help="The input format.",
)
@click.option(
    "--no-verify", is_flag=True, help="Skip signature checks (every record is then tainted external)."
)
@home_option
@json_option
def import_(paths: tuple[str, ...], fmt: str, no_verify: bool, home: str | None, as_json: bool) -> None:
    """Import the MemoryFiles PATHS into the Home.

    Verifies each file first (it must be signed; every record naming a signer must verify);
    adds only records whose id is new and reports the others as skipped. Records not
    vouched for by a trusted key (memory.toml [trust], and the Home's own key) arrive
    tainted "external". A file that fails writes nothing; the other files still import.
    Exit status 1 when any file failed.
    """
    from agent_memory.errors import AgentMemoryError
    from agent_memory.memory_file import MemoryFile
    from agent_memory.signing import address_of
    from agent_memory.transfer import import_memory_file

    opened = open_home(home)
    store, log = opened.store(), opened.log()
    trusted = {address_of(opened.identity()), *opened.settings.trusted_signers}
    results: list[dict[str, object]] = []
    failed = False
    for path in paths:
        try:
            with open(path, "rb") as handle:
                memory_file = MemoryFile.loads(handle.read(), path=path)
            report = import_memory_file(
                store,
                memory_file,
                verify=not no_verify,
                trusted_signers=trusted,
                path=path,
                log=log,
                actor=opened.settings.owner,
                secrets=opened.settings.secrets,
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
        log.append(
            "import",
            actor=opened.settings.owner,
            record_ids=tuple(report.added),
            details={
                "path": path,
                "format": fmt,
                "verified": report.verified,
                "skipped": report.skipped,
                "tainted": report.tainted,
                "digests": report.digests,
                "controls": report.controls_added,
                "controls_refused": report.controls_refused,
            },
        )
        results.append(
            {
                "path": path,
                "added": report.added,
                "skipped": report.skipped,
                "tainted": report.tainted,
                "withdrawn": report.withdrawn,
                "controls_added": report.controls_added,
                "controls_refused": report.controls_refused,
            }
        )
        if not as_json:
            click.echo(
                f"{path}: added {len(report.added)}, skipped {len(report.skipped)} already present, "
                f"{len(report.tainted)} tainted external"
            )
            if report.controls_added or report.withdrawn:
                click.echo(
                    f"{path}: {len(report.controls_added)} withdrawal controls applied, "
                    f"{len(report.withdrawn)} added records withdrawn"
                )
            for control_id, why in report.controls_refused.items():
                click.echo(f"{path}: reinstatement {control_id} not applied: {why}", err=True)
    if as_json:
        echo_json(results)
    if failed:
        raise click.exceptions.Exit(1)
