"""``agent-memory verify``: check MemoryFiles, JSON records and note files (ids, invariants, signatures)."""

from __future__ import annotations

import json

import click


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of findings instead of lines.")
def verify(paths: tuple[str, ...], as_json: bool) -> None:
    """Check the files or folders PATHS and print one line per record.

    Each note file (*.md), JSON record and MemoryFile is parsed strictly; ids are recomputed
    from the birth content, the record invariants checked, and every signature present
    verified by its signer's address (a MemoryFile must be signed by its agent). Folders are
    walked for *.md and *.json files. Nothing is written or repaired.

    Lines read ``ok <record id> <path> (signed by <address> | unsigned)`` or
    ``FAIL <message>``. Exit status 0 when everything passed, 1 when anything failed.
    (Seed 001 verify; DESIGN.md §8.)
    """
    from agent_memory.records.verify import verify_paths

    findings = list(verify_paths(paths))
    if as_json:
        click.echo(json.dumps([f.to_json() for f in findings], ensure_ascii=False, indent=2))
    else:
        for finding in findings:
            if finding.ok:
                signer = f"signed by {finding.signed_by}" if finding.signed_by else "unsigned"
                label = finding.record_id or finding.what
                click.echo(f"ok   {label} {finding.path} ({signer})")
            else:
                click.echo(f"FAIL {finding.error}")
        failed = sum(not f.ok for f in findings)
        click.echo(f"{len(findings) - failed} ok, {failed} failed", err=True)
    if not findings or any(not f.ok for f in findings):
        raise click.exceptions.Exit(1)
