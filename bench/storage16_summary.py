#!/usr/bin/env python3
"""The 16-bit storage figures for README.md and docs/storage16.md, from the tools' outputs
(Python 3 standard library only):

    python3 bench/storage16_summary.py ACCURACY16 REPORT          the README section's body
    python3 bench/storage16_summary.py ACCURACY16 REPORT --docs   docs/storage16.md

ACCURACY16: the output of nonlin_accuracy --storage16 (a markdown table of misrounded counts);
REPORT: bench/report.py's output (its "16-bit storage" section). scripts/update-readme.sh runs
this; nothing it prints is typed by hand.
"""

import re
import sys
from pathlib import Path


def section(markdown, title_start):
    parts = re.split(r"^## ", markdown, flags=re.M)
    for part in parts:
        if part.startswith(title_start):
            return part.split("\n", 1)[1].strip()
    return "(not measured in this run)"


def rows(table_text):
    """The body rows of the first markdown table, as lists of cells."""
    out = []
    for line in table_text.splitlines():
        if line.startswith("| ") and not line.startswith("| function") and "---" not in line:
            out.append([c.strip() for c in line.strip().strip("|").split("|")])
    return out


def count(cell):
    """"0 (3 on a tie in double) [5]" -> (0, 3, 5): misrounded, ties in double (right or wrong),
    float rounded once."""
    m = re.match(r"(\d+)(?: \((\d+) on a tie in double\))? \[(\d+)\]", cell)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2) or 0), int(m.group(3))


def summary(accuracy, report):
    table = rows(accuracy)
    default = [r for r in table if not r[0].startswith("fast::")]
    columns = ["bf16 forward", "bf16 derivative", "fp16 forward", "fp16 derivative"]
    totals = []
    for k, name in enumerate(columns, start=1):
        cells = [count(r[k]) for r in default]
        cells = [c for c in cells if c]
        wrong = sum(c[0] for c in cells)
        ties = sum(c[1] for c in cells)
        once = sum(c[2] for c in cells)
        totals.append(f"| {name} | {len(cells)} | {wrong} | {ties} | {once} |")
    exceptions = [f"`{r[0]}` " + ", ".join(
        f"{columns[k - 1]} {count(r[k])[0]}" for k in range(1, 5) if count(r[k]) and count(r[k])[0])
        for r in default if any(count(r[k]) and count(r[k])[0] for k in range(1, 5))]
    speed = section(report, "16-bit storage")
    speed_summary = speed.split("\n\n")
    ratio_table = next((p for p in speed_summary if "ratio, median over functions" in p), "")
    first = accuracy.strip().splitlines()[0] if accuracy.strip() else ""
    lines = [
        "Every default-tier function, with its default parameters and the catalog's other "
        "instances (elu(0.5), softplus(2, 10), swish(1.5), ...), over all 65536 inputs, against "
        "MPFR (`nonlin_accuracy --storage16`; `storage16_accuracy_test` asserts it): results not "
        "correctly rounded; the results whose double recomputation lands exactly on a midpoint "
        "(the true value itself, or a tie made by double's rounding, which the functor's "
        "`side_of_true_value` decides); and how many results rounding the float result once "
        "would get wrong.",
        "",
        "| results | instances | not correctly rounded | double exactly on a midpoint "
        "| rounding float once: wrong |",
        "|---|--:|--:|--:|--:|",
        *totals,
        "",
        "Where: " + ("; ".join(exceptions) if exceptions else "none") + ".",
        "",
        "Speed, median over the functions of nonlin's 16-bit kernels against its float kernels and "
        "against the convert baseline (widen, float kernel, narrow):",
        "",
        ratio_table,
        "",
        f"Full tables: [docs/storage16.md](docs/storage16.md). {first}",
    ]
    return "\n".join(lines)


def docs(accuracy, report):
    return "\n".join([
        "# nonlin on 16-bit arrays",
        "",
        "Written by scripts/update-readme.sh from `nonlin_accuracy --storage16` and "
        "bench/report.py; not edited by hand.",
        "",
        "## Correct rounding",
        "",
        accuracy.strip(),
        "",
        "## Speed (elements/ns)",
        "",
        section(report, "16-bit storage"),
        "",
    ])


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    accuracy = Path(argv[1]).read_text()
    report = Path(argv[2]).read_text()
    print(docs(accuracy, report) if "--docs" in argv[3:] else summary(accuracy, report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
