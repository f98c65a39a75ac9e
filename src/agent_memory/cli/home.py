"""``agent-memory init``: create a Home (DESIGN.md §3, §8)."""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, json_option, non_empty


@click.command()
@click.argument("path", required=False, type=click.Path(path_type=str), callback=non_empty)
@click.option("--home", "home", metavar="PATH", default=None, callback=non_empty, help="Same as PATH.")
@click.option(
    "--timezone", metavar="ZONE", default=None, help="IANA time zone for local days [default: system]."
)
@click.option(
    "--key-file", metavar="FILE", default=None, help="Where to keep the key pair [default: config folder]."
)
@click.option("--no-git", is_flag=True, help="Do not make the Home a git repository.")
@json_option
def init(
    path: str | None,
    home: str | None,
    timezone: str | None,
    key_file: str | None,
    no_git: bool,
    as_json: bool,
) -> None:
    """Create a Home at PATH (default: --home, $AGENT_MEMORY_HOME, else ./memory).

    Lays out memory.toml, MEMORY.md, conventions.md, inbox.md, notes/, archive/, log/,
    proposals/, topics/, golden.yaml and .cache/; creates the Home's key pair outside the
    folder (mode 0600; --key-file, else the config folder) and prints where; makes the
    folder a git repository with a first commit unless --no-git. Fails if the folder is
    already a Home or is not empty, or PATH is a file (exit 3; nothing is written), and an
    empty PATH is a usage error (it never means the default).
    """
    from agent_memory.errors import ConfigError
    from agent_memory.home import Home, resolve_home
    from agent_memory.records.signing import address_of

    root = resolve_home(path or home).expanduser()
    if root.exists() and not root.is_dir():
        raise ConfigError(
            "is a file, not a folder", path=str(root), hint="init a Home in a new or empty folder"
        )
    created = Home.init(root, timezone=timezone, key_file=key_file, git=not no_git)
    agent = address_of(created.identity())
    if as_json:
        echo_json(
            {
                "home": str(created.root),
                "agent": agent,
                "key_file": str(created.settings.key_file),
                "timezone": created.settings.timezone,
            }
        )
    else:
        click.echo(f"created Home {created.root}")
        click.echo(f"agent   {agent}")
        click.echo(f"key     {created.settings.key_file}")
        click.echo("        signs what this Home writes; kept outside the Home, never committed: back it up")


@click.command(name="init-key")
@click.option(
    "--home",
    "home",
    metavar="PATH",
    default=None,
    callback=non_empty,
    help="The Home [default: $AGENT_MEMORY_HOME, ./memory].",
)
def init_key(home: str | None) -> None:
    """Create a new key pair for a Home whose key file is lost (memory.toml [identity] key_file).

    Refuses when the key file exists. Records signed by the old key keep verifying by their
    signer's address; new records are signed by the new key. The change is logged.
    """
    from agent_memory.errors import ConfigError
    from agent_memory.home import Home, resolve_home
    from agent_memory.records.signing import address_of

    opened = Home.open(resolve_home(home))
    if opened.settings.key_file.exists():
        raise ConfigError("the key file exists; nothing to do", path=str(opened.settings.key_file))
    agent = address_of(opened.identity(create=True))
    opened.log().append("init", actor=opened.settings.owner, details={"agent": agent, "new_key": True})
    click.echo(f"new key {agent} at {opened.settings.key_file}")
