"""A click group that imports a command's module only when that command runs (issue 8: lazy start-up).

``agent-memory --help`` lists every command with its short help, yet imports none of the
command modules: each command is registered as ``"package.module:function"`` with its short
help written beside it, and the module is imported the first time click asks for the
command itself (to run it, or to print its own ``--help``). This is click's documented
"lazy loading" pattern (a :class:`click.Group` whose ``commands`` resolve on demand), with
one addition: the group's help page is drawn from the registered short help, so listing the
commands costs no import at all.

Invariant: the registered short help of each command equals what click would derive from
the command's own docstring (``tests/cli/test_cli_docs.py`` checks every command), so the
help page reads the same as with eager registration.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping

import click

__all__ = ["LazyCommands", "LazyGroup"]


class LazyCommands(MutableMapping[str, click.Command]):
    """The commands of a group by name; a lazy entry is imported on first access.

    Args:
        lazy: ``name -> ("package.module:attribute", short help)``; the attribute must be a
            :class:`click.Command`. The short help is the first paragraph of the command's
            docstring (or its ``short_help``), as click would show it untruncated.

    Raises:
        TypeError: (on access) The attribute is not a click command.
        ImportError: (on access) The module cannot be imported.
    """

    def __init__(self, lazy: Mapping[str, tuple[str, str]]) -> None:
        self._lazy = dict(lazy)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._lazy:
            raise KeyError(name)
        target = self._lazy[name][0]
        module_name, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command (registered as {name!r})")
        self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._loaded.pop(name, None)
        self._lazy.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._lazy, *self._loaded}))

    def __len__(self) -> int:
        return len({*self._lazy, *self._loaded})

    def is_loaded(self, name: str) -> bool:
        """Return whether ``name`` has been imported (or was registered as a command object)."""
        return name in self._loaded

    def target(self, name: str) -> str | None:
        """Return the ``"module:attribute"`` a lazy command is registered as (``None`` if eager)."""
        entry = self._lazy.get(name)
        return entry[0] if entry else None

    def short_help(self, name: str, limit: int) -> str:
        """Return the command's short help cut to ``limit`` characters, importing nothing.

        A command already imported answers for itself; a lazy one from its registered text,
        cut the way click cuts a docstring (through a stand-in :class:`click.Command`).
        """
        if name in self._loaded or name not in self._lazy:
            return self[name].get_short_help_str(limit)
        return click.Command(name, help=self._lazy[name][1]).get_short_help_str(limit)


class LazyGroup(click.Group):
    """A :class:`click.Group` whose commands come from a :class:`LazyCommands` map.

    Args:
        lazy: ``name -> ("package.module:attribute", short help)``.
        **kwargs: Passed to :class:`click.Group`.
    """

    def __init__(self, *args: object, lazy: Mapping[str, tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commands: LazyCommands = LazyCommands(lazy)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Write the ``Commands:`` section from the registered short help (no command is imported)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if self.commands.is_loaded(name) and self.commands[name].hidden:
                continue
            rows.append((name, self.commands.short_help(name, limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
