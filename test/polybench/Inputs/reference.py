"""PolyBench/C 4.2.1 kernels (test/polybench/*.poly): input generators with a fixed seed and an
independent sequential float64 evaluation of each kernel, written here from the kernels' mathematics
(PolyBench's loop nests, in place where PolyBench works in place), not from polyc or its output.

KERNELS[name] is a Kernel with
  params      the program's params, in order
  generate    generate(sizes, rng) -> {input name: numpy array}; values in ranges that keep the
              computation well-conditioned
  evaluate    evaluate(inputs, sizes) -> {output name: float64 (or int64) array}; inputs as given by
              generate, converted to float64 (or int64) by the caller
  tolerance   the default relative error bound (float32 1e-4, float64 1e-9, i32 exact)
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np

F32_TOLERANCE = 1e-4
F64_TOLERANCE = 1e-9


@dataclass
class Kernel:
    params: tuple
    generate: Callable
    evaluate: Callable
    tolerance: float


def uniform(rng, shape, low=0.0, high=1.0):
    return rng.uniform(low, high, shape)


# ---------------------------------------------------------------------------------------------
# Stencils. T time steps; the boundary points keep their initial values.


def gen_jacobi_1d(s, rng):
    n = s["N"]
    return {"A_init": uniform(rng, n), "B_init": uniform(rng, n)}


def ref_jacobi_1d(x, s):
    n, steps = s["N"], s["T"]
    a, b = x["A_init"].copy(), x["B_init"].copy()
    for _ in range(steps):
        for i in range(1, n - 1):
            b[i] = 0.33333 * (a[i - 1] + a[i] + a[i + 1])
        for i in range(1, n - 1):
            a[i] = 0.33333 * (b[i - 1] + b[i] + b[i + 1])
    return {"A": a, "B": b}


def gen_jacobi_2d(s, rng):
    n = s["N"]
    return {"A_init": uniform(rng, (n, n)), "B_init": uniform(rng, (n, n))}


def ref_jacobi_2d(x, s):
    steps = s["T"]
    a, b = x["A_init"].copy(), x["B_init"].copy()
    for _ in range(steps):
        # Jacobi: every point of a sweep reads the previous array only, so a slice is the loop.
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return {"A": a, "B": b}


def gen_heat_3d(s, rng):
    n = s["N"]
    return {"A_init": uniform(rng, (n, n, n)), "B_init": uniform(rng, (n, n, n))}


def heat_step(src, dst):
    c = src[1:-1, 1:-1, 1:-1]
    dst[1:-1, 1:-1, 1:-1] = (0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
                             + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
                             + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2])
                             + c)


def ref_heat_3d(x, s):
    a, b = x["A_init"].copy(), x["B_init"].copy()
    for _ in range(s["T"]):
        heat_step(a, b)
        heat_step(b, a)
    return {"A": a, "B": b}


def gen_fdtd_2d(s, rng):
    nx, ny, steps = s["NX"], s["NY"], s["T"]
    return {"ex_init": uniform(rng, (nx, ny)), "ey_init": uniform(rng, (nx, ny)),
            "hz_init": uniform(rng, (nx, ny)), "fict": uniform(rng, steps)}


def ref_fdtd_2d(x, s):
    ex, ey, hz = x["ex_init"].copy(), x["ey_init"].copy(), x["hz_init"].copy()
    for t in range(s["T"]):
        ey[0, :] = x["fict"][t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return {"ex": ex, "ey": ey, "hz": hz}


def gen_seidel_2d(s, rng):
    n = s["N"]
    return {"A_init": uniform(rng, (n, n))}


def ref_seidel_2d(x, s):
    n = s["N"]
    a = x["A_init"].copy()
    for _ in range(s["T"]):
        # Gauss-Seidel in place, row by row: a point sees the new values of the points before it.
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                a[i, j] = (a[i - 1, j - 1] + a[i - 1, j] + a[i - 1, j + 1]
                           + a[i, j - 1] + a[i, j] + a[i, j + 1]
                           + a[i + 1, j - 1] + a[i + 1, j] + a[i + 1, j + 1]) / 9.0
    return {"A": a}


# ---------------------------------------------------------------------------------------------
# Dense linear algebra. alpha and beta are PolyBench's values; matrices in [-1, 1].

ALPHA, BETA = 1.5, 1.2


def scalars():
    return {"alpha": np.array(ALPHA), "beta": np.array(BETA)}


def gen_gemm(s, rng):
    ni, nj, nk = s["NI"], s["NJ"], s["NK"]
    return {**scalars(), "C_init": uniform(rng, (ni, nj), -1, 1), "A": uniform(rng, (ni, nk), -1, 1),
            "B": uniform(rng, (nk, nj), -1, 1)}


def ref_gemm(x, s):
    c = x["beta"] * x["C_init"]
    for k in range(s["NK"]):
        c += x["alpha"] * np.outer(x["A"][:, k], x["B"][k, :])
    return {"C": c}


def gen_2mm(s, rng):
    ni, nj, nk, nl = s["NI"], s["NJ"], s["NK"], s["NL"]
    return {**scalars(), "A": uniform(rng, (ni, nk), -1, 1), "B": uniform(rng, (nk, nj), -1, 1),
            "C": uniform(rng, (nj, nl), -1, 1), "D_init": uniform(rng, (ni, nl), -1, 1)}


def ref_2mm(x, s):
    tmp = np.zeros((s["NI"], s["NJ"]))
    for k in range(s["NK"]):
        tmp += x["alpha"] * np.outer(x["A"][:, k], x["B"][k, :])
    d = x["beta"] * x["D_init"]
    for j in range(s["NJ"]):
        d += np.outer(tmp[:, j], x["C"][j, :])
    return {"D": d}


def gen_atax(s, rng):
    m, n = s["M"], s["N"]
    return {"A": uniform(rng, (m, n), -1, 1), "x": uniform(rng, n, -1, 1)}


def ref_atax(x, s):
    a = x["A"]
    y = np.zeros(s["N"])
    for i in range(s["M"]):
        tmp = np.dot(a[i, :], x["x"])
        y += a[i, :] * tmp
    return {"y": y}


def gen_bicg(s, rng):
    m, n = s["M"], s["N"]
    return {"A": uniform(rng, (n, m), -1, 1), "r": uniform(rng, n, -1, 1), "pdir": uniform(rng, m, -1, 1)}


def ref_bicg(x, s):
    a = x["A"]
    sv = np.zeros(s["M"])
    q = np.zeros(s["N"])
    for i in range(s["N"]):
        sv += x["r"][i] * a[i, :]
        q[i] = np.dot(a[i, :], x["pdir"])
    return {"s": sv, "q": q}


def gen_mvt(s, rng):
    n = s["N"]
    return {"A": uniform(rng, (n, n), -1, 1), "x1_init": uniform(rng, n, -1, 1),
            "x2_init": uniform(rng, n, -1, 1), "y1": uniform(rng, n, -1, 1), "y2": uniform(rng, n, -1, 1)}


def ref_mvt(x, s):
    a = x["A"]
    x1, x2 = x["x1_init"].copy(), x["x2_init"].copy()
    for i in range(s["N"]):
        x1[i] += np.dot(a[i, :], x["y1"])
    for i in range(s["N"]):
        x2[i] += np.dot(a[:, i], x["y2"])
    return {"x1": x1, "x2": x2}


def gen_gesummv(s, rng):
    n = s["N"]
    return {**scalars(), "A": uniform(rng, (n, n), -1, 1), "B": uniform(rng, (n, n), -1, 1),
            "x": uniform(rng, n, -1, 1)}


def ref_gesummv(x, s):
    y = np.zeros(s["N"])
    for i in range(s["N"]):
        tmp = np.dot(x["A"][i, :], x["x"])
        yi = np.dot(x["B"][i, :], x["x"])
        y[i] = x["alpha"] * tmp + x["beta"] * yi
    return {"y": y}


def gen_syrk(s, rng):
    n, m = s["N"], s["M"]
    return {**scalars(), "A": uniform(rng, (n, m), -1, 1), "C_init": uniform(rng, (n, n), -1, 1)}


def ref_syrk(x, s):
    n, m = s["N"], s["M"]
    a = x["A"]
    c = x["C_init"].copy()  # the strict upper triangle is not touched
    for i in range(n):
        c[i, :i + 1] *= x["beta"]
        for k in range(m):
            c[i, :i + 1] += x["alpha"] * a[i, k] * a[:i + 1, k]
    return {"C": c}


# ---------------------------------------------------------------------------------------------
# Solvers and other sequential kernels (float64).


def gen_trisolv(s, rng):
    n = s["N"]
    # Off-diagonal entries small against a diagonal in [1, 2]: a well-conditioned triangular system.
    # The upper triangle holds values too, which the solve must not read.
    lmat = uniform(rng, (n, n), -1, 1) / max(n, 1)
    lmat[np.diag_indices(n)] = uniform(rng, n, 1, 2)
    return {"L": lmat, "b": uniform(rng, n, -1, 1)}


def ref_trisolv(x, s):
    lmat, b = x["L"], x["b"]
    xs = np.zeros(s["N"])
    for i in range(s["N"]):
        xs[i] = b[i]
        for j in range(i):
            xs[i] -= lmat[i, j] * xs[j]
        xs[i] /= lmat[i, i]
    return {"x": xs}


def diagonally_dominant(n, rng):
    a = uniform(rng, (n, n), -1, 1)
    a[np.diag_indices(n)] += n + 1.0
    return a


def gen_lu(s, rng):
    return {"A_init": diagonally_dominant(s["N"], rng)}


def ref_lu(x, s):
    # PolyBench's lu: Doolittle in place, row by row (left-looking), no pivoting.
    n = s["N"]
    a = x["A_init"].copy()
    for i in range(n):
        for j in range(i):
            a[i, j] -= np.dot(a[i, :j], a[:j, j])
            a[i, j] /= a[j, j]
        for j in range(i, n):
            a[i, j] -= np.dot(a[i, :i], a[:i, j])
    return {"A": a}


def gen_cholesky(s, rng):
    n = s["N"]
    # Symmetric positive definite: a symmetric random matrix plus a dominant diagonal. The strict
    # upper triangle comes out unchanged.
    a = uniform(rng, (n, n), -1, 1)
    a = (a + a.T) / 2
    a[np.diag_indices(n)] += n + 1.0
    return {"A_init": a}


def ref_cholesky(x, s):
    n = s["N"]
    a = x["A_init"].copy()
    for i in range(n):
        for j in range(i):
            a[i, j] -= np.dot(a[i, :j], a[j, :j])
            a[i, j] /= a[j, j]
        a[i, i] -= np.dot(a[i, :i], a[i, :i])
        a[i, i] = np.sqrt(a[i, i])
    return {"A": a}


def gen_durbin(s, rng):
    n = s["N"]
    # r[k] = rho(k + 1): the normalised autocorrelation of a random sequence at lags 1..N, so the
    # Toeplitz system is positive definite and every reflection coefficient |alpha| < 1.
    length = 4 * n + 16
    sig = uniform(rng, length, -1, 1)
    sig = np.convolve(sig, [1.0, 0.6, 0.3], mode="same")
    full = np.correlate(sig, sig, mode="full")[length - 1:]
    return {"r": full[1:n + 1] / full[0]}


def ref_durbin(x, s):
    n = s["N"]
    r = x["r"]
    y = np.zeros(n)
    if n == 0:
        return {"y": y}
    y[0] = -r[0]
    beta, alpha = 1.0, -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        acc = 0.0
        for i in range(k):
            acc += r[k - i - 1] * y[i]
        alpha = -(r[k] + acc) / beta
        z = np.array([y[i] + alpha * y[k - i - 1] for i in range(k)])
        y[:k] = z
        y[k] = alpha
    return {"y": y}


def gen_floyd_warshall(s, rng):
    n = s["N"]
    # Non-negative integer edge weights (so PolyBench's in-place update is the textbook one), a third
    # of the pairs unconnected (a large weight whose sums stay far from i32 overflow).
    w = rng.integers(1, 100, (n, n))
    w[rng.random((n, n)) < 0.33] = 100000
    w[np.diag_indices(n)] = 0
    return {"path_init": w}


def ref_floyd_warshall(x, s):
    n = s["N"]
    path = x["path_init"].astype(np.int64)
    for k in range(n):
        # In place, as PolyBench: row k and column k do not change in step k (path[k, k] >= 0).
        for i in range(n):
            path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])
    return {"path": path}


KERNELS = {
    "jacobi-1d": Kernel(("N", "T"), gen_jacobi_1d, ref_jacobi_1d, F32_TOLERANCE),
    "jacobi-2d": Kernel(("N", "T"), gen_jacobi_2d, ref_jacobi_2d, F32_TOLERANCE),
    "heat-3d": Kernel(("N", "T"), gen_heat_3d, ref_heat_3d, F32_TOLERANCE),
    "fdtd-2d": Kernel(("NX", "NY", "T"), gen_fdtd_2d, ref_fdtd_2d, F32_TOLERANCE),
    "seidel-2d": Kernel(("N", "T"), gen_seidel_2d, ref_seidel_2d, F32_TOLERANCE),
    "gemm": Kernel(("NI", "NJ", "NK"), gen_gemm, ref_gemm, F32_TOLERANCE),
    "2mm": Kernel(("NI", "NJ", "NK", "NL"), gen_2mm, ref_2mm, F32_TOLERANCE),
    "atax": Kernel(("M", "N"), gen_atax, ref_atax, F32_TOLERANCE),
    "bicg": Kernel(("M", "N"), gen_bicg, ref_bicg, F32_TOLERANCE),
    "mvt": Kernel(("N",), gen_mvt, ref_mvt, F32_TOLERANCE),
    "gesummv": Kernel(("N",), gen_gesummv, ref_gesummv, F32_TOLERANCE),
    "syrk": Kernel(("N", "M"), gen_syrk, ref_syrk, F32_TOLERANCE),
    "trisolv": Kernel(("N",), gen_trisolv, ref_trisolv, F64_TOLERANCE),
    "lu": Kernel(("N",), gen_lu, ref_lu, F64_TOLERANCE),
    # The same factors, written as elimination steps over k (test/polybench/lu-right-looking.poly).
    "lu-right-looking": Kernel(("N",), gen_lu, ref_lu, F64_TOLERANCE),
    "cholesky": Kernel(("N",), gen_cholesky, ref_cholesky, F64_TOLERANCE),
    "durbin": Kernel(("N",), gen_durbin, ref_durbin, F64_TOLERANCE),
    "floyd-warshall": Kernel(("N",), gen_floyd_warshall, ref_floyd_warshall, 0.0),
}

# Time-stepped stencils: the arrays a step reads and writes (for the bandwidth floor of one step).
STENCIL_STATE = {
    "jacobi-1d": ("A", "B"),
    "jacobi-2d": ("A", "B"),
    "heat-3d": ("A", "B"),
    "fdtd-2d": ("ex", "ey", "hz"),
    "seidel-2d": ("A",),
}


def self_check():
    """Checks the sequential references against numpy's linear algebra (a second, unrelated
    evaluation) on the small presets: `python3 reference.py` prints one line per check."""
    rng = np.random.default_rng(1)
    results = []

    def record(name, value):
        results.append((name, value))

    s = {"NI": 7, "NJ": 9, "NK": 11, "NL": 5, "M": 8, "N": 13}
    x = gen_gemm(s, rng)
    record("gemm", np.max(np.abs(ref_gemm(x, s)["C"] - (BETA * x["C_init"] + ALPHA * x["A"] @ x["B"]))))
    x = gen_2mm(s, rng)
    want = ALPHA * x["A"] @ x["B"] @ x["C"] + BETA * x["D_init"]
    record("2mm", np.max(np.abs(ref_2mm(x, s)["D"] - want)))
    x = gen_atax(s, rng)
    record("atax", np.max(np.abs(ref_atax(x, s)["y"] - x["A"].T @ (x["A"] @ x["x"]))))
    x = gen_bicg(s, rng)
    got = ref_bicg(x, s)
    record("bicg", max(np.max(np.abs(got["s"] - x["A"].T @ x["r"])), np.max(np.abs(got["q"] - x["A"] @ x["pdir"]))))
    x = gen_syrk(s, rng)
    want = np.where(np.tri(13, dtype=bool), BETA * x["C_init"] + ALPHA * x["A"] @ x["A"].T, x["C_init"])
    record("syrk", np.max(np.abs(ref_syrk(x, s)["C"] - want)))
    x = gen_trisolv(s, rng)
    record("trisolv", np.max(np.abs(np.tril(x["L"]) @ ref_trisolv(x, s)["x"] - x["b"])))
    x = gen_lu(s, rng)
    lu = ref_lu(x, s)["A"]
    lower = np.tril(lu, -1) + np.eye(13)
    record("lu", np.max(np.abs(lower @ np.triu(lu) - x["A_init"])))
    x = gen_cholesky(s, rng)
    ch = ref_cholesky(x, s)["A"]
    record("cholesky", max(np.max(np.abs(np.tril(ch) - np.linalg.cholesky(x["A_init"]))),
                           np.max(np.abs(np.triu(ch, 1) - np.triu(x["A_init"], 1)))))
    x = gen_durbin(s, rng)
    y = ref_durbin(x, s)["y"]
    first = np.concatenate(([1.0], x["r"][:-1]))
    toeplitz = first[np.abs(np.arange(13)[:, None] - np.arange(13)[None, :])]
    record("durbin", np.max(np.abs(toeplitz @ y + x["r"])))
    x = gen_floyd_warshall(s, rng)
    dist = x["path_init"].astype(float)
    for _ in range(13):  # shortest paths by repeated min-plus squaring
        dist = np.minimum(dist, np.min(dist[:, :, None] + dist[None, :, :], axis=1))
    record("floyd-warshall", np.max(np.abs(ref_floyd_warshall(x, s)["path"] - dist)))
    status = 0
    for name, error in results:
        verdict = "ok" if error <= 1e-9 else "FAIL"
        status |= verdict != "ok"
        print(f"reference {name}: {error:.2e}: {verdict}")
    return status


if __name__ == "__main__":
    raise SystemExit(self_check())
