#!/usr/bin/env bash
# Runs the main job (scripts/bench.sh) and writes what it measured into the docs: the accuracy
# table into README.md, the full benchmark report into docs/benchmarks.md, and its GELU and
# softmax tables into README.md. Nothing in those sections is typed by hand.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bench.sh "$@"
mkdir -p docs
cp build/bench/report.md docs/benchmarks.md
python3 - <<'PY'
import re
from pathlib import Path

readme = Path("README.md")
text = readme.read_text()
report = Path("build/bench/report.md").read_text()
accuracy = Path("build/bench/accuracy.md").read_text().strip()

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
    "GELU approximations (float, nonlin SIMD kernel; elements/ns):\n\n" + section(report, "GELU approximations"),
    "Forward, float (elements/ns):\n\n" + section(report, "Forward, float"),
    "Backward from x, float (elements/ns):\n\n" + section(report, "Backward from x"),
    "Softmax over rows (float; elements/ns):\n\n" + section(report, "Softmax over rows"),
])

def replace(text, name, body):
    pattern = re.compile(rf"(<!-- {name}:begin -->\n).*?(\n<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"README.md has no {name} markers")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)

text = replace(text, "accuracy", accuracy)
text = replace(text, "benchmarks", bench)
readme.write_text(text)
print("README.md and docs/benchmarks.md updated")
PY
