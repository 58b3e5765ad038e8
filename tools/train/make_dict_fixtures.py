#!/usr/bin/python3
"""Golden fixtures for the dictionary pursuits (kernels/dict), from an independent
NumPy implementation: projection pursuit (paper 1 Algorithm 1) and OMP in float64,
and the integer pursuit (kernels/dict/int_pursuit.h) in exact int64 arithmetic.

    /usr/bin/python3 tools/train/make_dict_fixtures.py > tests/fixtures/dict/pursuit_goldens.txt

Output: one record per line, "<name> <count> <values...>". Inputs are drawn with
a fixed seed; a vector is kept only if every argmax of every step wins by a
relative margin of 1e-3, so FP32 rounding in the C++ code cannot flip a choice.
"""
import numpy as np

rng = np.random.default_rng(20261201)
ATOMS, DIM, K, VECTORS = 48, 16, 8, 6
MARGIN = 1e-3


def emit(name, values):
    values = list(values)
    print(name, len(values), " ".join(repr(v) if isinstance(v, float) else str(v) for v in values))


def pick(c, selected):
    a = np.abs(c).astype(np.float64)
    a[selected] = -1.0
    order = np.argsort(-a, kind="stable")
    best, second = order[0], order[1]
    return int(best), (a[best] - a[second]) / max(a[best], 1e-30)


def pursuit(D, x, k):
    """D: [atoms, dim] (atom per row). Algorithm 1."""
    r = x.copy()
    sel = np.zeros(D.shape[0], bool)
    idx, coef, margin = [], [], 1.0
    for _ in range(k):
        c = D @ r
        j, m = pick(c, sel)
        margin = min(margin, m)
        sel[j] = True
        idx.append(j)
        coef.append(float(c[j]))
        r = r - c[j] * D[j]
    return idx, coef, r, margin


def omp(D, x, k):
    r = x.copy()
    sel = np.zeros(D.shape[0], bool)
    idx, margin = [], 1.0
    coef = np.zeros(0)
    for _ in range(k):
        c = D @ r
        j, m = pick(c, sel)
        margin = min(margin, m)
        sel[j] = True
        idx.append(j)
        A = D[idx].T
        coef, *_ = np.linalg.lstsq(A, x, rcond=None)
        r = x - A @ coef
    return idx, [float(v) for v in coef], r, margin


def round_shift(x, s):
    """x / 2^s rounded to nearest, ties towards +inf; s < 0 multiplies (kernels/int/fixed_point.h)."""
    x = int(x)
    if s <= 0:
        return x << (-s)
    return (x + (1 << (s - 1))) >> s


def requantize_int8(r):
    """Token-wise requantization to 8 bits (kernels/int/requant.cc)."""
    m = max(abs(int(v)) for v in r)
    if m == 0:
        return [0] * len(r), 0
    shift = m.bit_length() - 7
    while round_shift(m, shift) > 127:
        shift += 1
    return [max(-127, min(127, round_shift(v, shift))) for v in r], shift


def int_pursuit(Q, mult, shift_sq, x, k):
    r = [int(v) for v in x]
    sel = set()
    idx, coef = [], []
    for _ in range(k):
        r8, s = requantize_int8(r)
        c = [sum(int(a) * b for a, b in zip(Q[j], r8)) for j in range(Q.shape[0])]
        best, best_abs = -1, -1
        for j in range(Q.shape[0]):
            if j not in sel and abs(c[j]) > best_abs:
                best, best_abs = j, abs(c[j])
        sel.add(best)
        g = round_shift(c[best], -s)
        idx.append(best)
        coef.append(g)
        r = [max(-2**31, min(2**31 - 1, rv - round_shift(g * int(q) * mult, shift_sq))) for rv, q in zip(r, Q[best])]
    return idx, coef, r


D = rng.standard_normal((ATOMS, DIM))
D /= np.linalg.norm(D, axis=1, keepdims=True)
D = D.astype(np.float32).astype(np.float64)  # exactly representable in FP32
emit("float_dictionary", [ATOMS, DIM] + [float(v) for v in D.ravel()])
emit("float_k", [K])
kept = 0
while kept < VECTORS:
    x = (rng.standard_normal(DIM) * 2.0).astype(np.float32).astype(np.float64)
    pi, pc, pr, pm = pursuit(D, x, K)
    oi, oc, orr, om = omp(D, x, K)
    if min(pm, om) < MARGIN:
        continue
    emit("x", [float(v) for v in x])
    emit("pursuit_index", pi)
    emit("pursuit_coef", pc)
    emit("pursuit_residual", [float(v) for v in pr])
    emit("omp_index", oi)
    emit("omp_coef", oc)
    emit("omp_residual", [float(v) for v in orr])
    kept += 1

# Integer pursuit: the INT8 version of the same dictionary (per-tensor scale),
# s_D^2 as a dyadic number with a 24-bit multiplier, inputs with 16 fractional bits.
scale = float(np.abs(D).max() / 127.0)
Q = np.clip(np.rint(D / scale), -127, 127).astype(np.int64)
shift_sq = 0
sq = scale * scale
while sq * 2 ** (shift_sq + 1) < 2 ** 24:
    shift_sq += 1
mult = int(round(sq * 2 ** shift_sq))
emit("int_dictionary", [ATOMS, DIM] + [int(v) for v in Q.ravel()])
emit("int_scale_sq", [mult, shift_sq])
emit("int_k", [K])
for _ in range(VECTORS):
    x = np.rint(rng.standard_normal(DIM) * 2.0 * 2 ** 16).astype(np.int64)
    ii, ic, ir = int_pursuit(Q, mult, shift_sq, x, K)
    emit("int_x", [int(v) for v in x])
    emit("int_index", ii)
    emit("int_coef", ic)
    emit("int_residual", ir)
