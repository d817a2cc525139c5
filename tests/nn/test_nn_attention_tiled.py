"""The tiled attention (online softmax, recomputation) equals the plain path it replaces, and
stays far below one T x T matrix of memory at T = 8192."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rowbook.autograd import Tensor
from rowbook.nn import functional as F
from rowbook.nn import sdpa, sdpa_tiled
from rowbook.nn.sdpa import attention_plain
from rowbook.nn.sdpa_tiled import attention_tiled

RNG = np.random.default_rng(0)

CASES = [  # (B, H, H_kv, L, S, E, causal offset, key mask); sizes cross the block edges
    (2, 4, 2, 300, 300, 16, 0, False),
    (1, 2, 1, 70, 200, 8, None, True),
    (2, 2, 2, 130, 260, 8, 130, True),  # the last 130 of 260 positions, as with a cache
    (1, 3, 3, 129, 129, 5, 0, True),
    (1, 1, 1, 5, 3, 4, 0, False),  # L > S: the last queries see every key
    (1, 2, 2, 1, 257, 8, 256, False),  # one new token over a long cache
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("B", "H", "Hkv", "L", "S", "E", "offset", "keys"), CASES)
def test_tiled_equals_plain_outputs_and_gradients(dtype, B, H, Hkv, L, S, E, offset, keys):
    q = RNG.standard_normal((B, H, L, E)).astype(dtype)
    k = RNG.standard_normal((B, Hkv, S, E)).astype(dtype)
    v = RNG.standard_normal((B, Hkv, S, E + 2)).astype(dtype)
    key_mask = RNG.random((B, S)) > 0.3 if keys else None
    if keys:
        key_mask[0, :3] = False
    mask = None if key_mask is None else key_mask[:, None, None, :]
    plain, plain_back = attention_plain(q, k, v, scale=0.3, causal_offset=offset, mask=mask)
    tiled, tiled_back = attention_tiled(q, k, v, scale=0.3, causal_offset=offset, key_mask=key_mask)
    atol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(tiled, plain, atol=atol)
    g = RNG.standard_normal(plain.shape).astype(dtype)
    for ours, reference in zip(tiled_back(g), plain_back(g), strict=True):
        np.testing.assert_allclose(ours, reference, atol=atol)


def test_a_query_that_sees_no_key_gets_zeros_and_no_gradient_on_both_paths():
    q, k, v = (RNG.standard_normal((1, 1, 4, 4)) for _ in range(3))
    key_mask = np.zeros((1, 4), bool)
    out, back = attention_tiled(q, k, v, scale=0.5, key_mask=key_mask)
    assert not out.any() and not any(g.any() for g in back(np.ones_like(out)))


def test_auto_takes_the_tiled_path_from_the_threshold_on(monkeypatch):
    calls = []
    real = sdpa_tiled.attention_tiled
    monkeypatch.setattr(
        sdpa_tiled, "attention_tiled", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    monkeypatch.setattr(sdpa, "TILED_MIN_KEYS", 64)
    x = Tensor(RNG.standard_normal((1, 2, 64, 8)).astype(np.float32), requires_grad=True)
    tiled = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    assert calls == [1]
    F.scaled_dot_product_attention(x, x, x, attn_mask=np.tril(np.ones((64, 64), bool)))
    F.scaled_dot_product_attention(x[:, :, :63], x[:, :, :63], x[:, :, :63], is_causal=True)
    F.scaled_dot_product_attention(x[:, :, -1:], x, x, is_causal=True)  # one query: a cached step
    assert calls == [1]  # a general mask, fewer keys, or few queries: the plain path
    plain = F.scaled_dot_product_attention(x, x, x, is_causal=True, implementation="plain")
    np.testing.assert_allclose(tiled.data, plain.data, atol=1e-5)


_MEASURE = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from rowbook.autograd import Tensor
    from rowbook.nn.functional import scaled_dot_product_attention

    def peak_kib():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))

    def run(T, implementation):
        rng = np.random.default_rng(0)
        q, k, v = (Tensor(rng.standard_normal((1, 1, T, 64), dtype=np.float32), requires_grad=True)
                   for _ in range(3))
        out = scaled_dot_product_attention(q, k, v, is_causal=True, implementation=implementation)
        out.backward(np.ones_like(out.data))

    T, implementation = int(sys.argv[1]), sys.argv[2]
    run(256, implementation)  # compile (or load) the kernels first
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak resident size to the current one
    before = peak_kib()
    run(T, implementation)
    print(json.dumps({"added_mib": (peak_kib() - before) / 1024}))
    """
)


def _added_mib(T: int, implementation: str) -> float:
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(T), implementation],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])["added_mib"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_tiled_attention_at_8192_stays_far_below_one_t_by_t_matrix():
    matrix_mib = 8192 * 8192 * 4 / 2**20  # 256 MiB of float32 scores
    tiled = _added_mib(8192, "tiled")
    assert tiled < matrix_mib / 8, f"tiled attention added {tiled:.0f} MiB"
    plain = _added_mib(2048, "plain")  # the measurement sees the plain path's 2048 x 2048 matrices
    assert plain > 2048 * 2048 * 4 / 2**20, f"the plain path added only {plain:.0f} MiB"
