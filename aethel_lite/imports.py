"""Importing a heavy third-party package without the optional parts a command does not use.

Some packages import large optional dependencies at import time only to offer features this package
never calls: bm25s imports numba for a backend we do not select (we score with its numpy backend),
thinc (under spaCy) imports PyTorch only to look for GPUs, and spaCy imports its command line
(``spacy.cli``: typer, rich, jinja2, weasel, httpx) to re-export ``spacy.info``. For a one-question
``aethel search`` these imports are most of the start-up. :func:`import_without` imports a package
while such modules are hidden, and restores them afterwards, so a later import gets the real module.
The results cannot change: the hidden parts do no arithmetic on our path (the tests compare with an
ordinary import in a fresh process).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterable
from types import ModuleType

__all__ = ["import_without", "lazy_names"]


def _stub(name: str, attributes: Iterable[str]) -> ModuleType:
    """A placeholder module whose ``attributes`` import the real module when called."""
    module = types.ModuleType(name, f"placeholder for {name}, imported on first use")
    module.__path__ = []  # a package: its submodules can be stubbed too

    def forward(attribute):
        def call(*args, **kwargs):  # the placeholder left sys.modules when the import ended
            return getattr(importlib.import_module(name), attribute)(*args, **kwargs)

        return call

    for attribute in attributes:
        setattr(module, attribute, forward(attribute))
    return module


def import_without(name: str, absent: Iterable[str] = (), stubs: dict[str, Iterable[str]] | None = None):
    """Import module ``name`` while the modules ``absent`` look uninstalled and those of ``stubs``
    are placeholders; return it.

    Parameters
    ----------
    name : str
        The package to import. If it is already imported it is returned as it is.
    absent : iterable of str
        Modules that ``name`` imports inside ``try: ... except ImportError`` (an optional
        dependency): for the duration of the import, ``import`` of them raises ImportError. Skipped
        for a module that is already imported (it is then used as usual).
    stubs : dict of str to iterable of str
        Modules that ``name`` imports unconditionally but whose contents it only re-exports: each
        is replaced by a placeholder whose listed attributes import the real module when called.

    Afterwards ``absent`` modules are importable again and the placeholders are removed from
    ``sys.modules`` (a later ``import`` of one loads the real module).
    """
    if name in sys.modules:
        return sys.modules[name]
    hidden = [m for m in absent if m not in sys.modules]
    placed = {}
    for module, attributes in (stubs or {}).items():
        if module not in sys.modules:
            placed[module] = sys.modules[module] = _stub(module, attributes)
    for m in hidden:
        sys.modules[m] = None  # type: ignore[assignment]  # `import m` raises ImportError
    try:
        return importlib.import_module(name)
    finally:
        for m in hidden:
            if m in sys.modules and sys.modules[m] is None:
                del sys.modules[m]
        for module, stub in placed.items():
            if sys.modules.get(module) is stub:
                del sys.modules[module]


def lazy_names(package: str, names: dict[str, str]):
    """``(__getattr__, __dir__)`` for a package whose public ``names`` (name → submodule, relative) are imported on
    first use (PEP 562): importing the package, or one of its modules, loads none of the others."""
    namespace = sys.modules[package].__dict__

    def getattr_(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value  # later look-ups skip __getattr__
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(names))

    return getattr_, dir_
