"""Image kernels (test/image/*.poly): input generators and independent sequential numpy evaluations,
written from the kernels' definitions (Python's // and % are floor division and a non-negative
modulo, as the .poly language defines them for indices), not from polyc or its output.

KERNELS has the same form as test/polybench/Inputs/reference.py's.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "polybench", "Inputs"))
from reference import F32_TOLERANCE, Kernel  # noqa: E402


def gen_quasi_affine(s, rng):
    return {"img": rng.uniform(-1.0, 1.0, (s["H"], s["W"])), "dark": rng.uniform(-1.0, 1.0, (s["H"], s["W"]))}


def ref_quasi_affine(x, s):
    img = x["img"]
    H, W = s["H"], s["W"]

    def at(y, x_):  # boundary clamp
        return img[min(max(y, 0), H - 1), min(max(x_, 0), W - 1)]

    def dark(y, x_):  # boundary zero
        return x["dark"][y, x_] if 0 <= y < H and 0 <= x_ < W else 0.0

    out = {name: np.zeros((H, W)) for name in ("up", "box", "checker", "shifted", "below", "sel", "pre", "tree")}
    for y in range(H):
        for c in range(W):
            out["up"][y, c] = at(y // 2, c // 2)
            out["box"][y, c] = sum(at(2 * (y // 2) + dy, 2 * (c // 2) + dx) for dy in range(2) for dx in range(2)) / 4
            out["checker"][y, c] = img[y, c] if (y + c) % 2 == 0 else -img[y, c]
            out["shifted"][y, c] = at((y - 3) // 2, (c + 5) % 7)
            out["below"][y, c] = dark((y - 3) // 2, c) + dark(y, (c - 4) % 3)
            out["sel"][y, c] = (img[y, c] if c % 3 == 1 else 0.5) + (2.0 if (c - 4) % 3 == 2 else 0.0)
            out["pre"][y, c] = sum(at(y, k) for k in range(c // 2 + 1))
        for c in range(W):  # parents before children: (c - 1) // 2 < c
            out["tree"][y, c] = img[y, c] + (out["tree"][y, (c - 1) // 2] if c >= 1 else 0.0)
    return out


def mean_2x2(a):
    """Each element the mean of a 2 x 2 block, an odd last row or column clamped (repeated)."""
    h, w = a.shape
    out = np.zeros(((h + 1) // 2, (w + 1) // 2))
    for y in range(out.shape[0]):
        for x in range(out.shape[1]):
            out[y, x] = sum(a[min(2 * y + dy, h - 1), min(2 * x + dx, w - 1)] for dy in range(2) for dx in range(2)) / 4
    return out


def ref_pyramid(x, s):
    img = x["img"]
    half = mean_2x2(img)
    detail = np.array([[img[y, c] - half[y // 2, c // 2] for c in range(s["W"])] for y in range(s["H"])])
    coarse = x["coarse"]
    up = np.array([[2 * coarse[y // 2, c // 2] for c in range(s["W"])] for y in range(s["H"])])
    return {"half": half, "quarter": mean_2x2(half), "detail": detail.reshape(s["H"], s["W"]),
            "up": up.reshape(s["H"], s["W"])}


def gen_pyramid(s, rng):
    return {"img": rng.uniform(0.0, 1.0, (s["H"], s["W"])),
            "coarse": rng.uniform(-1.0, 1.0, ((s["H"] + 1) // 2, (s["W"] + 1) // 2))}


def fetch(a, index, rule):
    """a at an integer index under a boundary rule (zero, clamp, mirror), as docs/language.md defines it."""
    at = []
    for i, n in zip(index, a.shape):
        if 0 <= i < n:
            at.append(i)
            continue
        if rule == "zero" or n == 0:
            return 0.0
        if rule == "mirror":
            i = -i if i < 0 else 2 * (n - 1) - i
        at.append(min(max(i, 0), n - 1))
    return float(a[tuple(at)])


def interpolate(a, positions, rule):
    """Multilinear interpolation of a at positions (ints name elements, floats fall between them)."""
    below, between = [], []
    for d, p in enumerate(positions):
        if isinstance(p, int):
            below.append(p)
        else:
            below.append(int(np.floor(p)))
            between.append((d, p - np.floor(p)))
    total = 0.0
    for corner in range(1 << len(between)):
        at, weight = list(below), 1.0
        for k, (d, fraction) in enumerate(between):
            above = (corner >> k) & 1
            at[d] += above
            weight *= fraction if above else 1.0 - fraction
        total += weight * fetch(a, at, rule)
    return total


def gen_sample(s, rng):
    T, H, W = s["T"], s["H"], s["W"]
    return {"I": rng.uniform(0.0, 1.0, (T, H, W)), "u": rng.uniform(-3.0, 3.0, (T, H, W)),
            "v": rng.uniform(-3.0, 3.0, (T, H, W)), "d": rng.uniform(-1.0, 1.0, (H,)),
            "m": rng.uniform(-10.0, 10.0, (H, W))}


def ref_sample(x, s):
    T, H, W = s["T"], s["H"], s["W"]
    I, u, v, d, m = x["I"], x["u"], x["v"], x["d"], x["m"]
    warped = np.zeros((T, H, W))
    for t in range(T):
        for y in range(H):
            for c in range(W):
                warped[t, y, c] = interpolate(I, [t, y + v[t, y, c], c + u[t, y, c]], "clamp")
    shifted = np.array([interpolate(d, [1.25 * i - 3.5], "zero") for i in range(H)])
    mirrored = np.array([[interpolate(m, [y + 0.5, c - 1.75], "mirror") for c in range(W)] for y in range(H)])
    exact = np.array([[interpolate(m, [y, c], "mirror") for c in range(W)] for y in range(H)])
    return {"warped": warped, "shifted": shifted, "mirrored": mirrored.reshape(H, W),
            "exact": exact.reshape(H, W), "truncated": np.trunc(m)}


def gen_fixed_point(s, rng):
    shape = (s["H"], s["W"])
    return {"weak": (rng.uniform(0.0, 1.0, shape) < 0.6) * 1.0, "seed": (rng.uniform(0.0, 1.0, shape) < 0.03) * 1.0,
            "on": (rng.uniform(0.0, 1.0, shape) < 0.55) * 1.0}


def neighbours(a, outside):
    """The 3 x 3 neighbourhoods of a, stacked: (9, H, W), `outside` beyond the edges."""
    h, w = a.shape
    padded = np.full((h + 2, w + 2), outside, dtype=a.dtype)
    padded[1:h + 1, 1:w + 1] = a
    return np.stack([padded[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy in (-1, 0, 1) for dx in (-1, 0, 1)])


def ref_fixed_point(x, s):
    """Jacobi rounds (every pixel from the last round's values) until one changes nothing, at most K."""
    H, W, K = s["H"], s["W"], s["K"]
    weak, on = x["weak"] > 0, x["on"] > 0
    mark, rounds, faded = x["seed"].copy(), 0, np.ones((H, W))
    while rounds < K:
        grow = weak & (mark == 0) & (neighbours(mark, 0.0).max(axis=0) > 0) if mark.size else mark > 0
        mark, rounds, faded = mark + grow, rounds + 1, faded - 0.5 * faded
        if not grow.any():
            break
    label = np.where(on, np.arange(H * W).reshape(H, W), -1)
    label_rounds = 0
    while label_rounds < K:
        offered = np.where(neighbours(on, False), neighbours(label, 0), H * W)
        new = np.where(on, offered.min(axis=0), label) if label.size else label
        label_rounds += 1
        if np.array_equal(new, label):
            break
        label = new
    halved, halved_rounds = 1000 + H, 0
    while halved_rounds < K:
        new = halved - halved // 2
        halved_rounds += 1
        if new == halved:
            break
        halved = new
    return {"mark": mark, "rounds": np.array(rounds), "faded": faded, "label": label,
            "labelRounds": np.array(label_rounds), "grown": mark, "halved": np.array(halved),
            "halvedRounds": np.array(halved_rounds)}


def gen_scatter(s, rng):
    N, B, T = s["N"], s["B"], s["T"]
    return {"v": rng.uniform(-0.25, 1.25, N), "bin": rng.integers(-2, B + 2, N), "w": rng.uniform(0.0, 1.0, N),
            "at": rng.integers(-3, B + 3, (T, N))}


def ref_scatter(x, s):
    """Each point's bin by the histogram's boundary rule (bins that fall outside: clamped to the ends,
    dropped, or reflected without repeating the edge, then clamped), then added."""
    N, B, T, K = s["N"], s["B"], s["T"], s["K"]
    v, bins, w, at = x["v"], x["bin"], x["w"], x["at"]

    def mirror(i, n):
        i = -i if i < 0 else (2 * (n - 1) - i if i >= n else i)
        return min(max(i, 0), n - 1)

    clamped = np.zeros(B)
    dropped = np.zeros(B)
    mirrored = np.ones((T, B))
    repeated = np.zeros(B)
    for i in range(N):
        if B:
            clamped[min(max(int(np.floor(v[i] * B)), 0), B - 1)] += 1
        if w[i] > 0.5 and 0 <= bins[i] + 1 < B:
            dropped[bins[i] + 1] += 1
        for t in range(T):
            if B:
                mirrored[t, mirror(at[t, i], B)] -= w[i]
        if bins[i] >= 0 and bins[i] < B:
            repeated[bins[i]] += sum(k + 1 for k in range(K))
    wz = lambda k: w[k] if k < N else 0.0  # noqa: E731 (boundary zero)
    weights = np.zeros(T)
    for t in range(T):
        weights[t] = sum(wz(k) * 2 / 2 * (t + 1) for k in range(t + 1))
    for k in range(T):
        if 0 <= k + 2 < T:
            weights[k + 2] += wz(k) * (k + 3)
    return {"clamped": clamped, "dropped": dropped, "mirrored": mirrored, "weights": weights,
            "repeated": repeated, "cumulative": np.cumsum(clamped)}


def gen_histogram(s, rng):
    return {"v": rng.uniform(0.0, 1.0, s["N"])}


def ref_histogram(x, s):
    """Counts of floor(v * B), clamped to [0, B - 1]."""
    B = s["B"]
    bins = np.clip(np.floor(x["v"] * B), 0, B - 1).astype(np.int64)
    return {"hist": np.bincount(bins, minlength=B)[:B].astype(np.float64)}


KERNELS = {
    "histogram": Kernel(("N", "B"), gen_histogram, ref_histogram, F32_TOLERANCE),
    "scatter": Kernel(("N", "B", "T", "K"), gen_scatter, ref_scatter, F32_TOLERANCE),
    "fixed-point": Kernel(("H", "W", "K"), gen_fixed_point, ref_fixed_point, F32_TOLERANCE),
    "quasi-affine": Kernel(("H", "W"), gen_quasi_affine, ref_quasi_affine, F32_TOLERANCE),
    "pyramid": Kernel(("H", "W"), gen_pyramid, ref_pyramid, F32_TOLERANCE),
    "sample": Kernel(("T", "H", "W"), gen_sample, ref_sample, F32_TOLERANCE),
}
