"""How :class:`~agent_memory.memory.Memory` composes its services (issue 17 item 2).

:func:`delegate` makes a facade method that calls a service's method with its full
signature and docstring; :class:`Lazy` does so for a service whose module is imported on
first use (a command that never erases never imports the erasure code; issue 24 item 3);
:class:`Service` builds a service on first use, under the Writer's lock, and keeps it;
:class:`OnWriter` reads an attribute kept on the Writer (who acts), so a change reaches every
service.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

__all__ = ["Lazy", "OnWriter", "Service", "delegate"]

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


def delegate(method: Callable[Concatenate[Any, P], R], service: str) -> Callable[Concatenate[Any, P], R]:
    """Return a Memory method that calls ``method`` on the service ``getattr(memory, service)``.

    The method keeps ``method``'s signature (for type checkers, :func:`inspect.signature` and
    ``help``) and docstring: the verb is documented once, where it is implemented.
    """

    @functools.wraps(method)
    def call(memory: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(memory, service), *args, **kwargs)

    return call


class Lazy:
    """A Memory method delegated to a service whose module is imported on first use.

    ``target`` is ``"package.module:Class.method"``; the first access (``memory.erase``,
    ``help(Memory.erase)``) imports it and makes the :func:`delegate`, so a command that
    never erases never imports the erasure code (issue 24 item 3: CLI start-up).
    """

    def __init__(self, target: str, service: str) -> None:
        self._target, self._service = target, service
        self._method: Callable[..., Any] | None = None

    def __get__(self, memory: Any, owner: type | None = None) -> Any:
        if self._method is None:
            module, _, path = self._target.partition(":")
            cls_name, name = path.split(".")
            self._method = delegate(
                getattr(getattr(importlib.import_module(module), cls_name), name), self._service
            )
        return self._method if memory is None else self._method.__get__(memory, owner)


class Service(Generic[T]):
    """A Memory attribute built on first use, under the Writer's lock, then kept (one per Memory)."""

    def __init__(self, build: Callable[[Any], T]) -> None:
        self._build = build

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, memory: Any, owner: type | None = None) -> T:
        with memory.writer.lock:
            if self._name not in memory.__dict__:
                memory.__dict__[self._name] = self._build(memory)
            return memory.__dict__[self._name]  # type: ignore[no-any-return]


class OnWriter(Generic[T]):
    """A Memory attribute kept on its Writer (who acts), so a change reaches every service."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, memory: Any, owner: type | None = None) -> T:
        return getattr(memory.writer, self._name)  # type: ignore[no-any-return]

    def __set__(self, memory: Any, value: T) -> None:
        setattr(memory.writer, self._name, value)
