"""``nabla.compile(..., backend="multicore")``: the multicore backend's
libraries give the results of the sequential backend, run their parallel
levels on the threads asked for, and reject settings that make no sense."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nabla

PROGRAM = """\
entry sum_squares (xs: []f64) : f64 = f64.sum (map (\\x -> x * x) xs)

entry hash_all (xs: []i64) : []i64 = map (\\x -> (x * 2654435761) % 1000003) xs

entry int_sum (xs: []i64) : i64 = i64.sum (map (\\x -> x * x % 7) xs)

entry grad_cubes (xs: []f64) : []f64 =
  vjp (\\ys -> f64.sum (map (\\y -> y * y * y) ys)) xs 1.0
"""

#: Wider than every parallel level's threshold in PROGRAM (`nabla dump-ir
#: --after=lower` shows them: 16384 rows at most), so the levels run in
#: parallel when there are threads.
WIDE = 200_000


@pytest.fixture(scope="module")
def program(write_program):
    return write_program("multicore.fut", PROGRAM)


@pytest.fixture(scope="module")
def sequential(program):
    return nabla.compile(program)


@pytest.fixture(scope="module")
def parallel(program):
    return nabla.compile(program, backend="multicore", num_threads=2)


def test_backend_is_recorded(sequential, parallel):
    assert sequential.backend == "c"
    assert parallel.backend == "multicore"
    assert parallel.manifest["backend"] == "multicore"
    assert sequential.library != parallel.library


def test_results_match_the_sequential_backend(sequential, parallel):
    rng = np.random.default_rng(7)
    ints = rng.integers(-(10**6), 10**6, size=WIDE)
    floats = rng.standard_normal(WIDE)
    # Integer results are bit-identical.
    assert np.array_equal(parallel.hash_all(ints), sequential.hash_all(ints))
    assert parallel.int_sum(ints) == sequential.int_sum(ints)
    # Floating-point reductions may round differently per thread.
    assert parallel.sum_squares(floats) == pytest.approx(sequential.sum_squares(floats), rel=1e-12)
    grad = parallel.grad_cubes(floats)
    assert np.allclose(grad, 3 * floats**2, rtol=1e-14, atol=0)
    assert np.allclose(grad, sequential.grad_cubes(floats), rtol=1e-14, atol=0)


THREADS_SCRIPT = """\
import os, sys
import numpy as np
import nabla

def threads():
    return len(os.listdir("/proc/self/task"))

m = nabla.compile(sys.argv[1], backend="multicore", num_threads=int(sys.argv[2]))
xs = np.arange({wide}, dtype=np.int64)
before = threads()
total = m.int_sum(xs)
after = threads()
print(before, after, total)
"""


def run_threads_script(program, num_threads):
    """Runs an entry point with `num_threads` threads in a fresh process
    (OpenMP keeps its threads for the process's life) and returns the
    process's thread count before and after the call, and the result."""
    script = textwrap.dedent(THREADS_SCRIPT.format(wide=WIDE))
    out = subprocess.run(
        [sys.executable, "-c", script, str(program), str(num_threads)],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, OMP_NUM_THREADS="4"),
    ).stdout.split()
    return int(out[0]), int(out[1]), int(out[2])


def test_num_threads_sets_the_threads_that_run(program, sequential):
    expected = sequential.int_sum(np.arange(WIDE, dtype=np.int64))
    before, after, total = run_threads_script(program, 2)
    assert total == expected
    # Two threads: OpenMP starts one worker beside the calling thread
    # (not the 4 of OMP_NUM_THREADS).
    assert after - before == 1, (before, after)
    before, after, total = run_threads_script(program, 1)
    assert total == expected
    # One thread: the sequential code runs, and no thread starts.
    assert after == before, (before, after)


def test_unknown_backend_is_an_error(program):
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        nabla.compile(program, backend="gpu")


def test_num_threads_needs_multicore(program):
    with pytest.raises(ValueError, match="num_threads needs backend='multicore'"):
        nabla.compile(program, num_threads=2)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_num_threads_must_be_positive(program, bad):
    with pytest.raises(ValueError, match="num_threads must be a whole number"):
        nabla.compile(program, backend="multicore", num_threads=bad)


def test_a_compiler_without_openmp_is_named(program, tmp_path, monkeypatch):
    # A C compiler that fails as one without OpenMP's header does.
    fake = tmp_path / "cc-without-openmp"
    fake.write_text("#!/bin/sh\necho 'fatal error: omp.h: No such file or directory' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    with pytest.raises(nabla.CompileError, match="has no OpenMP .* set CC to a compiler with OpenMP"):
        nabla.compile(program, backend="multicore")
