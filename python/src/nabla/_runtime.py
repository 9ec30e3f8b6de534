"""The ctypes layer: loads a library written by ``nabla c --library`` and
wraps its entry points as Python functions, following its JSON manifest.

The C API is Futhark's (``futhark_context_*``, ``futhark_new_T_Rd``,
``futhark_values_T_Rd``, ``futhark_shape_T_Rd``, ``futhark_free_*``,
``futhark_entry_NAME(ctx, OUT…, IN…)``): one out-parameter per result,
scalars by value, arrays and opaque values as pointers. ``f16`` travels as
``uint16_t`` (the bits of a NumPy ``float16``) and ``bool`` as C ``bool``
(one byte, as NumPy stores it).
"""

from __future__ import annotations

import ctypes
import inspect
import keyword
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._errors import Error, OutOfMemoryError, SizeError

# name -> (NumPy dtype, ctypes type of a scalar in the C API)
PRIMITIVES: Dict[str, Tuple[np.dtype, Any]] = {
    "i8": (np.dtype(np.int8), ctypes.c_int8),
    "i16": (np.dtype(np.int16), ctypes.c_int16),
    "i32": (np.dtype(np.int32), ctypes.c_int32),
    "i64": (np.dtype(np.int64), ctypes.c_int64),
    "u8": (np.dtype(np.uint8), ctypes.c_uint8),
    "u16": (np.dtype(np.uint16), ctypes.c_uint16),
    "u32": (np.dtype(np.uint32), ctypes.c_uint32),
    "u64": (np.dtype(np.uint64), ctypes.c_uint64),
    "f16": (np.dtype(np.float16), ctypes.c_uint16),
    "f32": (np.dtype(np.float32), ctypes.c_float),
    "f64": (np.dtype(np.float64), ctypes.c_double),
    "bool": (np.dtype(np.bool_), ctypes.c_bool),
}

# Futhark's error codes (c-api): 0 success, 2 program error, 3 out of memory.
_PROGRAM_ERROR = 2
_OUT_OF_MEMORY = 3

# The generated C keeps per-process state during a call (the failure
# handler, the list of live blocks), so calls into any nabla library are
# serialised by one lock.
_CALL_LOCK = threading.RLock()

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


class Context:
    """A loaded library and one ``futhark_context`` for it. Arrays and
    opaque values made in the context keep it alive; it is freed when the
    last of them and the module are gone."""

    def __init__(
        self,
        library_path: str,
        memory_limit: Optional[int] = None,
        num_threads: Optional[int] = None,
    ):
        self.dll = ctypes.CDLL(library_path)
        self.lock = _CALL_LOCK
        dll = self.dll
        dll.futhark_context_config_new.restype = ctypes.c_void_p
        dll.futhark_context_config_new.argtypes = []
        dll.futhark_context_config_free.argtypes = [ctypes.c_void_p]
        dll.futhark_context_new.restype = ctypes.c_void_p
        dll.futhark_context_new.argtypes = [ctypes.c_void_p]
        dll.futhark_context_free.argtypes = [ctypes.c_void_p]
        dll.futhark_context_sync.restype = ctypes.c_int
        dll.futhark_context_sync.argtypes = [ctypes.c_void_p]
        dll.futhark_context_get_error.restype = ctypes.c_void_p
        dll.futhark_context_get_error.argtypes = [ctypes.c_void_p]
        self.cfg = dll.futhark_context_config_new()
        if not self.cfg:
            raise Error("futhark_context_config_new failed")
        if memory_limit is not None:
            # bytes > 0: the limit; 0: none; < 0: the default.
            setter = dll.futhark_context_config_set_memory_limit
            setter.restype = None
            setter.argtypes = [ctypes.c_void_p, ctypes.c_int64]
            setter(self.cfg, int(memory_limit))
        if num_threads is not None:
            setter = getattr(dll, "futhark_context_config_set_num_threads", None)
            if setter is None:
                dll.futhark_context_config_free(self.cfg)
                raise ValueError(
                    "num_threads needs a program compiled with backend='multicore'"
                )
            setter.restype = None
            setter.argtypes = [ctypes.c_void_p, ctypes.c_int]
            setter(self.cfg, int(num_threads))
        self.ctx = dll.futhark_context_new(self.cfg)
        if not self.ctx:
            dll.futhark_context_config_free(self.cfg)
            raise Error("futhark_context_new failed")
        message = self.take_error()
        self._finalizer = weakref.finalize(self, Context._release, dll, self.ctx, self.cfg)
        if message:
            self._finalizer()
            raise Error(f"cannot create the context: {message}")

    @staticmethod
    def _release(dll: ctypes.CDLL, ctx: int, cfg: int) -> None:
        dll.futhark_context_free(ctx)
        dll.futhark_context_config_free(cfg)

    def take_error(self) -> Optional[str]:
        """The context's pending error message (and clears it), or None."""
        p = self.dll.futhark_context_get_error(self.ctx)
        if not p:
            return None
        try:
            return ctypes.string_at(p).decode("utf-8", errors="replace")
        finally:
            _libc.free(p)

    def fail(self, code: int, what: str) -> Error:
        """The exception for a nonzero return code of ``what``."""
        message = self.take_error() or f"{what} failed with error code {code}"
        message = message.strip()
        if message.startswith("Error: "):
            message = message[len("Error: ") :]
        if code == _OUT_OF_MEMORY:
            if "memory" not in message:
                message = f"out of memory: {message}"
            return OutOfMemoryError(message)
        return Error(message)

    def function(self, name: str, restype: Any, argtypes: Sequence[Any]) -> Any:
        """The C function ``name`` with the given signature."""
        try:
            f = getattr(self.dll, name)
        except AttributeError:
            raise Error(f"the library has no function {name}") from None
        f.restype = restype
        f.argtypes = list(argtypes)
        return f


class Opaque:
    """A value of an opaque type of the program (a record, a tuple returned
    as one value, a sum type, …): it lives in the compiled program's memory
    and can only be passed back into entry points of the same module that
    take its type. ``type_name`` is the manifest's name of the type. When
    the type is a record, :meth:`field` reads a field (and ``fields`` lists
    their names)."""

    __slots__ = ("_type", "_ptr", "_finalizer", "__weakref__")

    def __init__(self, otype: "OpaqueType", ptr: int):
        self._type = otype
        self._ptr = ptr
        self._finalizer = weakref.finalize(self, otype.release, ptr)

    @property
    def type_name(self) -> str:
        return self._type.name

    @property
    def fields(self) -> List[str]:
        """The record's field names (empty when the type is not a record)."""
        return [f[0] for f in self._type.fields]

    def field(self, name: str) -> Any:
        """The record field ``name``, converted like an entry point's result."""
        return self._type.project(self, name)

    def store(self) -> bytes:
        """The value serialised to bytes (the program's store format); the
        module's :meth:`~nabla.Module.restore` turns them back into a value."""
        return self._type.store(self)

    def _pointer(self) -> int:
        if not self._finalizer.alive:
            raise ValueError(
                f"this {self._type.name} value was consumed by an entry point "
                "(a unique parameter) and cannot be used again"
            )
        return self._ptr

    def _consume(self) -> None:
        """The value was passed to a consuming parameter: free it (it must
        still be freed) and forbid further use."""
        self._finalizer()

    def __repr__(self) -> str:
        state = "" if self._finalizer.alive else " (consumed)"
        return f"<nabla.Opaque {self._type.name}{state}>"


# --- types -----------------------------------------------------------------


class ScalarType:
    """A primitive type as a parameter or result."""

    def __init__(self, name: str):
        self.name = name
        self.dtype, self.ctype = PRIMITIVES[name]
        self.argtype = self.ctype
        self.outtype = self.ctype
        self.rank = 0
        self.bounds = (
            (int(np.iinfo(self.dtype).min), int(np.iinfo(self.dtype).max))
            if self.dtype.kind in "iu"
            else None
        )
        self.is_float = self.dtype.kind == "f" and name != "f16"

    def to_c(self, ctx: Context, param: str, value: Any) -> Tuple[Any, Optional[Any]]:
        """The C argument for ``value``, and an object to free after the call
        (always None for scalars)."""
        return self.scalar_to_c(param, value), None

    def scalar_to_c(self, param: str, value: Any) -> Any:
        # Fast paths: a Python float for f32/f64, an int in range for an
        # integer type.
        vt = type(value)
        if vt is float and self.is_float:
            return value
        if vt is int and self.bounds is not None:
            if self.bounds[0] <= value <= self.bounds[1]:
                return value
        name, dtype = self.name, self.dtype
        if isinstance(value, np.ndarray):
            if value.ndim != 0:
                raise ValueError(
                    f"parameter {param}: expected a scalar of type {name}, "
                    f"got an array of rank {value.ndim}"
                )
            value = value[()]
        if isinstance(value, np.generic):
            if value.dtype != dtype:
                raise TypeError(f"parameter {param}: expected {name} ({dtype}), got {value.dtype}")
            if name == "f16":
                return int(value.view(np.uint16))
            return value.item()
        if isinstance(value, bool):
            if name != "bool":
                raise TypeError(f"parameter {param}: expected {name}, got a bool")
            return value
        if isinstance(value, int):
            if self.bounds is not None:
                if not self.bounds[0] <= value <= self.bounds[1]:
                    raise ValueError(f"parameter {param}: {value} does not fit in {name}")
                return value
            if dtype.kind == "f":
                value = float(value)
            else:
                raise TypeError(f"parameter {param}: expected {name}, got an int")
        if isinstance(value, float):
            if dtype.kind != "f":
                raise TypeError(f"parameter {param}: expected {name}, got a float")
            if name == "f16":
                return int(np.float16(value).view(np.uint16))
            return value
        raise TypeError(
            f"parameter {param}: expected a scalar of type {name}, got {type(value).__name__}"
        )

    def from_c(self, ctx: Context, out: Any) -> Any:
        v = out.value
        if self.name == "f16":
            return np.uint16(v).view(np.float16)
        return self.dtype.type(v)


class ArrayType:
    """An array of a primitive type (``[]f64``, ``[][]i32``, …)."""

    def __init__(self, ctx: Context, name: str, info: dict):
        self.name = name
        self.rank = int(info["rank"])
        self.elem = info["elemtype"]
        self.dtype, elem_ctype = PRIMITIVES[self.elem]
        ops = info["ops"]
        vp = ctypes.c_void_p
        self.argtype = vp
        self.outtype = vp
        self.new = ctx.function(ops["new"], vp, [vp, vp] + [ctypes.c_int64] * self.rank)
        self.free = ctx.function(ops["free"], ctypes.c_int, [vp, vp])
        self.shape = ctx.function(ops["shape"], ctypes.POINTER(ctypes.c_int64), [vp, vp])
        self.values = ctx.function(ops["values"], ctypes.c_int, [vp, vp, vp])

    def convert(self, param: str, value: Any) -> np.ndarray:
        """``value`` as a C-contiguous array of the element type (a copy only
        where needed). Raises TypeError for a wrong element type and
        ValueError for a wrong rank."""
        name, dtype = self.name, self.dtype
        if (
            type(value) is np.ndarray
            and value.dtype == dtype
            and value.ndim == self.rank
            and value.flags.c_contiguous
        ):
            return value
        if isinstance(value, np.ndarray):
            if value.dtype != dtype:
                raise TypeError(
                    f"parameter {param}: expected an array of {self.elem} "
                    f"({dtype}), got dtype {value.dtype}"
                )
            arr = value
        else:
            if isinstance(value, (Opaque, str, bytes)):
                raise TypeError(f"parameter {param}: expected {name}, got {type(value).__name__}")
            arr = np.asarray(value)
            if arr.dtype != dtype:
                kind = arr.dtype.kind
                ok = (
                    (dtype.kind == "f" and kind in "fiu")
                    or (dtype.kind in "iu" and kind in "iu")
                    or (dtype.kind == "b" and kind == "b")
                ) or arr.size == 0
                if not ok:
                    raise TypeError(
                        f"parameter {param}: expected an array of {self.elem}, "
                        f"got elements of type {arr.dtype}"
                    )
                if dtype.kind in "iu" and kind in "iu" and arr.size:
                    info = np.iinfo(dtype)
                    if arr.min() < info.min or arr.max() > info.max:
                        raise ValueError(f"parameter {param}: elements do not fit in {self.elem}")
                arr = arr.astype(dtype)
        if arr.ndim != self.rank:
            raise ValueError(
                f"parameter {param}: expected an array of rank {self.rank} "
                f"({name}), got rank {arr.ndim} (shape {arr.shape})"
            )
        return np.ascontiguousarray(arr)

    def to_c(self, ctx: Context, param: str, value: Any) -> Tuple[int, Optional[int]]:
        arr = self.convert(param, value)
        data = arr.view(np.uint16) if self.elem == "f16" else arr
        ptr = self.new(ctx.ctx, data.ctypes.data, *arr.shape)
        if not ptr:
            raise ctx.fail(_OUT_OF_MEMORY, f"creating the argument {param}")
        return ptr, ptr

    def release(self, ctx: Context, ptr: int) -> None:
        self.free(ctx.ctx, ptr)

    def from_c(self, ctx: Context, out: Any) -> np.ndarray:
        ptr = out.value
        try:
            shape_ptr = self.shape(ctx.ctx, ptr)
            shape = tuple(shape_ptr[i] for i in range(self.rank))
            result = np.empty(shape, dtype=self.dtype)
            target = result.view(np.uint16) if self.elem == "f16" else result
            code = self.values(ctx.ctx, ptr, target.ctypes.data)
            if code != 0:
                raise ctx.fail(code, "reading a result array")
            # `values` may be asynchronous: the caller syncs before the
            # result is handed out.
            return result
        finally:
            self.free(ctx.ctx, ptr)


class OpaqueType:
    """An opaque type of the program; values are :class:`Opaque` objects."""

    def __init__(self, module_types: "TypeTable", ctx: Context, name: str, info: dict):
        self.name = name
        self.ctx = ctx
        self.table = module_types
        vp = ctypes.c_void_p
        self.argtype = vp
        self.outtype = vp
        self.rank = None
        ops = info.get("ops", {})
        self._free = ctx.function(ops["free"], ctypes.c_int, [vp, vp])
        self._ops = ops
        self.fields: List[Tuple[str, str, str]] = []
        record = info.get("record")
        if record:
            for f in record.get("fields", []):
                self.fields.append((f["name"], f["type"], f["project"]))

    def release(self, ptr: int) -> None:
        # Runs from a finalizer: never raise.
        try:
            with self.ctx.lock:
                self._free(self.ctx.ctx, ptr)
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def to_c(self, ctx: Context, param: str, value: Any) -> Tuple[int, None]:
        if not isinstance(value, Opaque):
            raise TypeError(
                f"parameter {param}: expected a value of the opaque type {self.name} "
                f"(returned by an entry point), got {type(value).__name__}"
            )
        if value._type is not self:
            raise TypeError(
                f"parameter {param}: expected a value of the opaque type {self.name}, "
                f"got one of type {value._type.name}"
                + (" from another module" if value._type.name == self.name else "")
            )
        return value._pointer(), None

    def from_c(self, ctx: Context, out: Any) -> Opaque:
        return Opaque(self, out.value)

    def store(self, obj: Opaque) -> bytes:
        vp = ctypes.c_void_p
        if "store" not in self._ops:
            raise Error(f"the opaque type {self.name} cannot be stored")
        f = self.ctx.function(
            self._ops["store"],
            ctypes.c_int,
            [vp, vp, ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_size_t)],
        )
        data = vp(None)
        size = ctypes.c_size_t(0)
        with self.ctx.lock:
            code = f(self.ctx.ctx, obj._pointer(), ctypes.byref(data), ctypes.byref(size))
            if code != 0:
                raise self.ctx.fail(code, f"storing a {self.name}")
        try:
            return ctypes.string_at(data, size.value)
        finally:
            _libc.free(data)

    def restore(self, data: bytes) -> Opaque:
        if "restore" not in self._ops:
            raise Error(f"the opaque type {self.name} cannot be restored")
        vp = ctypes.c_void_p
        f = self.ctx.function(self._ops["restore"], vp, [vp, ctypes.c_char_p])
        with self.ctx.lock:
            ptr = f(self.ctx.ctx, bytes(data))
            if not ptr:
                message = self.ctx.take_error() or "invalid data"
                raise ValueError(f"cannot restore a {self.name}: {message.strip()}")
        return Opaque(self, ptr)

    def project(self, obj: Opaque, field: str) -> Any:
        for name, tname, fn in self.fields:
            if name == field:
                t = self.table.get(tname)
                vp = ctypes.c_void_p
                f = self.ctx.function(fn, ctypes.c_int, [vp, ctypes.POINTER(t.outtype), vp])
                out = t.outtype()
                with self.ctx.lock:
                    code = f(self.ctx.ctx, ctypes.byref(out), obj._pointer())
                    if code != 0:
                        raise self.ctx.fail(code, f"projecting field {field}")
                    # A projected array or opaque is a new reference, which
                    # from_c takes over (and frees).
                    result = t.from_c(self.ctx, out)
                    if isinstance(t, ArrayType):
                        code = self.ctx.dll.futhark_context_sync(self.ctx.ctx)
                        if code != 0:
                            raise self.ctx.fail(code, f"projecting field {field}")
                    return result
        if not self.fields:
            raise AttributeError(f"{self.name} is not a record type")
        raise AttributeError(
            f"{self.name} has no field {field} (fields: "
            + ", ".join(n for n, _, _ in self.fields)
            + ")"
        )


class TypeTable:
    """The manifest's types, made on first use."""

    def __init__(self, ctx: Context, types: dict):
        self.ctx = ctx
        self.info = types
        self.made: Dict[str, Any] = {}

    def get(self, name: str) -> Any:
        t = self.made.get(name)
        if t is not None:
            return t
        if name in PRIMITIVES:
            t = ScalarType(name)
        else:
            info = self.info.get(name)
            if info is None:
                raise Error(f"the manifest does not describe the type {name}")
            kind = info.get("kind")
            if kind == "array":
                t = ArrayType(self.ctx, name, info)
            else:
                t = OpaqueType(self, self.ctx, name, info)
        self.made[name] = t
        return t


# --- entry points ----------------------------------------------------------


def _python_names(names: Sequence[str]) -> List[str]:
    """Parameter names usable in a Python signature (unique identifiers)."""
    out: List[str] = []
    for i, n in enumerate(names):
        n = n or f"arg{i}"
        if not n.isidentifier() or keyword.iskeyword(n):
            n = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in n)
            if not n or not n.isidentifier() or keyword.iskeyword(n):
                n = f"arg{i}"
        while n in out:
            n = n + "_"
        out.append(n)
    return out


def _is_size_error(message: str) -> bool:
    m = message.lower()
    return "size" in m and ("argument" in m or "parameter" in m or "entry" in m)


def make_entry(
    ctx: Context, types: TypeTable, name: str, info: dict, origin: str
) -> Callable[..., Any]:
    """The Python function for entry point ``name`` (its manifest entry
    ``info``): converts the arguments, calls ``info["cfun"]``, converts the
    results (one value, or a tuple of them)."""
    inputs = info.get("inputs", [])
    outputs = info.get("outputs", [])
    in_types = [types.get(p["type"]) for p in inputs]
    out_types = [types.get(r["type"]) for r in outputs]
    consumed = [bool(p.get("unique", False)) for p in inputs]
    pnames = _python_names([p.get("name", "") for p in inputs])
    vp = ctypes.c_void_p
    cfun = ctx.function(
        info["cfun"],
        ctypes.c_int,
        [vp] + [ctypes.POINTER(t.outtype) for t in out_types] + [t.argtype for t in in_types],
    )
    n_in = len(in_types)
    single_scalar = len(out_types) == 1 and isinstance(out_types[0], ScalarType)
    has_arrays = any(isinstance(t, ArrayType) for t in out_types)
    sync = ctx.dll.futhark_context_sync

    params = [
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=p["type"])
        for n, p in zip(pnames, inputs)
    ]
    if len(outputs) == 1:
        ret = outputs[0]["type"]
    else:
        ret = "(" + ", ".join(r["type"] for r in outputs) + ")"
    signature = inspect.Signature(params, return_annotation=ret)

    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != n_in:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{name}(): {e}") from None
            args = tuple(bound.arguments[n] for n in pnames)
        c_args: List[Any] = [ctx.ctx]
        outs = [t.outtype() for t in out_types]
        c_args.extend(ctypes.byref(o) for o in outs)
        to_free: List[Tuple[Any, int]] = []
        with ctx.lock:
            try:
                for t, pname, value in zip(in_types, pnames, args):
                    arg, owned = t.to_c(ctx, pname, value)
                    c_args.append(arg)
                    if owned is not None:
                        to_free.append((t, owned))
                code = cfun(*c_args)
                if code == 0 and not has_arrays:
                    code = sync(ctx.ctx)
                if code != 0:
                    err = ctx.fail(code, f"entry point {name}")
                    if _is_size_error(str(err)):
                        shapes = ", ".join(
                            f"{n}: {np.shape(v)}"
                            for n, v, t in zip(pnames, args, in_types)
                            if isinstance(t, ArrayType)
                        )
                        first, _, rest = str(err).partition("\n")
                        raise SizeError(
                            f"{name}: {first} (argument shapes: {shapes})"
                            + (f"\n{rest}" if rest else "")
                        )
                    raise err
            finally:
                for t, ptr in to_free:
                    t.release(ctx, ptr)
            for value, used in zip(args, consumed):
                if used and isinstance(value, Opaque):
                    value._consume()
            if single_scalar:
                return out_types[0].from_c(ctx, outs[0])
            results = []
            done = 0
            try:
                for t, o in zip(out_types, outs):
                    results.append(t.from_c(ctx, o))
                    done += 1
            except BaseException:
                # Free the results not yet taken over by a Python object.
                for t, o in list(zip(out_types, outs))[done + 1 :]:
                    if isinstance(t, ArrayType):
                        t.release(ctx, o.value)
                    elif isinstance(t, OpaqueType):
                        t.release(o.value)
                raise
            if has_arrays:
                # One sync covers the entry point and every `values` read.
                code = sync(ctx.ctx)
                if code != 0:
                    raise ctx.fail(code, f"entry point {name}")
        if len(results) == 1:
            return results[0]
        return tuple(results)

    call.__name__ = name
    call.__qualname__ = name
    call.__module__ = "nabla"
    call.__signature__ = signature  # type: ignore[attr-defined]
    lines = [f"Entry point `{name}` of {origin}, compiled with nabla's C backend."]
    lines.append("")
    if inputs:
        lines.append("Parameters:")
        for n, p, c in zip(pnames, inputs, consumed):
            lines.append(f"  {n}: {_describe(p['type'])}{' (consumed)' if c else ''}")
    lines.append("Returns:")
    if len(outputs) == 1:
        lines.append(f"  {_describe(outputs[0]['type'])}")
    else:
        lines.append(f"  a tuple of {len(outputs)}:")
        for r in outputs:
            lines.append(f"    {_describe(r['type'])}")
    lines.append("")
    lines.append("Arrays are NumPy arrays of the element type (f16: float16, bool: bool_);")
    lines.append("run-time errors raise nabla.Error with the source location.")
    call.__doc__ = "\n".join(lines)
    return call


def _describe(tname: str) -> str:
    """A type and its NumPy meaning, for docstrings."""
    rank = 0
    elem = tname
    while elem.startswith("[]"):
        rank += 1
        elem = elem[2:]
    if elem in PRIMITIVES:
        dtype = PRIMITIVES[elem][0]
        if rank == 0:
            return f"{tname} (a scalar, numpy.{dtype.name})"
        return f"{tname} (a rank-{rank} numpy array of {dtype.name})"
    return f"{tname} (an opaque value, nabla.Opaque)"
