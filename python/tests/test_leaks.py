"""No memory leaks: 10^4 calls with array arguments and results, opaque
values and failing calls leave the resident set size (RSS) about where it
was. Each call moves about 240 KB, so a leak of any of its arrays would add
gigabytes."""

import gc

import numpy as np
import pytest

import nabla

PROGRAM = """\
type~ pair = {a: []f64, b: f64}
entry step (xs: []f64) (k: f64) : ([]f64, f64) = (map (* k) xs, f64.sum xs)
entry pack (xs: []f64) (b: f64) : pair = {a = xs, b}
entry unpack (p: pair) : []f64 = map (+ p.b) p.a
entry at (xs: []f64) (i: i64) : f64 = xs[i]
"""

CALLS = 10_000


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    import os

    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def test_no_leak_across_10k_calls(write_program):
    m = nabla.compile(write_program("leaks.fut", PROGRAM))
    xs = np.linspace(0.0, 1.0, 10_000)

    def one_round(i):
        ys, total = m.step(xs, 2.0)
        assert ys.shape == xs.shape
        p = m.pack(ys, total)
        zs = m.unpack(p)
        assert zs.shape == xs.shape
        if i % 10 == 0:
            with pytest.raises(nabla.Error):
                m.at(xs, len(xs))

    for i in range(200):  # warm up allocator pools and caches
        one_round(i)
    gc.collect()
    before = rss_bytes()
    for i in range(CALLS):
        one_round(i)
    gc.collect()
    growth = rss_bytes() - before
    assert growth < 32 * 2**20, f"RSS grew by {growth / 2**20:.1f} MiB over {CALLS} calls"
