"""Fits a small neural network (one hidden layer of tanh units) to a noisy
sine curve by gradient descent. The loss and its gradient come from
model.fut, compiled with nabla; the loss curve is plotted to a PNG.

When JAX is installed, the gradient at the starting point is checked against
``jax.grad`` of the same model written in JAX; otherwise that check is
skipped with a message.

    pip install ./python matplotlib
    python examples/python/fit.py [--steps 2000] [--out loss.png]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import nabla

HERE = Path(__file__).resolve().parent


def check_against_jax(params, xs, ys, grads) -> None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("JAX is not installed: skipping the gradient check against jax.grad")
        return
    jax.config.update("jax_enable_x64", True)

    def loss(p):
        w1, b1, w2, b2 = p
        pred = jnp.tanh(jnp.outer(xs, w1) + b1) @ w2 + b2
        return jnp.mean((pred - ys) ** 2)

    expected = jax.grad(loss)(tuple(jnp.asarray(p) for p in params))
    for name, ours, theirs in zip(["w1", "b1", "w2", "b2"], grads, expected):
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-9, atol=1e-12, err_msg=name)
    print("gradient agrees with jax.grad")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--rate", type=float, default=0.1)
    ap.add_argument("--out", default="loss.png", help="where to write the loss curve")
    args = ap.parse_args(argv)

    model = nabla.compile(HERE / "model.fut")
    rng = np.random.default_rng(0)
    xs = np.linspace(-3.0, 3.0, 200)
    ys = np.sin(xs) + 0.05 * rng.standard_normal(xs.shape)
    h = args.hidden
    params = [rng.standard_normal(h), rng.standard_normal(h), 0.1 * rng.standard_normal(h), 0.0]

    first_loss, *grads = model.loss_and_grad(*params, xs, ys)
    check_against_jax(params, xs, ys, grads)

    losses = []
    for _ in range(args.steps):
        loss, *grads = model.loss_and_grad(*params, xs, ys)
        losses.append(float(loss))
        params = [p - args.rate * g for p, g in zip(params, grads)]
        params[3] = float(params[3])
    final = float(model.mse(*params, xs, ys))
    print(f"loss: {first_loss:.4f} at the start, {final:.4f} after {args.steps} steps")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(losses)
    ax.set_xlabel("gradient descent step")
    ax.set_ylabel("mean squared error")
    ax.set_title("Fitting sin(x) with a tanh network (gradient by nabla vjp)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    return 0 if final < first_loss else 1


if __name__ == "__main__":
    sys.exit(main())
