"""The module object: tuple results, keyword arguments, help, run-time
errors with source locations, size mismatches, opaque values, the cache,
compile errors."""

import inspect
import os
import pydoc

import numpy as np
import pytest

import nabla

PROGRAM = """\
type point = {x: f64, y: f64}
type shape = #circle f64 | #rect f64 f64

-- A dot product: both arrays must have the same length n.
entry dot [n] (xs: [n]f64) (ys: [n]f64) : f64 = f64.sum (map2 (*) xs ys)

entry sum_and_scale (xs: []f64) (k: f64) : (f64, []f64) =
  (f64.sum xs, map (* k) xs)

entry triple (n: i64) : (i64, []i32, bool) =
  (n * 3, map i32.i64 (iota n), n > 2)

entry at (xs: []f64) (i: i64) : f64 = xs[i]

entry checked_sqrt (x: f64) : f64 = assert (x >= 0) (f64.sqrt x)

entry make_point (x: f64) (y: f64) : point = {x, y}

entry norm (p: point) : f64 = f64.sqrt (p.x * p.x + p.y * p.y)

entry circle (r: f64) : shape = #circle r

entry rect (w: f64) (h: f64) : shape = #rect w h

entry area (s: shape) : f64 =
  match s
  case #circle r -> 3.0 * r * r
  case #rect w h -> w * h
"""


@pytest.fixture(scope="module")
def module(write_program):
    return nabla.compile(write_program("api.fut", PROGRAM))


def test_entry_points_are_attributes(module):
    names = set(module.entry_points)
    assert {"dot", "sum_and_scale", "triple", "at", "make_point", "area"} <= names
    assert module["dot"] is module.dot
    assert "dot" in dir(module)


def test_scalar_result(module):
    r = module.dot(np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]))
    assert isinstance(r, np.float64)
    assert r == 32.0


def test_tuple_results(module):
    total, scaled = module.sum_and_scale(np.array([1.0, 2.0, 4.0]), 0.5)
    assert total == 7.0
    np.testing.assert_array_equal(scaled, [0.5, 1.0, 2.0])
    n3, ramp, big = module.triple(4)
    assert n3 == 12 and n3.dtype == np.int64
    np.testing.assert_array_equal(ramp, np.arange(4, dtype=np.int32))
    assert ramp.dtype == np.int32
    assert big == np.True_


def test_keyword_arguments(module):
    assert module.dot(ys=[1.0, 1.0], xs=[2.0, 3.0]) == 5.0
    with pytest.raises(TypeError, match="dot"):
        module.dot([1.0])
    with pytest.raises(TypeError):
        module.dot([1.0], [1.0], [1.0])


def test_signature_and_help(module):
    sig = inspect.signature(module.dot)
    assert list(sig.parameters) == ["xs", "ys"]
    assert sig.parameters["xs"].annotation == "[]f64"
    assert sig.return_annotation == "f64"
    text = pydoc.render_doc(module.sum_and_scale, renderer=pydoc.plaintext)
    assert "sum_and_scale(xs: '[]f64', k: 'f64')" in text
    assert "xs: []f64" in module.sum_and_scale.__doc__
    assert "k: f64" in module.sum_and_scale.__doc__
    assert "a tuple of 2" in module.sum_and_scale.__doc__


def test_size_mismatch_is_a_value_error(module):
    with pytest.raises(ValueError, match=r"xs.*\(3,\).*ys.*\(4,\)") as info:
        module.dot(np.ones(3), np.ones(4))
    assert isinstance(info.value, nabla.Error)


def test_index_out_of_bounds_has_the_source_location(module):
    with pytest.raises(nabla.Error, match=r"api\.fut:\d+:\d+") as info:
        module.at(np.array([1.0, 2.0]), 5)
    assert isinstance(info.value, RuntimeError)
    assert "5" in str(info.value)
    # The module still works after an error.
    assert module.at(np.array([1.0, 2.0]), 1) == 2.0


def test_failed_assertion_has_the_source_location(module):
    with pytest.raises(nabla.Error, match=r"api\.fut:\d+:\d+"):
        module.checked_sqrt(-1.0)
    assert module.checked_sqrt(4.0) == 2.0


def test_record_is_opaque_and_can_be_passed_back(module):
    p = module.make_point(3.0, 4.0)
    assert isinstance(p, nabla.Opaque)
    assert module.norm(p) == 5.0
    assert module.norm(p) == 5.0  # not consumed
    assert sorted(p.fields) == ["x", "y"]
    assert p.field("x") == 3.0 and p.field("y") == 4.0


def test_sum_type_is_opaque_and_can_be_passed_back(module):
    c = module.circle(2.0)
    r = module.rect(2.0, 5.0)
    assert isinstance(c, nabla.Opaque) and isinstance(r, nabla.Opaque)
    assert module.area(c) == 12.0
    assert module.area(r) == 10.0


def test_opaque_type_is_checked(module):
    p = module.make_point(1.0, 2.0)
    with pytest.raises(TypeError, match=r"parameter s\b"):
        module.area(p)
    with pytest.raises(TypeError, match=r"parameter p\b"):
        module.norm(np.array([1.0, 2.0]))


def test_compile_from_source():
    m = nabla.compile(source="entry twice (x: []i64) : []i64 = map (* 2) x\n")
    np.testing.assert_array_equal(m.twice(np.arange(3)), [0, 2, 4])


def test_compile_error_is_reported():
    with pytest.raises(nabla.CompileError, match=r"\d+:\d+"):
        nabla.compile(source="entry f (x: i32) : f64 = x\n")


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        nabla.compile("/nonexistent/prog.fut")


def test_second_compile_uses_the_cache(write_program):
    path = write_program("cached.fut", "entry inc (x: i32) : i32 = x + 1\n")
    first = nabla.compile(path)
    stamp = os.stat(first.library).st_mtime_ns
    second = nabla.compile(path)
    assert second.library == first.library
    assert os.stat(second.library).st_mtime_ns == stamp
    assert second.inc(1) == 2
    assert str(first.library).startswith(os.environ["NABLA_CACHE_DIR"])


def test_cache_key_covers_imports_and_cflags(write_program, monkeypatch):
    write_program("lib/helper.fut", "def k : i32 = 10\n")
    main = write_program(
        "uses_import.fut", 'import "lib/helper"\nentry get (x: i32) : i32 = x + k\n'
    )
    a = nabla.compile(main)
    assert a.get(1) == 11
    write_program("lib/helper.fut", "def k : i32 = 20\n")
    b = nabla.compile(main)
    assert b.library != a.library
    assert b.get(1) == 21
    monkeypatch.setenv("CFLAGS", "-O1")
    c = nabla.compile(main)
    assert c.library != b.library
    assert c.get(1) == 21


def test_opaque_store_and_restore(module):
    p = module.make_point(3.0, 4.0)
    data = p.store()
    assert isinstance(data, bytes) and len(data) > 0
    q = module.restore(p.type_name, data)
    assert module.norm(q) == 5.0
    with pytest.raises(ValueError):
        module.restore(p.type_name, b"not a stored value")


def test_consuming_parameter_leaves_the_numpy_array_alone(write_program):
    m = nabla.compile(
        write_program(
            "consume.fut",
            "entry set_first (xs: *[]f64) (v: f64) : []f64 = xs with [0] = v\n",
        )
    )
    xs = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(m.set_first(xs, 9.0), [9.0, 2.0, 3.0])
    np.testing.assert_array_equal(xs, [1.0, 2.0, 3.0])
    assert "(consumed)" in m.set_first.__doc__


def test_compiler_lookup(monkeypatch):
    """$NABLA wins; without it, the binary installed with the package (or,
    when the tests run from the source tree, the one on PATH)."""
    original = os.environ.get("NABLA")
    if original:
        monkeypatch.setenv("PATH", os.path.dirname(original) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("NABLA", "/some/where/nabla")
    assert nabla.find_nabla() == "/some/where/nabla"
    monkeypatch.delenv("NABLA")
    found = nabla.find_nabla()
    assert os.path.basename(found) == "nabla" and os.access(found, os.X_OK)


def test_out_of_memory_is_a_memory_error():
    # A program of its own: the memory limit is its library's.
    m = nabla.compile(
        source="entry ones_oom (n: i64) : []f64 = replicate n 1", memory_limit=1 << 20
    )
    with pytest.raises(nabla.OutOfMemoryError, match=r"out of memory: 8000000 bytes") as info:
        m.ones_oom(1_000_000)
    assert isinstance(info.value, MemoryError) and isinstance(info.value, nabla.Error)
    # The module still works within its limit.
    assert m.ones_oom(1000).shape == (1000,)
