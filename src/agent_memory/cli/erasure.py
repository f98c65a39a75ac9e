"""Commands ``erase`` (authorized erasure, seed 000 §12.3) and ``forget`` (the §12.1 router).

``erase`` is the one destructive command: it asks for confirmation unless ``--yes`` is
given, acts as the Home's owner (who must hold the ``erase`` grant: the owner holds every
grant) and prints the ``erasure-tombstone-v1`` receipt, one holder a line. ``forget``
never erases: it withdraws (reversibly) and prints the five-line surface receipt.
"""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option, quiet_option, scope_options
from agent_memory.cli.progress import progress

__all__ = ["erase", "forget"]


@click.command()
@click.argument("record_ids", nargs=-1, required=True, metavar="ID…")
@click.option(
    "--reason", required=True, help="Why (kept in the tombstones and receipt; never quote the content)."
)
@click.option("--authority", required=True, metavar="WHO", help="Who or what authorized it (person, ticket).")
@click.option(
    "--cascade", "cascade", multiple=True, metavar="ID", help="A dependent record to erase as well; repeat."
)
@click.option(
    "--rewrite-git",
    is_flag=True,
    help="Also rewrite the Home's git history (every branch, tag and stash) so no commit keeps the text.",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@home_option
@json_option
@quiet_option
def erase(
    record_ids: tuple[str, ...],
    reason: str,
    authority: str,
    cascade: tuple[str, ...],
    rewrite_git: bool,
    yes: bool,
    home: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Erase records irreversibly from every holder and print the receipt (seed 000 §12.3).

    Every version becomes the tombstone; indexes, caches, views and exports in the Home are
    purged; records that quote or point at the erased ones are listed (erased too only when
    named with --cascade). git history is rewritten only with --rewrite-git (clones and
    remotes are out of reach: reported unevaluated); without it, it is reported
    partially-completed while its objects still hold the text. Exit status 3 when refused
    (no erase grant, unknown id, already erased); nothing is written then. An unknown or
    already erased ID is refused before the confirmation is asked.
    """
    from agent_memory.errors import LifecycleError
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    with Memory.open(resolve_home(home), source_kind="cli") as memory:
        if not yes:
            # Refuse what erase would refuse anyway before asking: a confirmation of an id
            # that does not exist reads as if there were something to erase.
            for record_id in dict.fromkeys([*record_ids, *cascade]):
                if memory.store.history(record_id)[-1].redacted:  # RecordNotFound: unknown id
                    raise LifecycleError("already erased", record_id=record_id)
            click.confirm(
                f"Erase {len(record_ids) + len(cascade)} record(s) irreversibly? This cannot be undone",
                abort=True,
            )
        with progress("erasing: tombstones, indexes, views, exports", quiet=quiet or as_json):
            receipt = memory.erase(
                record_ids, reason=reason, authority=authority, cascade=cascade, rewrite_git=rewrite_git
            )
    if as_json:
        echo_json(receipt.to_wire())
        return
    click.echo(f"{receipt.erasure_id}: {', '.join(receipt.scope_refs)}")
    for holder in receipt.holders:
        limitation = f" ({holder.limitation_ref})" if holder.limitation_ref else ""
        click.echo(f"  {holder.holder_ref}: {holder.result}{limitation}")


@click.command()
@scope_options
@click.option("--reason", default="forget-request", show_default=True, help="Why; not a verdict on truth.")
@home_option
@json_option
def forget(
    records: tuple[str, ...],
    archive_refs: tuple[str, ...],
    sources: tuple[str, ...],
    namespaces: tuple[str, ...],
    reason: str,
    home: str | None,
    as_json: bool,
) -> None:
    """Route a "forget" request (seed 000 §12.1): withdraw the scope and print the surface receipt.

    Never erases (use ``erase``): the Memory line names the withdrawal, which
    ``reinstate`` can lift. The other four lines say what this command could not do.
    """
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    with Memory.open(resolve_home(home), source_kind="cli") as memory:
        receipt = memory.withdrawals.forget(
            memory_item_ids=records,
            archive_refs=archive_refs,
            source_or_run_refs=sources,
            namespaces=namespaces,
            reason=reason,
        )
    if as_json:
        echo_json(receipt.to_json())
    else:
        click.echo(receipt.render(), nl=False)
