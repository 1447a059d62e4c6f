#!/usr/bin/env bash
# Runs the main job (scripts/bench.sh) and writes what it measured into the docs: the function
# table (from the catalog, with the measured bounds), the accuracy tables and the summary, GELU
# and softmax tables into README.md, the full report into docs/benchmarks.md and the figures
# into docs/img/. Nothing in those sections is typed by hand.
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
cp build/bench/gelu_errors.svg build/bench/throughput.svg docs/img/
ACCURACY_FILE="$accuracy" python3 - <<'PY'
import os
import re
from pathlib import Path

readme = Path("README.md")
text = readme.read_text()
report = Path("build/bench/report.md").read_text()
accuracy = Path(os.environ["ACCURACY_FILE"]).read_text().strip()

def section(markdown, title_start):
    """The '## title...' section of the report, without its heading."""
    parts = re.split(r"^## ", markdown, flags=re.M)
    for part in parts:
        if part.startswith(title_start):
            return part.split("\n", 1)[1].strip()
    return "(not measured in this run)"

machine = section(report, "Machine and build")
bench = "\n\n".join([
    "Machine and build:\n\n" + machine,
    section(report, "Summary"),
    "Softmax over rows (float; elements/ns):\n\n" + section(report, "Softmax over rows"),
    "GELU approximations (float, nonlin SIMD kernel; elements/ns):\n\n"
    + section(report, "GELU approximations"),
])

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
text = replace(text, "accuracy", accuracy.strip())
text = replace(text, "benchmarks", bench)
readme.write_text(text)
print("README.md, docs/benchmarks.md and docs/img/ updated")
PY
