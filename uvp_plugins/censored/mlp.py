"""A small multi-layer perceptron ensemble with manual backpropagation and Adam, in numpy.

All ``M`` members are trained at once: the weights of layer ``l`` are stacked into one array of
shape ``(M, fan_in, fan_out)`` so a forward or backward pass is a handful of batched ``matmul``
calls whatever ``M`` is. Every parameter lives in one flat vector (``theta``) and every
gradient in another (``grad``), the per-layer arrays are views into them, so an Adam step is a
few vector operations.

The architecture follows the paper (Eggensperger et al., "Implementation Details"; Snoek et al.
2015): ``tanh`` hidden layers (default 3 x 50) and two linear outputs, the mean ``mu`` and a
raw scale ``s`` mapped to the standard deviation ``sigma = softplus(s) + min_std``. The bias of
the scale output starts at ``softplus^-1(1)``, i.e. the standard deviation of normalised
targets ("initialise the bias of the second output neuron with the data deviation").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

__all__ = ["AdamW", "MLPEnsembleNet", "softplus", "softplus_inverse"]


def softplus(s: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log(1 + exp(s))`` without overflow."""
    return np.asarray(np.logaddexp(0.0, s))


def softplus_inverse(v: float) -> float:
    """The ``s`` with ``softplus(s) == v`` (``v > 0``)."""
    if v <= 0:
        raise ValueError(f"softplus_inverse needs v > 0, got {v}")
    return float(v + np.log(-np.expm1(-v)))


class MLPEnsembleNet:
    """``n_members`` independent MLPs ``R^d -> (mu, s)`` evaluated as one batched network.

    Args:
        n_members: number of independently initialised networks (>= 1).
        n_inputs: input dimension d (>= 1).
        hidden: hidden layer widths, e.g. ``(50, 50, 50)``.
        rng: generator for the Glorot-normal initialisation.
        scale_bias: initial bias of the scale output ``s``.
        dtype: floating type of parameters and activations (float32 halves the cost of the
            matrix products and ``tanh`` with no visible loss of accuracy for these small nets).
    """

    def __init__(
        self,
        n_members: int,
        n_inputs: int,
        hidden: Sequence[int],
        rng: np.random.Generator,
        scale_bias: float = softplus_inverse(1.0),
        dtype: type[np.floating] = np.float32,
    ) -> None:
        if n_members < 1:
            raise ValueError(f"n_members must be >= 1, got {n_members}")
        if n_inputs < 1:
            raise ValueError(f"n_inputs must be >= 1, got {n_inputs}")
        self.n_members = int(n_members)
        sizes = [int(n_inputs), *[int(h) for h in hidden], 2]
        shapes: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = [
            ((self.n_members, a, b), (self.n_members, 1, b))
            for a, b in zip(sizes[:-1], sizes[1:], strict=True)
        ]
        total = sum(int(np.prod(w)) + int(np.prod(b)) for w, b in shapes)
        self.dtype = np.dtype(dtype)
        self.theta = np.zeros(total, dtype=self.dtype)
        self.grad = np.zeros(total, dtype=self.dtype)
        self.W: list[NDArray[np.float64]] = []
        self.b: list[NDArray[np.float64]] = []
        self.gW: list[NDArray[np.float64]] = []
        self.gb: list[NDArray[np.float64]] = []
        pos = 0
        for w_shape, b_shape in shapes:
            for shape, params, grads in ((w_shape, self.W, self.gW), (b_shape, self.b, self.gb)):
                size = int(np.prod(shape))
                params.append(self.theta[pos : pos + size].reshape(shape))
                grads.append(self.grad[pos : pos + size].reshape(shape))
                pos += size
        for W in self.W:
            fan_in, fan_out = W.shape[1], W.shape[2]
            W[...] = rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), size=W.shape)
        self.b[-1][..., 1] = scale_bias
        # 1.0 on weight entries, 0.0 on biases (decoupled weight decay applies to weights, not biases)
        self.decay_mask = np.zeros(total, dtype=self.dtype)
        for W in self.W:
            start = (W.ctypes.data - self.theta.ctypes.data) // self.theta.itemsize
            self.decay_mask[start : start + W.size] = 1.0

    def forward(self, X: NDArray[np.float64]) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
        """Outputs of shape ``(M, n, 2)`` (``[..., 0]`` = mu, ``[..., 1]`` = raw scale) and the
        hidden activations needed by :meth:`backward`. ``X`` has shape ``(n, d)``."""
        acts: list[NDArray[np.float64]] = []
        a: NDArray[np.float64] = np.asarray(X, dtype=self.dtype)
        for W, b in zip(self.W[:-1], self.b[:-1], strict=True):
            a = np.tanh(np.matmul(a, W) + b)
            acts.append(a)
        out = np.matmul(a, self.W[-1]) + self.b[-1]
        return out, acts

    def backward(
        self, X: NDArray[np.float64], acts: list[NDArray[np.float64]], dout: NDArray[np.float64]
    ) -> None:
        """Write the gradient of ``sum(dout * out)`` w.r.t. every parameter into :attr:`grad`."""
        X = np.asarray(X, dtype=self.dtype)
        delta = np.asarray(dout, dtype=self.dtype)
        n_layers = len(self.W)
        for layer in range(n_layers - 1, -1, -1):
            prev = acts[layer - 1] if layer > 0 else None
            if prev is None:
                np.matmul(X.T, delta, out=self.gW[layer])
            else:
                np.matmul(prev.transpose(0, 2, 1), delta, out=self.gW[layer])
            np.sum(delta, axis=1, keepdims=True, out=self.gb[layer])
            if layer > 0:
                assert prev is not None
                delta = np.matmul(delta, self.W[layer].transpose(0, 2, 1)) * (1.0 - prev * prev)

    @staticmethod
    def scale_grad(s: NDArray[np.float64]) -> NDArray[np.float64]:
        """``d softplus(s) / ds``."""
        return np.asarray(expit(s))


class AdamW:
    """Adam with decoupled weight decay on a flat parameter vector (Kingma & Ba; Loshchilov &
    Hutter), with the paper's element-wise gradient clipping to ``[-clip, clip]``."""

    def __init__(
        self,
        n_params: int,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        weight_decay: float = 1e-4,
        clip: float | None = None,
        dtype: type[np.floating] = np.float32,
    ) -> None:
        self.m = np.zeros(n_params, dtype=dtype)
        self.v = np.zeros(n_params, dtype=dtype)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps
        self.weight_decay = weight_decay
        self.clip = clip
        self.t = 0

    def step(
        self,
        theta: NDArray[np.float64],
        grad: NDArray[np.float64],
        lr: float,
        decay_mask: NDArray[np.float64] | None = None,
    ) -> None:
        """Update ``theta`` in place."""
        self.t += 1
        if self.clip is not None:
            np.clip(grad, -self.clip, self.clip, out=grad)
        self.m *= self.beta1
        self.m += (1.0 - self.beta1) * grad
        self.v *= self.beta2
        self.v += (1.0 - self.beta2) * (grad * grad)
        c1 = 1.0 - self.beta1**self.t
        c2 = 1.0 - self.beta2**self.t
        if self.weight_decay > 0:
            if decay_mask is None:
                theta *= 1.0 - lr * self.weight_decay
            else:
                theta *= 1.0 - (lr * self.weight_decay) * decay_mask
        theta -= (lr / c1) * self.m / (np.sqrt(self.v / c2) + self.eps)
