#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fits the polynomial tables of include/nonlin/math/normal_tables.hpp, root_tables.hpp,
silu_slope_table.hpp, gelu_tanh_slope_table.hpp and sigmoid_slope_table.hpp (those three alone
with --silu-slope), and (with --exp) prints the
coefficients of exp's polynomial in include/nonlin/math/exp.hpp, (with --tanh) those of the fast
tier's float tanh rational and (with --log1p) the table and polynomial of its float
log(1 + e), both in include/nonlin/math/fast.hpp.

Needs Python 3 with mpmath (Debian: python3-mpmath). `python3 tools/fit_coefficients.py > x`
prints both headers' tables. Method: Chebyshev interpolation at 60 digits (mpmath.chebyfit),
expressed in powers of a local variable t in [-1, 1]; the lowest degree whose exact
coefficients stay below a sixteenth of an ulp on a dense grid is kept, then its coefficients
are rounded to the type one at a time, the higher ones refitted after each (least squares on the
grid) to absorb the lower ones' rounding; the quoted error is that of the rounded polynomial.
"""
import struct

from mpmath import chebyfit, erfc, exp, findroot, mp, mpf, sqrt, pi, tanh, log

mp.dps = 60
# Half an ulp of the type, relative.
TARGET = {"float": mpf(2) ** -24, "double": mpf(2) ** -53}


def rounded(v, kind):
    if kind == "double":
        return mpf(float(v))
    return mpf(struct.unpack("f", struct.pack("f", float(v)))[0])


def fit_local(func, lo, hi, kind, max_degree=40, fraction=mpf(1) / 16):
    """Coefficients (ascending) of p(t) ~ func(mid + half t), t in [-1, 1]: the lowest degree
    whose approximation error is below `fraction` of half an ulp of the type (a sixteenth by
    default); returns them rounded to the type with the relative error of the rounded
    polynomial (what the library evaluates)."""
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    g = lambda t: func(mid + half * t)
    grid = [mpf(-1) + mpf(2) * k / 800 for k in range(801)]
    values = [g(t) for t in grid]

    def worst(coeffs):
        err = mpf(0)
        for t, v in zip(grid, values):
            p = mpf(0)
            for c in reversed(coeffs):
                p = p * t + c
            err = max(err, abs(p - v) / abs(v))
        return err

    def round_compensated(exact):
        """Rounds the coefficients one at a time, lowest first, refitting the higher ones after
        each (weighted least squares on the grid, relative error) so that they absorb what the
        rounding of the lower ones cost; rounding all at once leaves up to ~2 ulp of the type."""
        coeffs = list(exact)
        for k in range(len(coeffs)):
            coeffs[k] = rounded(coeffs[k], kind)
            free = len(coeffs) - k - 1
            if free == 0:
                break
            rows, rhs = [], []
            for t, v in zip(grid, values):
                fixed = mpf(0)
                for c in reversed(coeffs[: k + 1]):
                    fixed = fixed * t + c
                rows.append([t ** (k + 1 + j) / v for j in range(free)])
                rhs.append((v - fixed) / v)
            a = mp.matrix(rows)
            b = mp.matrix(rhs)
            solution = mp.lu_solve(a.T * a, a.T * b)
            coeffs[k + 1:] = [solution[j] for j in range(free)]
        return coeffs

    for n in range(3, max_degree + 2):
        exact = list(reversed(chebyfit(g, [-1, 1], n)))  # ascending
        if worst(exact) < TARGET[kind] * fraction:
            plain = [rounded(c, kind) for c in exact]
            compensated = round_compensated(exact)
            best = min((plain, compensated), key=worst)
            return best, worst(best)
    raise SystemExit(f"no fit on [{lo}, {hi}] below target")


def cxx(v, kind):
    if v == 0:
        text = "0.0"
    else:
        mantissa, exponent = float(v).hex().split("p")
        text = mantissa.rstrip("0").rstrip(".") + "p" + exponent
    return text + ("f" if kind == "float" else "")


def table(name, kind, rows, note):
    width = max(len(r[0]) for r in rows)
    out = [f"  // {note}",
           f"  static constexpr std::array<std::array<{kind}, {width}>, {len(rows)}> {name} = {{{{"]
    for coeffs, err, label in rows:
        padded = list(coeffs) + [mpf(0)] * (width - len(coeffs))
        quality = "exact" if err is None else f"max relative error {float(err):.1e}"
        out.append(f"      // {label}: degree {len(coeffs) - 1}, {quality}")
        out.append("      {" + ", ".join(cxx(c, kind) for c in padded) + "},")
    out.append("  }};")
    return "\n".join(out)


def phi(x):
    return erfc(-x / sqrt(2)) / 2


def pdf(x):
    return exp(-x * x / 2) / sqrt(2 * pi)


def sigmoid(x):
    return 1 / (1 + exp(-x))


def normal_tables(kind):
    # g(a) = Phi(-a) e^(a^2/2) on the octaves of a: [0, 1) (t = 2a - 1), then [2^(j-1), 2^j)
    # (t = a 2^(2-j) - 3), so the piece is read off a's exponent. Octaves up to where a
    # backward's dy Phi'(x) underflows for every finite dy: a = 32 (float; x Phi(x) itself
    # underflows from a = 14.5), a = 64 (double).
    g = lambda a: erfc(a / sqrt(2)) / 2 * exp(a * a / 2)
    octaves = 7 if kind == "double" else 6
    rows, fast_rows, affine = [], [], []
    for j in range(octaves):
        lo, hi = (mpf(0), mpf(1)) if j == 0 else (mpf(2) ** (j - 1), mpf(2) ** j)
        c, e = fit_local(g, lo, hi, kind)
        rows.append((c, e, f"a in [{float(lo)}, {float(hi)})"))
        # The fast tier's: within half an ulp (float degree <= 9 where the default needs 11).
        c, e = fit_local(g, lo, hi, kind, fraction=mpf(1))
        fast_rows.append((c, e, f"a in [{float(lo)}, {float(hi)})"))
        scale = 2 / (hi - lo)
        affine.append(([-(hi + lo) / (hi - lo), scale], None, f"a in [{float(lo)}, {float(hi)})"))
    first = table("scaled_tail", kind, rows,
                  "g(a) = Phi(-a) e^(a^2/2) in powers of t (scaled_tail_variable) on octaves of a")
    second = table("scaled_tail_variable", kind, affine,
                   "t = c0 + c1 a, the piece's interval of a mapped to [-1, 1] (exact)")
    third = table("fast_scaled_tail", kind, fast_rows,
                  "the same g within half an ulp, for the fast tier (math/fast.hpp)")
    return first + "\n" + second + "\n" + third


def derivative_roots():
    """f'(x) for the activations whose derivative has an interior zero x0, near which the
    generic formula cancels: f'(x0 + d) = d R(d), R fitted for d in [-1, 1/2] (the derivatives stay small far longer to the left)."""
    sig = lambda z: 1 / (1 + exp(-z))
    c1 = 2 * sqrt(2 / pi)
    c3 = c1 * mpf("0.044715")
    v = lambda x: x * (c1 + c3 * x * x)
    softplus = lambda x: log(1 + exp(x))
    return [
        ("silu", lambda z: sig(z) * (1 + z * sig(-z)), -1.28),
        ("gelu_exact", lambda x: phi(x) + x * pdf(x), -0.75),
        ("gelu_tanh", lambda x: sig(v(x)) * (1 + x * (c1 + 3 * c3 * x * x) * sig(-v(x))), -0.75),
        ("mish", lambda x: tanh(softplus(x)) + x * (1 - tanh(softplus(x)) ** 2) * sig(x), -1.19),
    ]


def root_tables(kind):
    out = []
    for name, fprime, guess in derivative_roots():
        x0 = findroot(fprime, mpf(guess))
        hi = mpf(float(x0))
        lo = mpf(float(x0 - hi))
        slope = mp.diff(fprime, x0)
        ratio = lambda d, f=fprime, x0=x0, s=slope: f(x0 + d) / d if d != 0 else s
        c, e = fit_local(ratio, mpf(-1), mpf(0.5), kind)
        out.append(f"  // {name}: f'(x) = 0 at x0 = {mp.nstr(x0, 25)}")
        out.append(f"  static constexpr double {name}_root_hi = {cxx(hi, 'double')};")
        out.append(f"  static constexpr double {name}_root_lo = {cxx(lo, 'double')};")
        out.append(table(f"{name}_ratio", kind, [(c, e, "d in [-1, 1/2]")],
                         f"f'(x0 + d) / d in powers of t = (4d + 1) / 3"))
    return "\n".join(out)


HEADER = """// SPDX-License-Identifier: MIT
#pragma once
// Fitted tables for {what}. Generated by `python3 tools/fit_coefficients.py`
// (mpmath Chebyshev fits at 60 digits; coefficients rounded to the type, then re-measured on a
// dense grid in exact arithmetic: the errors quoted are of the rounded polynomials). Do not edit.

#include <array>

#include "../isa.hpp"

namespace nonlin::math::tables {{
inline namespace NONLIN_ISA {{

template <class T>
struct {name};
{bodies}
}}  // namespace NONLIN_ISA
}}  // namespace nonlin::math::tables
"""


def lawson_polynomial(nodes, weight, target, degree):
    """c[0..degree] minimizing max |weight (target - sum c_k r^k)| over the nodes: Lawson's
    iteratively reweighted least squares, 60 iterations (exp_polynomial, log1p_unit)."""
    from mpmath import lu_solve, matrix
    lawson = [mpf(1)] * len(nodes)
    for _ in range(60):
        a = matrix(degree + 1, degree + 1)
        b = matrix(degree + 1, 1)
        for i, r in enumerate(nodes):
            w = lawson[i] * weight[i] ** 2
            powers = [r**k for k in range(degree + 1)]
            for j in range(degree + 1):
                b[j] += w * powers[j] * target[i]
                for k in range(degree + 1):
                    a[j, k] += w * powers[j] * powers[k]
        c = lu_solve(a, b)
        errors = [abs(weight[i] * (target[i] - sum(c[k] * r**k for k in range(degree + 1))))
                  for i, r in enumerate(nodes)]
        total = sum(lawson[i] * errors[i] for i in range(len(nodes)))
        lawson = [lawson[i] * errors[i] / total for i in range(len(nodes))]
    return c


def exp_polynomial(kind, degree):
    """q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2, minimax for the error of m = r + r^2 q(r)
    relative to m = e^r - 1 itself (expm1 and tanh need that; it bounds the error relative to
    e^r = 1 + m too, which is smaller): Lawson's iteratively reweighted least squares on 400
    Chebyshev nodes, 60 iterations. Returns the coefficients rounded to the type and the worst
    error of the rounded polynomial on a dense grid relative to e^r and to m, in ulps of 1
    (2^-23 / 2^-52)."""
    from mpmath import cos, expm1
    half = log(2) / 2
    nodes = [half * cos(pi * (i + mpf(0.5)) / 400) for i in range(400)]

    def q(r):
        return mpf(1) / 2 if r == 0 else (expm1(r) - r) / r**2

    weight = [r * r / abs(expm1(r)) for r in nodes]
    target = [q(r) for r in nodes]
    c = lawson_polynomial(nodes, weight, target, degree)
    coeffs = [rounded(c[k], kind) for k in range(degree + 1)]
    of_e, of_m = mpf(0), mpf(0)
    for i in range(20001):
        r = -half + 2 * half * i / 20000
        if r != 0:
            error = abs(r * r * (q(r) - sum(coeffs[k] * r**k for k in range(degree + 1))))
            of_e, of_m = max(of_e, error / exp(r)), max(of_m, error / abs(expm1(r)))
    return coeffs, of_e / (2 * TARGET[kind]), of_m / (2 * TARGET[kind])


def tanh_rational(p_degree=7, q_degree=3, limit=9):
    """The fast tier's float tanh x ~ x P(s) / Q(s), s = x^2, Q(0) = 1, on [0, limit]: minimax
    for the error relative to tanh (Lawson's iteratively reweighted least squares on the
    linearized error x P - tanh Q, weighted by 1 / (tanh Q) from the previous iteration, on 700
    Chebyshev nodes, 60 iterations; the best iterate kept). Returns P's and Q's coefficients
    rounded to float and the worst error of the rounded rational on a dense grid, in ulps of 1
    (2^-23)."""
    from mpmath import cos, fabs, lu_solve, matrix, tanh as mp_tanh
    limit = mpf(limit)
    nodes = [limit * (1 - cos(pi * (i + mpf(0.5)) / 700)) / 2 for i in range(700)]
    nodes = [x for x in nodes if x > mpf("1e-4")] + [limit]
    values = [mp_tanh(x) for x in nodes]
    n = p_degree + 1 + q_degree

    def ratio(c, x):
        s = x * x
        num = sum(c[k] * s**k for k in range(p_degree + 1))
        den = 1 + sum(c[p_degree + k] * s**k for k in range(1, q_degree + 1))
        return x * num / den, den

    lawson = [mpf(1)] * len(nodes)
    previous = [mpf(1)] * len(nodes)
    best = None
    for _ in range(60):
        a = matrix(n, n)
        b = matrix(n, 1)
        for x, f, w, q in zip(nodes, values, lawson, previous):
            s = x * x
            scale = w / (f * q)
            row = [x * s**k * scale for k in range(p_degree + 1)]
            row += [-f * s**k * scale for k in range(1, q_degree + 1)]
            for j in range(n):
                b[j] += row[j] * f * scale
                for k in range(n):
                    a[j, k] += row[j] * row[k]
        c = lu_solve(a, b)
        c = [c[k] for k in range(n)]
        errors = [fabs(ratio(c, x)[0] / f - 1) for x, f in zip(nodes, values)]
        if best is None or max(errors) < best[0]:
            best = (max(errors), c)
        previous = [ratio(c, x)[1] for x in nodes]
        total = sum(w * e for w, e in zip(lawson, errors))
        lawson = [w * e / total for w, e in zip(lawson, errors)]
    coeffs = [rounded(v, "float") for v in best[1]]
    worst = max(fabs(ratio(coeffs, x)[0] / mp_tanh(x) - 1)
                for x in (limit * i / 20000 for i in range(1, 20001)))
    return coeffs[:p_degree + 1], [mpf(1)] + coeffs[p_degree + 1:], worst / (2 * TARGET["float"])


def log1p_unit(size=16, degree=2):
    """The fast tier's float log(1 + e) for e in [0, 1] (math/fast.hpp, detail::log1p_unit_float):
    1 + e = c_j (1 + r) with j = round((size - 1) e), inv_j = 1 / c_j rounded to float (c_j = 1 +
    j / (size - 1)), r = (1 + e) inv_j - 1 (one fma: inv_j - 1 is exact), log(1 + e) = -log inv_j
    + log1p(r); q(r) ~ (log1p(r) - r) / r^2 on |r| <= 1 / (2 (size - 1)), minimax for the error of
    r + r^2 q(r) relative to log1p(r) (Lawson, 400 Chebyshev nodes, 60 iterations). Returns inv_j,
    -log inv_j (both rounded to float), q's coefficients rounded to float and the worst error of
    the rounded q on a dense grid relative to log1p(r), in ulps of 1 (2^-23)."""
    from mpmath import cos, log1p
    inverse = [rounded(1 / (1 + mpf(j) / (size - 1)), "float") for j in range(size)]
    minus_log = [rounded(-log(v), "float") for v in inverse]
    # The widest r: e half a step from j / (size - 1), through the rounded inverses.
    half = max(abs((1 + e) * inverse[j] - 1)
               for j in range(size)
               for e in (mpf(j) / (size - 1) - mpf(1) / (2 * (size - 1)),
                         mpf(j) / (size - 1) + mpf(1) / (2 * (size - 1)))
               if 0 <= e <= 1)
    nodes = [half * cos(pi * (i + mpf(0.5)) / 400) for i in range(400)]

    def q(r):
        return -mpf(1) / 2 if r == 0 else (log1p(r) - r) / r**2

    weight = [r * r / abs(log1p(r)) for r in nodes]
    target = [q(r) for r in nodes]
    c = lawson_polynomial(nodes, weight, target, degree)
    coeffs = [rounded(c[k], "float") for k in range(degree + 1)]
    worst = mpf(0)
    for i in range(20001):
        r = -half + 2 * half * i / 20000
        if r != 0:
            error = abs(r * r * (q(r) - sum(coeffs[k] * r**k for k in range(degree + 1))))
            worst = max(worst, error / abs(log1p(r)))
    return inverse, minus_log, coeffs, half, worst / (2 * TARGET["float"])


def slope_table(g, t0_guess, name):
    """A function g(t) for float t in [0, 16) (math/slope_tables.hpp) on 32 pieces [i/2, (i+1)/2),
    each g = c + (u + e) q(u) with u = t - a (exact), q of degree <= 6, evaluated as
    fma(u, q, fma(e, q, c)). The piece holding the zero t0 of g: a = t0 rounded, e = -(t0 - a)
    rounded, c = 0 and q = g / (t - t0), so the result keeps its relative accuracy as it crosses
    0. Elsewhere e = 0 and a is the float near the piece's middle (near its end towards t0 within
    0.6 of t0, where g varies most relative to its size; 0 for the first piece) at which g(a) is
    closest to a float c (Gal's accurate tables: c's own rounding below 2^-7 ulp). Returns the
    header body (a struct `name`) with the pieces' notes. t0_guess None: g has no zero, every
    piece takes c = g(a), and the struct says has_root = false (its e column is all 0)."""
    if t0_guess is None:
        t0 = mpf(-10)  # no piece holds it, none is within 0.6 of it
    else:
        t0 = findroot(g, mpf(t0_guess))
    t0_hi = rounded(t0, "float")
    t0_lo = rounded(t0 - t0_hi, "float")
    unit = struct.Struct("<f")

    def float_step(x, k):
        bits = struct.unpack("<I", unit.pack(float(x)))[0]
        return mpf(unit.unpack(struct.pack("<I", bits + k))[0])

    def ulp(v):
        from math import frexp
        return mpf(2) ** (frexp(float(v))[1] - 24)

    columns = [[] for _ in range(10)]
    notes = []
    for i in range(32):
        lo, hi = mpf(i) / 2, mpf(i + 1) / 2
        if lo <= t0 < hi:
            a, e, c = t0_hi, -t0_lo, mpf(0)
            multiplier = lambda u, a=a: a + u - t0  # g = (t - t0) q
            kind = "the zero t0 = %.10f, c = 0" % float(t0)
        else:
            a = mpf(0) if i == 0 else rounded((lo + hi) / 2, "float")
            if i > 0 and abs(a - t0) < mpf("0.6"):
                a = rounded(min(max(t0, lo), hi), "float")
            if i > 0:
                a = min((float_step(a, k) for k in range(-2000, 2001)),
                        key=lambda b: abs(g(b) - rounded(g(b), "float")) / ulp(g(b)))
            e, c = mpf(0), rounded(g(a), "float")
            multiplier = lambda u: u  # g = c + u q
            kind = "c within %.0e ulp of g(a)" % float(abs(g(a) - c) / ulp(c))
        ulo, uhi = lo - a, hi - a
        target = lambda u, a=a, c=c, m=multiplier: (g(a + u) - c) / m(u)
        grid = [ulo + (uhi - ulo) * k / 200 for k in range(201)]

        def worst(ascending, a=a, c=c, m=multiplier):
            err = mpf(0)
            for u in grid:
                q = mpf(0)
                for x in reversed(ascending):
                    q = q * u + x
                err = max(err, abs(c + m(u) * q - g(a + u)) / abs(g(a + u)))
            return err

        for n in range(2, 12):
            exact = list(reversed(chebyfit(target, [ulo, uhi], n)))
            if worst(exact) < TARGET["float"] / 8:
                break
        # Rounded lowest first, the higher ones refitted (relative least squares) after each.
        coeffs = list(exact)
        for k in range(len(coeffs)):
            coeffs[k] = rounded(coeffs[k], "float")
            free = len(coeffs) - k - 1
            if free == 0:
                break
            rows, rhs = [], []
            for u in grid:
                v = g(a + u)
                fixed = c + multiplier(u) * sum(coeffs[j] * u ** j for j in range(k + 1))
                rows.append([multiplier(u) * u ** (k + 1 + j) / v for j in range(free)])
                rhs.append((v - fixed) / v)
            A, B = mp.matrix(rows), mp.matrix(rhs)
            solution = mp.lu_solve(A.T * A, A.T * B)
            coeffs[k + 1:] = [solution[j] for j in range(free)]
        plain = [rounded(x, "float") for x in exact]
        coeffs = min((plain, coeffs), key=worst)
        if len(coeffs) > 7:
            raise SystemExit(f"silu slope piece {i}: degree {len(coeffs) - 1} above 6")
        for k, v in enumerate([a, e, c] + coeffs + [mpf(0)] * (7 - len(coeffs))):
            columns[k].append(v)
        notes.append(f"[{float(lo)}, {float(hi)}): {kind}; degree {len(coeffs) - 1}, "
                     f"error {float(worst(coeffs)):.1e}")
    names = ["anchor", "root_offset", "value", "q0", "q1", "q2", "q3", "q4", "q5", "q6"]
    while len(columns) > 5 and not any(columns[-1]):  # q's top coefficients, 0 in every piece
        columns.pop()
    out = ["  // Pieces of t: how a and c were chosen; q's degree, max relative error of g."]
    out += ["  // " + n for n in notes]
    out.append("  // Columns: a, e, c, then q's coefficients from the constant up.")
    out.append(f"  alignas(64) static constexpr std::array<std::array<float, 32>, {len(columns)}> "
               "columns = {{")
    for column_name, column in zip(names, columns):
        out.append(f"      // {column_name}")
        out.append("      {" + ", ".join(cxx(v, "float") for v in column) + "},")
    out.append("  }};")
    out.append(f"  static constexpr bool has_root = {'false' if t0_guess is None else 'true'};")
    return f"struct {name} {{\n" + "\n".join(out) + "\n};\n"


def silu_slope_table():
    """g(t) = silu'(-t): silu'(z) = g(|z|) for z <= 0, 1 - g(|z|) for z > 0."""
    sig = lambda z: 1 / (1 + exp(-z))
    return slope_table(lambda t: sig(-t) * (1 - t * sig(t)), "1.2785", "silu_slope")


def sigmoid_slope_table():
    """sigma'(t) = sigma(t) sigma(-t), even: sigma'(z) = g(|z|), no zero."""
    sig = lambda z: 1 / (1 + exp(-z))
    return slope_table(lambda t: sig(t) * sig(-t), None, "sigmoid_slope")


def gelu_tanh_slope_table():
    """R(t) = gelu_tanh'(-t) e^v(t), v(t) = t (c1 + c3 t^2): gelu_tanh'(-t) = sigma(-v) (1 - t v'
    sigma(v)), so R = sigma(v) (1 - t v' sigma(v)), which tends to 1 - t v' (a cubic) where
    gelu_tanh'(-t) itself decays like e^-v."""
    sig = lambda z: 1 / (1 + exp(-z))
    c1 = 2 * sqrt(2 / pi)
    c3 = c1 * mpf("0.044715")
    v = lambda t: t * (c1 + c3 * t * t)
    slope = lambda t: c1 + 3 * c3 * t * t
    return slope_table(lambda t: sig(v(t)) * (1 - t * slope(t) * sig(v(t))), "0.75",
                       "gelu_tanh_scaled_slope")


SLOPE_HEADER = """// SPDX-License-Identifier: MIT
#pragma once
// Fitted table of {what} for float t in [0, 16) ({where}).
// Generated by `python3 tools/fit_coefficients.py` (mpmath Chebyshev fits at 60 digits;
// coefficients rounded to float lowest first, the higher ones refitted after each; the errors
// quoted are of the rounded polynomials in exact arithmetic). Do not edit.

#include <array>

#include "../isa.hpp"

namespace nonlin::math::tables {{
inline namespace NONLIN_ISA {{

{body}
}}  // namespace NONLIN_ISA
}}  // namespace nonlin::math::tables
"""


def write_slope_tables(out):
    import os
    for file, what, where, make in (
            ("silu_slope_table.hpp", "silu'(-t)", "math/silu_slope.hpp", silu_slope_table),
            ("gelu_tanh_slope_table.hpp", "gelu_tanh'(-t) e^v(t)", "gelu.hpp: gelu_tanh",
             gelu_tanh_slope_table),
            ("sigmoid_slope_table.hpp", "sigmoid'(t)", "math/logistic.hpp", sigmoid_slope_table)):
        with open(os.path.join(out, file), "w") as f:
            f.write(SLOPE_HEADER.format(what=what, where=where, body=make()))


def header(name, what, make):
    bodies = ""
    for kind in ("float", "double"):
        bodies += f"\ntemplate <>\nstruct {name}<{kind}> {{\n{make(kind)}\n}};\n"
    return HEADER.format(what=what, name=name, bodies=bodies)


def main():
    import os
    import sys
    if "--exp" in sys.argv:
        # The lowest degrees at least as accurate as the Taylor polynomials they replace (float
        # degree 5, double 11: 0.061 / 0.148 and 0.024 / 0.057 ulp of e^r / of m): one fma less.
        # (Double degree 9 is 0.061 / 0.154 ulp: tanh's double max went from 1.56 to 1.87.)
        for kind, degree in (("float", 4), ("double", 10)):
            coeffs, of_e, of_m = exp_polynomial(kind, degree)
            print(f"{kind}: worst {float(of_e):.3f} ulp of e^r, {float(of_m):.3f} ulp of m")
            print(",\n".join(cxx(c, kind) for c in coeffs))
        return
    if "--tanh" in sys.argv:
        # math/fast.hpp's detail::tanh_rational_float: degrees 7 / 3 (0.22 ulp of 1; evaluated
        # in float, 4.85 ulp over every float). 6 / 3 (Eigen's degrees) is 0.16 ulp of 1 but
        # 5.15 evaluated, 5 / 4 0.03 and 5.28, 5 / 3 0.8, 6 / 2 10.
        p, q, worst = tanh_rational()
        print(f"float: worst {float(worst):.3f} ulp of 1")
        print("p: " + ", ".join(cxx(c, "float") for c in p))
        print("q: " + ", ".join(cxx(c, "float") for c in q))
        return
    if "--silu-slope" in sys.argv:
        write_slope_tables(os.path.join(os.path.dirname(__file__), "..", "include", "nonlin", "math"))
        return
    if "--log1p" in sys.argv:
        # math/fast.hpp's detail::log1p_unit_float: 16 entries (one register), q of degree 2.
        inverse, minus_log, q, half, worst = log1p_unit()
        print(f"float: |r| <= {float(half):.6f}, worst {float(worst):.3f} ulp of log1p(r)")
        print("inverse: " + ", ".join(cxx(c, "float") for c in inverse))
        print("minus_log: " + ", ".join(cxx(c, "float") for c in minus_log))
        print("q: " + ", ".join(cxx(c, "float") for c in q))
        return
    out = os.path.join(os.path.dirname(__file__), "..", "include", "nonlin", "math")
    with open(os.path.join(out, "normal_tables.hpp"), "w") as f:
        f.write(header("normal", "the standard normal distribution (math/normal.hpp)", normal_tables))
    with open(os.path.join(out, "root_tables.hpp"), "w") as f:
        f.write(header("derivative_roots", "derivatives near their interior zeros (math/roots.hpp)",
                       root_tables))
    write_slope_tables(out)


if __name__ == "__main__":
    main()
