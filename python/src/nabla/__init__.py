"""Call compiled nabla programs from Python with NumPy arrays.

>>> import nabla, numpy as np
>>> m = nabla.compile(source="entry dot (x: []f64) (y: []f64) = f64.sum (map2 (*) x y)")
>>> m.dot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
np.float64(11.0)

:func:`compile` compiles a program with nabla's C backend (``nabla c
--library``; with ``backend="multicore"``, ``nabla multicore --library``,
whose parallel levels run on ``num_threads`` threads) and the system C
compiler into a shared library, cached by content hash under
:func:`cache_dir`, and returns a :class:`Module` whose attributes are the
program's entry points.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Union

from ._build import BACKENDS, build, cache_dir, check_backend, find_nabla, source_file
from ._errors import CompileError, Error, OutOfMemoryError, SizeError
from ._runtime import Context, Opaque, TypeTable, make_entry

__all__ = [
    "compile",
    "Module",
    "Opaque",
    "Error",
    "SizeError",
    "OutOfMemoryError",
    "CompileError",
    "cache_dir",
    "find_nabla",
    "BACKENDS",
]

try:
    from importlib.metadata import version as _version

    __version__ = _version("nabla")
except Exception:  # pragma: no cover - not installed (running from the tree)
    __version__ = "0+unknown"


class Module:
    """A compiled program. Each entry point is an attribute: a function
    taking NumPy arrays or Python scalars and returning NumPy arrays (or a
    tuple of them, or :class:`Opaque` values). ``entry_points`` maps the
    names to the functions; ``manifest`` is the compiler's JSON manifest;
    ``library`` is the path of the shared library; ``backend`` the backend
    that compiled it (``"c"`` or ``"multicore"``)."""

    def __init__(
        self,
        library: Union[str, Path],
        manifest: dict,
        origin: str = "a program",
        memory_limit: Optional[int] = None,
        num_threads: Optional[int] = None,
    ):
        self.library = Path(library)
        self.manifest = manifest
        self.backend: str = manifest.get("backend", "c")
        self._context = Context(str(self.library), memory_limit, num_threads)
        self._types = TypeTable(self._context, manifest.get("types", {}))
        self.entry_points: Dict[str, Callable[..., Any]] = {}
        for name, info in manifest.get("entry_points", {}).items():
            fn = make_entry(self._context, self._types, name, info, origin)
            self.entry_points[name] = fn
            if name.isidentifier() and not hasattr(type(self), name):
                setattr(self, name, fn)
        self._origin = origin

    def restore(self, type_name: str, data: bytes) -> Opaque:
        """The opaque value of type ``type_name`` that
        :meth:`Opaque.store` serialised to ``data``. Raises ValueError when
        the bytes are not a valid value of that type."""
        t = self._types.get(type_name)
        if not hasattr(t, "restore"):
            raise TypeError(f"{type_name} is not an opaque type of this program")
        return t.restore(data)

    def __getitem__(self, name: str) -> Callable[..., Any]:
        """The entry point ``name`` (also those whose names clash with
        attributes of this class)."""
        return self.entry_points[name]

    def __dir__(self):
        return list(super().__dir__()) + list(self.entry_points)

    def __repr__(self) -> str:
        names = ", ".join(self.entry_points)
        return f"<nabla.Module {self._origin}: {names}>"


def compile(
    path: Optional[Union[str, os.PathLike]] = None,
    *,
    source: Optional[str] = None,
    force: bool = False,
    memory_limit: Optional[int] = None,
    backend: str = "c",
    num_threads: Optional[int] = None,
) -> Module:
    """Compiles the program in the file ``path`` (with its imports), or the
    program text ``source``, and loads it.

    The library is cached under :func:`cache_dir` (``$NABLA_CACHE_DIR``,
    else ``~/.cache/nabla``) by the hash of the program text and its
    imports, the nabla compiler and ``CC``/``CFLAGS``, so compiling the same
    program again is instant; ``force=True`` rebuilds it. The compiler is
    found as :func:`find_nabla` says. Raises :class:`CompileError` (with the
    compiler's messages) when the program does not compile, and
    :class:`FileNotFoundError` when ``path`` does not exist.

    ``memory_limit`` (bytes) bounds what the program may allocate in all
    (0: no limit; default: three quarters of the physical memory, at most
    ``ulimit -v``; one limit per compiled program, set by the module of that
    program loaded last): an allocation past it raises
    :class:`OutOfMemoryError`.

    ``backend`` is ``"c"`` (sequential C, ``nabla c``) or ``"multicore"``
    (``nabla multicore``: the parallel levels ``nabla dump-ir --after=lower``
    shows run on several threads with OpenMP; the C compiler is ``$CC``,
    default ``gcc``). ``num_threads`` (multicore only; default: the number
    of cores, or ``OMP_NUM_THREADS``) is the number of threads, from 1 to
    the runtime's maximum (larger numbers are capped); as with
    ``memory_limit``, there is one setting per compiled program, set by the
    module of that program loaded last. Integer results are those of
    ``"c"``; floating-point reductions may round differently, as their
    partial results are combined per thread. Raises ValueError for an
    unknown backend, or ``num_threads`` below 1 or without multicore."""
    if (path is None) == (source is None):
        raise TypeError("nabla.compile takes a path or source=…, not both")
    check_backend(backend)
    if num_threads is not None:
        if backend != "multicore":
            raise ValueError("num_threads needs backend='multicore'")
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads must be a whole number from 1 on, not {num_threads!r}")
    if source is not None:
        file = source_file(source)
        origin = "a program given as source"
    else:
        file = Path(path)
        origin = str(path)
    built = build(file, force=force, backend=backend)
    return Module(built.library, built.manifest(), origin, memory_limit, num_threads)
