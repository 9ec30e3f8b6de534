"""Times the GMM gradient (GradBench's gmm `jacobian`) from Python: nabla's
compiled `gradbench/gmm.fut` against `jax.grad` of the same objective
written in JAX (jit-compiled, float64, `block_until_ready`). Both results
are checked against the stored reference output first.

    python examples/python/gmm_vs_jax.py [testdata/gradbench/gmm/jacobian-20_25_1000.json] [--runs 20]

Needs JAX (`pip install jax`); it is a measurement, not a test.
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

import nabla

REPO = Path(__file__).resolve().parents[2]


def jax_objective():
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import gammaln, logsumexp

    def objective(alpha, mu, q, l, x, gamma, m):
        n, d = x.shape
        k = alpha.shape[0]
        # L_k strictly lower triangular, filled column by column from l_k.
        rows, cols = [], []
        for i in range(d):
            for j in range(i + 1, d):
                rows.append(j)
                cols.append(i)
        lower = jnp.zeros((k, d, d)).at[:, jnp.array(rows), jnp.array(cols)].set(l)
        qmat = lower + jax.vmap(jnp.diag)(jnp.exp(q))
        diff = x[:, None, :] - mu[None, :, :]
        z = jnp.einsum("kji,nki->nkj", qmat, diff)
        main = alpha[None, :] + jnp.sum(q, axis=1)[None, :] - 0.5 * jnp.sum(z * z, axis=2)
        constant = -(n * d * 0.5 * jnp.log(2.0 * jnp.pi))
        n_w = d + m + 1
        log_gamma_distrib = 0.25 * d * (d - 1) * jnp.log(jnp.pi) + jnp.sum(
            gammaln(0.5 * n_w - 0.5 * jnp.arange(d))
        )
        c = n_w * d * (jnp.log(gamma) - 0.5 * jnp.log(2.0)) - log_gamma_distrib
        prior = (
            jnp.sum(
                -0.5 * gamma * gamma * (jnp.sum(jnp.exp(q) ** 2, axis=1) + jnp.sum(l * l, axis=1))
                + m * jnp.sum(q, axis=1)
            )
            + k * c
        )
        return constant + jnp.sum(logsumexp(main, axis=1)) - n * logsumexp(alpha) + prior

    return objective


def relative_errors(actual, expected):
    a, e = np.asarray(actual), np.asarray(expected)
    return np.max(np.abs(a - e) / np.maximum(1.0, np.abs(a) + np.abs(e)))


def timed(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "data", nargs="?", default=str(REPO / "testdata/gradbench/gmm/jacobian-20_25_1000.json")
    )
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    pair = json.loads(Path(args.data).read_text())
    inp, ref = pair["input"], pair["output"]
    x = np.array(inp["x"], dtype=np.float64)
    gamma, m = float(inp["gamma"]), int(inp["m"])
    alpha, mu, q, l = (np.array(inp[k], dtype=np.float64) for k in ("alpha", "mu", "q", "l"))
    print(f"{Path(args.data).name}: n={x.shape[0]} d={x.shape[1]} k={alpha.shape[0]}")

    t0 = time.perf_counter()
    gmm = nabla.compile(REPO / "gradbench/gmm.fut")
    print(f"nabla.compile: {time.perf_counter() - t0:.3f} s")
    ours = gmm.jacobian(x, gamma, m, alpha, mu, q, l)
    for name, got in zip(["alpha", "mu", "q", "l"], ours):
        assert relative_errors(got, ref[name]) <= 1e-4, name
    best, median = timed(lambda: gmm.jacobian(x, gamma, m, alpha, mu, q, l), args.runs)
    print(
        f"nabla  jacobian: min {best * 1e3:.2f} ms, median {median * 1e3:.2f} ms ({args.runs} runs)"
    )

    import jax

    jax.config.update("jax_enable_x64", True)
    grad = jax.jit(jax.grad(jax_objective(), argnums=(0, 1, 2, 3)), static_argnums=(6,))
    args_j = tuple(jax.numpy.asarray(a) for a in (alpha, mu, q, l, x)) + (gamma,)
    t0 = time.perf_counter()
    theirs = jax.block_until_ready(grad(*args_j, m))
    print(f"jax.jit(jax.grad) first call (tracing + compiling): {time.perf_counter() - t0:.3f} s")
    for name, got in zip(["alpha", "mu", "q", "l"], theirs):
        assert relative_errors(got, ref[name]) <= 1e-4, name
    best, median = timed(lambda: jax.block_until_ready(grad(*args_j, m)), args.runs)
    print(
        f"jax    jacobian: min {best * 1e3:.2f} ms, median {median * 1e3:.2f} ms ({args.runs} runs)"
    )


if __name__ == "__main__":
    main()
