#!/usr/bin/env bash
# Runs the main job (scripts/bench.sh) and writes what it measured into the docs: the function
# table (from the catalog, with the measured bounds), an accuracy summary and the speed summary
# into README.md, the full accuracy tables into docs/accuracy.md, the full report into
# docs/benchmarks.md and the figures into docs/img/. Nothing in those sections is typed by hand.
#   scripts/update-readme.sh [--accuracy FILE] [nonlin_bench arguments...]
#   NONLIN_README_REUSE=1 scripts/update-readme.sh --accuracy FILE
# --accuracy FILE: take the accuracy tables from FILE, the output of an earlier
#   nonlin_accuracy run of the same commit (the exhaustive one takes about 40 minutes:
#   build/bench/bench/nonlin_accuracy --exhaustive --samples 10000000 --peer-stride 256).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

accuracy=build/bench/accuracy.md
if [[ ${1:-} == --accuracy ]]; then
  accuracy=$2
  shift 2
  [[ -s $accuracy ]] || { echo "update-readme.sh: $accuracy is empty or missing" >&2; exit 1; }
  cp "$accuracy" /tmp/nonlin-accuracy.md
  accuracy=/tmp/nonlin-accuracy.md
fi

# NONLIN_README_REUSE=1: write what the last scripts/bench.sh run left in build/bench/ instead of
# running it again (e.g. after a long --exhaustive accuracy run of the same commit).
if [[ ${NONLIN_README_REUSE:-0} != 1 ]]; then
  bash scripts/bench.sh "$@"
fi
mkdir -p docs/img
cp build/bench/report.md docs/benchmarks.md
cp build/bench/gelu_errors.svg build/bench/throughput.svg build/bench/accuracy.svg docs/img/
ACCURACY_FILE="$accuracy" python3 - <<'PY'
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

readme = Path("README.md")
text = readme.read_text()
report = Path("build/bench/report.md").read_text()
accuracy = Path(os.environ["ACCURACY_FILE"]).read_text().strip()

sys.path.insert(0, "bench")
from storage16_summary import section  # the '## title...' section of a report, no heading

machine = section(report, "Machine and build")
bench = "\n\n".join([
    section(report, "At a glance"),
    "<details><summary>Machine and build of this run</summary>\n\n" + machine + "\n\n</details>",
])

def accuracy_summary(accuracy_text):
    """Per library, over the default-tier functions it offers (float, max ULP over the run's
    inputs): how many, the worst forward and derivative, and how many stay within 4 ulp in both.
    From the figure's data (bench/accuracy_figure.py), where inf and > 1e8 are 1e8."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "accuracy.md"
        source.write_text(accuracy_text)
        subprocess.run(["python3", "bench/accuracy_figure.py", str(source), tmp], check=True)
        forward = [l.split("\t") for l in (Path(tmp) / "accuracy_forward.tsv").read_text().splitlines()]
        derivative = [l.split("\t") for l in (Path(tmp) / "accuracy_derivative.tsv").read_text().splitlines()]
    libraries = forward[0][1:]
    def value(cell):
        return None if cell == "-" else float(cell)
    def shown(v):
        return "≥ 1e8 or inf" if v >= 1e8 else (f"{v:.2f}" if v < 1e4 else f"{v:.1e}")
    lines = ["| library | functions | worst forward | worst derivative | within 4 ulp (both) |",
             "|---|--:|--:|--:|--:|"]
    for k, library in enumerate(libraries, start=1):
        pairs = []
        for f_row, d_row in zip(forward[1:], derivative[1:]):
            f, d = value(f_row[k]), value(d_row[k])
            if f is not None:
                pairs.append((f_row[0], f, d if d is not None else 0.0))
        if not pairs:
            continue
        worst_f = max(pairs, key=lambda p: p[1])
        worst_d = max(pairs, key=lambda p: p[2])
        within = sum(1 for _, f, d in pairs if f <= 4 and d <= 4)
        lines.append(f"| {library} | {len(pairs)} | {shown(worst_f[1])} ({worst_f[0]}) | "
                     f"{shown(worst_d[2])} ({worst_d[0]}) | {within} |")
    return ("Float, max ULP over the inputs of the run's first line below (0 is drawn as 0.1 in the "
            "figure); a library's functions are those it offers.\n\n" + "\n".join(lines)
            + "\n\n" + accuracy_text.splitlines()[0])

def replace(text, name, body):
    pattern = re.compile(rf"(<!-- {name}:begin -->\n).*?(\n<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"README.md has no {name} markers")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)

# The accuracy tool ends with the function table (catalog rows and measured bounds).
accuracy, _, functions = accuracy.partition("\n### Functions\n")
if not functions.strip():
    raise SystemExit("the accuracy output has no '### Functions' table")
text = replace(text, "functions", functions.strip())
text = replace(text, "accuracy", accuracy_summary(accuracy.strip()))
text = replace(text, "benchmarks", bench)
storage16 = Path("build/bench/accuracy16.md")
if storage16.exists():
    summary = subprocess.run(["python3", "bench/storage16_summary.py", str(storage16),
                              "build/bench/report.md"], check=True, capture_output=True,
                             text=True).stdout.strip()
    text = replace(text, "storage16", summary)
    Path("docs/storage16.md").write_text(subprocess.run(
        ["python3", "bench/storage16_summary.py", str(storage16), "build/bench/report.md",
         "--docs"], check=True, capture_output=True, text=True).stdout)
readme.write_text(text)
details = Path("docs/accuracy.md")
details.write_text(replace(details.read_text(), "accuracy", accuracy.strip()))
print("README.md, docs/accuracy.md, docs/benchmarks.md, docs/storage16.md and docs/img/ updated")
PY
