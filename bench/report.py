#!/usr/bin/env python3
"""Markdown tables from nonlin_bench's JSON output (Python 3 standard library only).

    python3 bench/report.py build/bench/bench.json

Reads the names written by bench/activations_bench.cpp, softmax_bench.cpp and gelu_error.cpp:
    <dir>/<function>/<type>/<variant>/<n>   dir: fwd | bwd | bwdy; variant: nonlin | scalar |
                                             std | a peer (fastmath, eigen, sleef, xsimd, onednn)
    memcpy/<type>/<n>, read2write1/<type>/<n>  the bandwidth ceilings
    error/<function>                         counter max_abs_err (and at_x)
The gated units of glu.hpp (GATED below) use the first form (fwd|bwd, float, nonlin or a peer,
H = 4096) and get a table of their own, beside the act they gate with.
    softmax/<dir>/<function>/<type>/<variant>/<C>  dir: fwd | bwdy, type: float | masked | wide |
        bf16 (bench/softmax_bench.cpp)
The 16-bit rows (<dir>/<function>/bf16|fp16/nonlin|convert/<n>, memcpy/bf16/<n>) get a table of
their own beside nonlin's float rows.
Throughput is printed as elements per nanosecond (items_per_second / 1e9), the median when the
run had repetitions. Rows or columns that a filtered run did not produce print as "-".
"""

import contextlib
import io
import json
import statistics
import sys
from collections import defaultdict

DIRECTIONS = [
    ("fwd", "float", "Forward, float"),
    ("fwd", "double", "Forward, double"),
    ("bwd", "float", "Backward from x (dx = dy f'(x)), float"),
    ("bwdy", "float", "Backward from the output (dx = dy f'(x) given y = f(x)), float"),
]
VARIANTS = ["nonlin", "fast", "scalar", "std", "fastmath", "eigen", "sleef", "xsimd", "onednn"]
# The peers: every variant but nonlin's own (nonlin's fast tier, nonlin/fast.hpp, and the scalar
# loop of the nonlin functor are not peers).
PEERS = ["std", "fastmath", "eigen", "sleef", "xsimd", "onednn"]
GELUS = ["gelu_exact", "gelu_tanh", "gelu_quick"]
# Documented max |approx - gelu_exact| on [-5, 5] step 0.01.
DOCUMENTED_ERROR = {"gelu_tanh": 0.000473235, "gelu_quick": 0.020334869}
# The gated units (value * act(gate)) and the act of each: their rows are not activations of one
# input, so they leave the per-function tables for a table of their own.
GATED = [("glu", "sigmoid"), ("reglu", "relu"), ("geglu", "gelu_exact"), ("swiglu", "silu")]
# The order of the functions in the tables: the catalog's (catalog/catalog.hpp), which
# nonlin_bench writes into its JSON context as nonlin_function_order; others found in the JSON
# follow, sorted.
FUNCTION_ORDER_KEY = "nonlin_function_order"


def base_name(entry):
    """The benchmark name without Google Benchmark's suffixes (/iterations:1, /real_time, _mean)."""
    name = entry.get("run_name") or entry.get("name", "")
    parts = [p for p in name.split("/") if ":" not in p and p not in ("real_time", "manual_time")]
    return "/".join(parts)


def collect(benchmarks):
    """{base name: {"items": [per-run items/s], "median": aggregate median or None, "counters"}}."""
    rows = defaultdict(lambda: {"items": [], "median": None, "counters": {}})
    for entry in benchmarks:
        if entry.get("error_occurred"):
            continue
        row = rows[base_name(entry)]
        run_type = entry.get("run_type", "iteration")
        if run_type == "aggregate":
            if entry.get("aggregate_name") == "median" and "items_per_second" in entry:
                row["median"] = entry["items_per_second"]
            continue
        if "items_per_second" in entry:
            row["items"].append(entry["items_per_second"])
        for key in ("max_abs_err", "at_x"):
            if key in entry:
                row["counters"].setdefault(key, []).append(entry[key])
    return rows


def per_ns(row):
    """Elements per ns: the median aggregate if present, else the median of the runs."""
    if row is None:
        return None
    if row["median"] is not None:
        return row["median"] / 1e9
    if row["items"]:
        return statistics.median(row["items"]) / 1e9
    return None


def size_label(n):
    for shift, suffix in ((30, "G"), (20, "M"), (10, "K")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def fmt(value):
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 0.01:
        return f"{value:.3f}".rstrip("0").rstrip(".") if value < 1 else f"{value:.2f}"
    return f"{value:.2g}"


def fmt_ratio(num, den):
    if num is None or den is None or den == 0:
        return "-"
    return f"{num / den:.2f}x"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "--:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def ordered_functions(names, context):
    order = [f for f in context.get(FUNCTION_ORDER_KEY, "").split(",") if f]
    known = [f for f in order if f in names]
    return known + sorted(names - set(order))


def print_context(context):
    print("## Machine and build\n")
    caches = ", ".join(
        f"L{c.get('level')}{'d' if c.get('type') == 'Data' else 'i' if c.get('type') == 'Instruction' else ''}"
        f" {size_label(c.get('size', 0))}B"
        + (f" (shared by {c['num_sharing']})" if c.get("num_sharing", 1) > 1 else "")
        for c in context.get("caches", []))
    items = [
        ("date", context.get("date")),
        ("host", context.get("host_name")),
        ("executable", context.get("executable")),
        ("num_cpus", context.get("num_cpus")),
        ("mhz_per_cpu", context.get("mhz_per_cpu")),
        ("cpu_scaling_enabled", context.get("cpu_scaling_enabled")),
        ("load_avg", ", ".join(f"{x:.2f}" for x in context["load_avg"])
         if context.get("load_avg") else None),
        ("caches", caches or None),
        ("benchmark library build", context.get("library_build_type")),
    ]
    items += [(key, value) for key, value in sorted(context.items())
              if key.startswith("nonlin_") and key != FUNCTION_ORDER_KEY]
    for key, value in items:
        if value not in (None, ""):
            print(f"- {key}: {value}")
    print()


def print_gelu(rows, sizes):
    print("## GELU approximations (float, nonlin SIMD kernel; elements/ns)\n")
    header = ["function", "max abs err vs exact, [-5, 5] step 0.01", "documented"]
    header += [f"fwd {size_label(n)}" for n in sizes] + [f"bwd {size_label(n)}" for n in sizes]
    out = []
    for fn in GELUS:
        if fn == "gelu_exact":
            err, doc = "0 (reference)", "-"
        else:
            counters = rows.get(f"error/{fn}", {}).get("counters", {})
            values = counters.get("max_abs_err")
            if values:
                value = max(values)
                where = counters.get("at_x", [None])[0]
                err = f"{value:.9f}" + (f" (x = {where:g})" if where is not None else "")
                expected = DOCUMENTED_ERROR.get(fn)
                if expected is not None:
                    ok = abs(value - expected) <= 5e-10 + 1e-6 * expected
                    doc = f"{expected:.9f} {'ok' if ok else 'MISMATCH'}"
                else:
                    doc = "-"
            else:
                err, doc = "-", f"{DOCUMENTED_ERROR.get(fn, 0):.9f}"
        cells = [fn, err, doc]
        cells += [fmt(per_ns(rows.get(f"fwd/{fn}/float/nonlin/{n}"))) for n in sizes]
        cells += [fmt(per_ns(rows.get(f"bwd/{fn}/float/nonlin/{n}"))) for n in sizes]
        out.append(cells)
    print(table(header, out))
    print()


def print_direction(rows, direction, type_, title, sizes, functions, summary):
    present = [fn for fn in functions
               if any(f"{direction}/{fn}/{type_}/{v}/{n}" in rows for v in VARIANTS for n in sizes)]
    if not present:
        return
    variants = [v for v in VARIANTS
                if any(f"{direction}/{fn}/{type_}/{v}/{n}" in rows for fn in present for n in sizes)]
    peers = [v for v in variants if v in PEERS]
    ceiling_name = "memcpy" if direction == "fwd" else "read2write1"
    for n in sizes:
        label = size_label(n)
        ceiling = per_ns(rows.get(f"{ceiling_name}/{type_}/{n}"))
        print(f"## {title}, {label} elements (elements/ns)\n")
        header = ["function"] + variants + ["fastest peer", "nonlin / fastest peer",
                                             "fast / fastest peer", "nonlin / ceiling"]
        out = []
        for fn in present:
            values = {v: per_ns(rows.get(f"{direction}/{fn}/{type_}/{v}/{n}")) for v in variants}
            best = max(((values[v], v) for v in peers if values[v] is not None), default=None)
            cells = [fn] + [fmt(values[v]) for v in variants]
            cells.append(best[1] if best else "-")
            cells.append(fmt_ratio(values.get("nonlin"), best[0] if best else None))
            cells.append(fmt_ratio(values.get("fast"), best[0] if best else None))
            cells.append(fmt_ratio(values.get("nonlin"), ceiling))
            out.append(cells)
            summary[(fn, direction, type_)][n] = {
                "nonlin": values.get("nonlin"), "fast": values.get("fast"), "best": best,
                "ceiling": ceiling}
        if ceiling is not None:
            out.append([f"*{ceiling_name} (ceiling)*", fmt(ceiling)] + [""] * (len(header) - 2))
        print(table(header, out))
        print()


def print_glance(summary, sizes):
    """The summary in a few lines (the README's): per tier, direction and cache size, how many
    float rows reach the fastest peer, their median ratio and the lowest."""
    small = [n for n in sizes if n < max(sizes)]
    lines = []
    for tier, key in (("nonlin", "nonlin"), ("fast tier", "fast")):
        for direction, label in (("fwd", "forward"), ("bwd", "backward"),
                                 ("bwdy", "backward from y")):
            for n in small:
                ratios = []
                for (fn, d, type_), by_size in summary.items():
                    cell = by_size.get(n)
                    if d == direction and type_ == "float" and cell and cell["best"] \
                            and cell.get(key):
                        ratios.append((cell[key] / cell["best"][0], fn))
                if not ratios:
                    continue
                ratios.sort()
                reached = sum(1 for r, _ in ratios if r >= 1.0)
                median = statistics.median(r for r, _ in ratios)
                low = ratios[0]
                lines.append([f"{tier}, {label}", size_label(n), str(len(ratios)),
                              str(reached), f"{median:.2f}x", f"{low[0]:.2f}x ({low[1]})"])
    if not lines:
        return
    print("## At a glance: nonlin against the fastest peer\n")
    print("Float rows, elements/ns of nonlin over the fastest peer of the same row measured in the "
          "same run (> 1: nonlin faster).\n")
    print(table(["rows", "size", "functions", "at or above 1.00x", "median", "lowest"], lines))
    print()


def print_summary(summary, sizes):
    """One line per function and direction: nonlin / fastest peer at the cache sizes, nonlin /
    the bandwidth ceiling at the largest; the goals are >= 1.0x and >= 0.9x."""
    if not summary:
        return []
    small = [n for n in sizes if n < max(sizes)]
    big = max(sizes)
    print("## Summary: nonlin against the fastest peer and the bandwidth ceiling\n")
    print("Ratios of elements/ns measured in the same run (> 1: nonlin faster). Goals: >= 1.00x "
          f"the fastest peer at {', '.join(size_label(n) for n in small)}; >= 0.90x the ceiling "
          f"(memcpy forward, read2write1 backward) at {size_label(big)}.\n")
    header = ["function", "direction", "type"]
    header += [f"{size_label(n)} vs fastest peer" for n in small]
    header += [f"{size_label(big)} vs ceiling"]
    header += [f"fast tier, {size_label(n)}" for n in small]
    out = []
    misses = []
    for (fn, direction, type_), by_size in summary.items():
        cells = [fn, direction, type_]
        for n in small:
            cell = by_size.get(n)
            if cell and cell["best"] and cell["nonlin"]:
                ratio = cell["nonlin"] / cell["best"][0]
                cells.append(f"{ratio:.2f}x ({cell['best'][1]})")
                if ratio < 1.0:
                    misses.append(f"{direction}/{fn}/{type_} at {size_label(n)}: "
                                  f"{ratio:.2f}x of {cell['best'][1]}")
            else:
                cells.append("-")
        cell = by_size.get(big)
        if cell and cell["ceiling"] and cell["nonlin"]:
            ratio = cell["nonlin"] / cell["ceiling"]
            cells.append(f"{ratio:.2f}x")
            if ratio < 0.9:
                misses.append(f"{direction}/{fn}/{type_} at {size_label(big)}: "
                              f"{ratio:.2f}x of the ceiling")
        else:
            cells.append("-")
        for n in small:
            cell = by_size.get(n)
            if cell and cell["best"] and cell.get("fast"):
                cells.append(f"{cell['fast'] / cell['best'][0]:.2f}x")
            else:
                cells.append("")
        out.append(cells)
    print(table(header, out))
    print()
    print("### Rows that miss a goal (default tier)\n")
    for line in misses or ["none"]:
        print(f"- {line}")
    print()
    return misses


def print_gated(rows, sizes):
    """The gated units at the sizes they were run at: nonlin, the act's own nonlin span kernel for
    scale, and the peers' gated kernels (bench/peers/, peer::gated) under their names."""
    def name(direction, unit, variant, n):
        return f"{direction}/{unit}/float/{variant}/{n}"

    present = [n for n in sizes
               if any(name(d, unit, v, n) in rows
                      for d in ("fwd", "bwd") for unit, _ in GATED for v in VARIANTS)]
    if not present:
        return
    variants = [v for v in VARIANTS
                if v != "nonlin" and any(name(d, unit, v, n) in rows for d in ("fwd", "bwd")
                                         for unit, _ in GATED for n in present)]
    peers = [v for v in variants if v in PEERS]
    print("## Gated units, out = value * act(gate) (float, separate value and gate spans; "
          "elements/ns)\n")
    print("Elements are outputs H. \"nonlin act alone\": nonlin's span kernel of the act at the same size "
          "(one input array instead of two; its backward writes one gradient, the gated backward "
          "two: d_value = dy act(gate), d_gate = dy value act'(gate)). The peers write the unit "
          "with their own primitives: one fused loop or expression (fastmath, eigen, sleef, xsimd), "
          "or oneDNN's jit eltwise and binary_mul primitives chained (2 forward, 4 backward). "
          "nonlin bf16: the same kernels on bfloat16 arrays.\n")
    # nonlin's kernels on bf16 arrays, where the run has them (value, gate, dy and the gradients
    # in bf16, computed in float, each result correctly rounded).
    bf16 = any(f"{d}/{unit}/bf16/nonlin/{n}" in rows
               for d in ("fwd", "bwd") for unit, _ in GATED for n in present)
    header = ["direction", "unit", "act", "H", "nonlin", "nonlin act alone"]
    header += ["nonlin bf16"] if bf16 else []
    header += variants
    header += ["fastest peer", "nonlin / fastest peer"]
    out = []
    for direction, label in (("fwd", "forward"), ("bwd", "backward")):
        for unit, act in GATED:
            for n in present:
                values = {v: per_ns(rows.get(name(direction, unit, v, n)))
                          for v in ["nonlin"] + variants}
                if all(value is None for value in values.values()):
                    continue
                best = max(((values[v], v) for v in peers if values[v] is not None), default=None)
                out.append([label, unit, act, size_label(n), fmt(values.get("nonlin")),
                            fmt(per_ns(rows.get(name(direction, act, "nonlin", n))))]
                           + ([fmt(per_ns(rows.get(f"{direction}/{unit}/bf16/nonlin/{n}")))]
                              if bf16 else [])
                           + [fmt(values[v]) for v in variants]
                           + [best[1] if best else "-",
                              fmt_ratio(values.get("nonlin"), best[0] if best else None)])
    print(table(header, out))
    print()


def write_plot_data(rows, functions, path, size=262144):
    """Tab-separated ratios to the fastest peer at one size, float, of nonlin's default tier and
    of its fast tier, one line per function and direction (fwd, bwd), for scripts/plot.gp; "-"
    where there is no peer or no fast tier."""
    with open(path, "w", encoding="utf-8") as out:
        out.write("label\tnonlin\tfast\n")
        for direction in ("fwd", "bwd"):
            for fn in functions:
                nonlin = per_ns(rows.get(f"{direction}/{fn}/float/nonlin/{size}"))
                fast = per_ns(rows.get(f"{direction}/{fn}/float/fast/{size}"))
                peers = [per_ns(rows.get(f"{direction}/{fn}/float/{p}/{size}")) for p in PEERS]
                peers = [v for v in peers if v]
                if nonlin is None or not peers:
                    continue
                best = max(peers)
                cells = [f"{nonlin / best:.4f}", "-" if fast is None else f"{fast / best:.4f}"]
                out.write(f"{fn}:{direction}\t" + "\t".join(cells) + "\n")


def main(argv):
    plot_data = None
    if len(argv) == 4 and argv[2] == "--plot-data":
        plot_data = argv[3]
        argv = argv[:2]
    if len(argv) != 2:
        print("usage: python3 bench/report.py BENCH_JSON [--plot-data FILE]  "
              "(e.g. build/bench/bench.json)", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        data = json.load(handle)
    rows = collect(data.get("benchmarks", []))

    sizes = set()
    functions = set()
    for name in rows:
        parts = name.split("/")
        if len(parts) == 5 and parts[0] in ("fwd", "bwd", "bwdy") and parts[4].isdigit():
            functions.add(parts[1])
            sizes.add(int(parts[4]))
        elif len(parts) == 3 and parts[0] in ("memcpy", "read2write1") and parts[2].isdigit():
            sizes.add(int(parts[2]))
    sizes = sorted(sizes)
    functions = ordered_functions(functions - {unit for unit, _ in GATED}, data.get("context", {}))
    if plot_data:
        write_plot_data(rows, functions, plot_data)

    print("# nonlin benchmarks\n")
    print_context(data.get("context", {}))
    print("Throughput in elements per nanosecond (higher is better), every figure from one run "
          "of nonlin_bench on this machine. nonlin: the span kernel (SIMD); scalar: a loop of the "
          "nonlin functor on one scalar at a time (not vectorized, not a peer); std: a plain loop "
          "of the textbook std:: formula; fast: nonlin's opt-in fast tier (nonlin/fast.hpp); "
          "fastmath: the same loop built with -ffast-math (glibc "
          "libmvec); eigen, sleef, xsimd, onednn: each library's own primitives "
          "(bench/peers/). Ceilings: memcpy (forward traffic) and read2write1 (dx = x + dy, the "
          "backward's traffic) over the same element count. The std backward of step (dx = 0) "
          "and identity (dx = dy) compiles to memset and memmove.\n")
    if any(name.startswith("error/") for name in rows) or any(
            f"fwd/{fn}/float/nonlin/{n}" in rows for fn in GELUS for n in sizes):
        print_gelu(rows, sizes)

    summary = defaultdict(dict)
    details = io.StringIO()
    with contextlib.redirect_stdout(details):
        for direction, type_, title in DIRECTIONS:
            print_direction(rows, direction, type_, title, sizes, functions, summary)
    print_glance(summary, sizes)
    print_summary(summary, sizes)
    print_softmax(rows)
    print_gated(rows, sizes)
    print_storage16(rows, sizes, functions)
    print(details.getvalue(), end="")
    return 0


def print_storage16(rows, sizes, functions):
    """The span kernels on bf16 and fp16 arrays beside nonlin's float kernels and the convert
    baseline (widen to float, float kernel, narrow: three passes), elements/ns."""
    if not any(f"fwd/{fn}/bf16/nonlin/{n}" in rows for fn in functions for n in sizes):
        return
    print("## 16-bit storage (bf16, fp16 arrays; elements/ns)\n")
    header = ["direction", "function"]
    for n in sizes:
        header += [f"bf16 {size_label(n)}", f"fp16 {size_label(n)}", f"float {size_label(n)}",
                   f"onednn bf16 {size_label(n)}"]
    out = []
    ratios = defaultdict(list)  # (direction, size, what) -> ratios
    for direction, label in (("fwd", "forward"), ("bwd", "backward"), ("bwdy", "from output")):
        for fn in functions:
            cells = [label, fn]
            found = False
            for n in sizes:
                b = per_ns(rows.get(f"{direction}/{fn}/bf16/nonlin/{n}"))
                h = per_ns(rows.get(f"{direction}/{fn}/fp16/nonlin/{n}"))
                f = per_ns(rows.get(f"{direction}/{fn}/float/nonlin/{n}"))
                c = per_ns(rows.get(f"{direction}/{fn}/bf16/convert/{n}"))
                o = per_ns(rows.get(f"{direction}/{fn}/bf16/onednn/{n}"))
                found = found or b is not None
                cells += [fmt(b), fmt(h), fmt(f), fmt(o)]
                for what, num, den in (("bf16 / float", b, f), ("fp16 / float", h, f),
                                       ("bf16 / convert", b, c), ("bf16 / onednn bf16", b, o)):
                    if num and den:
                        ratios[(direction, n, what)].append(num / den)
            if found:
                out.append(cells)
    print(table(header, out))
    print()
    summary = []
    for direction, label in (("fwd", "forward"), ("bwd", "backward"), ("bwdy", "from output")):
        for what in ("bf16 / float", "fp16 / float", "bf16 / convert", "bf16 / onednn bf16"):
            cells = [label, what]
            for n in sizes:
                values = ratios.get((direction, n, what))
                cells.append(f"{statistics.median(values):.2f}x (min {min(values):.2f}x)"
                             if values else "-")
            if any(cell != "-" for cell in cells[2:]):
                summary.append(cells)
    print(table(["direction", "ratio, median over functions"] +
                [size_label(n) for n in sizes], summary))
    memcpy = {n: per_ns(rows.get(f"memcpy/bf16/{n}")) for n in sizes}
    print("\n(convert: widen the bf16 arrays to float arrays, nonlin's float kernel, narrow the "
          "result, with nonlin's SIMD conversions. memcpy of bf16 arrays, elements/ns: " +
          ", ".join(f"{size_label(n)} {fmt(memcpy[n])}" for n in sizes) + ".)\n")


def print_softmax(rows):
    """softmax/<dir>/<function>/float/<variant>/<C> rows (bench/softmax_bench.cpp)."""
    names = [n.split("/") for n in rows if n.startswith("softmax/")]
    if not names:
        return
    cols = sorted({int(p[5]) for p in names if len(p) == 6 and p[5].isdigit()})
    variants = [v for v in VARIANTS if any(len(p) == 6 and p[4] == v for p in names)]
    peers = [v for v in variants if v in PEERS]
    print("## Softmax over rows (float, 256k elements per run; elements/ns)\n")
    header = ["direction", "function", "C"] + variants + ["fastest peer", "nonlin / fastest peer"]
    if "fast" in variants:
        header.append("fast / fastest peer")
    out = []
    for type_ in ("float", "masked", "wide", "bf16"):
        for direction, label in (("fwd", "forward"), ("bwdy", "backward from output")):
            for function in ("softmax", "log_softmax"):
                for c in cols:
                    values = {v: per_ns(rows.get(
                        f"softmax/{direction}/{function}/{type_}/{v}/{c}")) for v in variants}
                    best = max(((values[v], v) for v in peers if values[v] is not None),
                               default=None)
                    if all(value is None for value in values.values()):
                        continue
                    out.append([f"{label} ({type_})", function, str(c)]
                               + [fmt(values[v]) for v in variants]
                               + [best[1] if best else "-",
                                  fmt_ratio(values.get("nonlin"), best[0] if best else None)]
                               + ([fmt_ratio(values.get("fast"), best[0] if best else None)]
                                  if "fast" in variants else []))
    print(table(header, out))
    print("\n(std: a plain loop, softmax only: max, std::exp, sum, divide forward; dot product, "
          "then y (dy - dot) backward. Backward from the output: every variant is given nonlin's "
          "y of the same logits and the same dy; the peers write softmax dx = y (dy - sum dy y) "
          "and log_softmax dx = dy - e^y sum dy with their own primitives (oneDNN: "
          "softmax_v2_backward). fast: nonlin::fast::softmax and fast::log_softmax. "
          "masked: float logits with the second half of every row -inf (an attention mask); "
          "wide: float logits uniform in [-96, 96), most terms below the normal range: where "
          "exp's results underflow, an operation that produces them takes a microcode assist "
          "on Intel cores.)\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
