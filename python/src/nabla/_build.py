"""Compiling a nabla program into a shared library, with a content-hash cache.

A program is compiled in two steps: ``nabla c --library PROG -o OUT`` (or
``nabla multicore --library`` for the multicore backend) writes ``OUT.c``,
``OUT.h`` and the manifest ``OUT.json`` (Futhark's C API), and the system C
compiler turns ``OUT.c`` into ``OUT.so`` (with ``-fopenmp`` for multicore).
Both steps are skipped when the cache already holds a library for the same
key: the backend, the text of the program and of every file it imports, the
nabla compiler (its version and the size and modification time of its
binary), the C compiler command and the C flags.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ._errors import CompileError

#: Bumped when the layout of a cache entry changes.
CACHE_FORMAT = "1"

#: The C flags used when ``CFLAGS`` is not set (the same as ``nabla c``).
DEFAULT_CFLAGS = "-O3 -march=native -fno-math-errno -fno-trapping-math -ffp-contract=fast"

#: The backends :func:`build` knows: sequential C (``nabla c``) and
#: multicore C (``nabla multicore``, OpenMP).
BACKENDS = ("c", "multicore")

_IMPORT = re.compile(r'\bimport\s+"([^"]+)"')


def cache_dir() -> Path:
    """The cache directory: ``$NABLA_CACHE_DIR``, else ``~/.cache/nabla``."""
    env = os.environ.get("NABLA_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "nabla"


def find_nabla() -> str:
    """The ``nabla`` binary: ``$NABLA``, else the one installed with this
    package (the scripts directory of the running interpreter), else the one
    on ``PATH``. Raises :class:`CompileError` when there is none."""
    env = os.environ.get("NABLA")
    if env:
        return env
    exe = "nabla.exe" if os.name == "nt" else "nabla"
    candidates = [
        Path(sysconfig.get_path("scripts")) / exe,
        Path(sys.executable).parent / exe,
    ]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("nabla")
    if found:
        return found
    raise CompileError(
        "cannot find the nabla compiler: set NABLA to its path, or install "
        "this package with `pip install ./python` (which installs it)"
    )


def _strip_comments(text: str) -> str:
    """The text without ``--`` line comments (so that commented-out imports
    are not followed). String literals containing ``--`` are rare enough in
    import lines to ignore."""
    return "\n".join(line.split("--", 1)[0] for line in text.splitlines())


def _imported_files(main: Path) -> List[Path]:
    """``main`` and every file it imports, transitively (imports are
    resolved relative to the importing file, with ``.fut`` appended). Files
    that do not exist are left out: the compiler reports them."""
    seen: List[Path] = []
    todo = [main.resolve()]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        text = path.read_text(encoding="utf-8", errors="replace")
        for name in _IMPORT.findall(_strip_comments(text)):
            target = (path.parent / (name + ".fut")).resolve()
            todo.append(target)
    return seen


def _cc_command(backend: str = "c") -> Tuple[List[str], List[str]]:
    """The C compiler (``$CC``; default ``cc``, or ``gcc`` for multicore C,
    as ``nabla multicore`` chooses, since it ships OpenMP) and the flags
    (``$CFLAGS``, default :data:`DEFAULT_CFLAGS`, then ``-fopenmp`` for
    multicore C), split like a shell would."""
    default_cc = "gcc" if backend == "multicore" else "cc"
    cc = shlex.split(os.environ.get("CC") or default_cc)
    cflags = shlex.split(os.environ.get("CFLAGS", DEFAULT_CFLAGS))
    if backend == "multicore":
        cflags = cflags + ["-fopenmp"]
    return cc, cflags


def check_backend(backend: str) -> str:
    """``backend`` when it is one of :data:`BACKENDS`; else ValueError."""
    if backend not in BACKENDS:
        known = ", ".join(repr(b) for b in BACKENDS)
        raise ValueError(f"unknown backend {backend!r}: nabla compiles with {known}")
    return backend


_IDENTITIES: Dict[Tuple[str, str], str] = {}


def _nabla_identity(nabla: str) -> str:
    """What identifies the compiler: its ``--version`` output and the size
    and modification time of its binary (so a rebuilt compiler of the same
    version does not reuse old libraries). Remembered per binary and stamp
    within the process."""
    resolved = shutil.which(nabla) or nabla
    try:
        st = os.stat(resolved)
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        stamp = "?"
    known = _IDENTITIES.get((resolved, stamp))
    if known is not None and stamp != "?":
        return known
    try:
        version = subprocess.run(
            [nabla, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError as e:
        raise CompileError(f"cannot run the nabla compiler {nabla}: {e}") from None
    identity = f"{version}|{stamp}"
    _IDENTITIES[(resolved, stamp)] = identity
    return identity


def cache_key(main: Path, nabla: str, backend: str = "c") -> str:
    """The SHA-256 (hex) of everything the compiled library depends on."""
    h = hashlib.sha256()
    h.update(f"nabla-python-cache {CACHE_FORMAT}\n".encode())
    if backend != "c":
        # Libraries of `nabla c` keep the keys they had before backends.
        h.update(f"backend {backend}\n".encode())
    h.update(_nabla_identity(nabla).encode() + b"\n")
    cc, cflags = _cc_command(backend)
    h.update(json.dumps([cc, cflags]).encode() + b"\n")
    main = main.resolve()
    for path in _imported_files(main):
        rel = os.path.relpath(path, main.parent)
        data = path.read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


class Built:
    """A compiled program in the cache: the shared library and its manifest."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.library = directory / "prog.so"
        self.manifest_path = directory / "prog.json"

    def manifest(self) -> dict:
        with open(self.manifest_path, encoding="utf-8") as f:
            return json.load(f)


def _run(cmd: List[str], what: str) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise CompileError(f"cannot run {cmd[0]} ({what}): {e}") from None
    if proc.returncode != 0:
        output = (proc.stderr + proc.stdout).strip()
        raise CompileError(f"{what} failed:\n{output}")


def build(main: Path, *, force: bool = False, backend: str = "c") -> Built:
    """Compiles ``main`` (with its imports) with ``backend`` (one of
    :data:`BACKENDS`) unless the cache has it.

    Raises :class:`CompileError` with the compiler's messages when the
    program does not compile or the C compiler fails (for multicore C, one
    that says so when the C compiler has no OpenMP), and ValueError for an
    unknown backend."""
    check_backend(backend)
    nabla = find_nabla()
    main = Path(main)
    if not main.is_file():
        raise FileNotFoundError(f"no such program: {main}")
    key = cache_key(main, nabla, backend)
    root = cache_dir()
    final = root / key
    done = Built(final)
    if not force and done.library.is_file() and done.manifest_path.is_file():
        return done
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=root))
    try:
        out = work / "prog"
        what = f"nabla {backend} --library"
        _run([nabla, backend, "--library", str(main), "-o", str(out)], what)
        for ext in (".c", ".json"):
            if not out.with_suffix(ext).is_file():
                raise CompileError(f"{what} did not write {out.with_suffix(ext).name}")
        cc, cflags = _cc_command(backend)
        try:
            _run(
                cc
                + ["-shared", "-fPIC"]
                + cflags
                + [str(out.with_suffix(".c")), "-o", str(out.with_suffix(".so")), "-lm"],
                "the C compiler",
            )
        except CompileError as e:
            if backend == "multicore" and ("omp.h" in str(e) or "fopenmp" in str(e)):
                raise CompileError(
                    f"the C compiler `{shlex.join(cc)}` has no OpenMP (`-fopenmp` and "
                    "omp.h), which multicore C needs: set CC to a compiler with "
                    f"OpenMP, such as gcc\n{e}"
                ) from None
            raise
        if force and final.exists():
            shutil.rmtree(final, ignore_errors=True)
        try:
            os.replace(work, final)
        except OSError:
            # Another process finished the same key first: use theirs.
            if not (done.library.is_file() and done.manifest_path.is_file()):
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return done


def source_file(source: str, name: Optional[str] = None) -> Path:
    """Writes program text given as a string into the cache (named by its
    hash, so the same text gives the same file) and returns its path."""
    digest = hashlib.sha256(source.encode()).hexdigest()
    d = cache_dir() / "sources"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name or 'source'}-{digest[:24]}.fut"
    if not path.is_file() or path.read_text(encoding="utf-8") != source:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(source, encoding="utf-8")
        os.replace(tmp, path)
    return path
