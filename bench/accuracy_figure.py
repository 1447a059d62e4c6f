#!/usr/bin/env python3
"""The data of the accuracy figure (scripts/plot.gp, docs/img/accuracy.svg) from the output of
nonlin_accuracy: max ULP per default-tier function in float, nonlin and each peer, forward and
derivative, as two tab-separated files.

    python3 bench/accuracy_figure.py build/bench/accuracy.md build/bench

writes accuracy_forward.tsv and accuracy_derivative.tsv into the directory. Values for a log
scale: 0 becomes 0.1 (the axis floor), inf and anything above 1e8 become 1e8; "-" where a peer
does not offer the function.
"""
import math
import sys
from pathlib import Path

FLOOR = 0.1
CEILING = 1e8


def tables(text):
    """Every markdown table of the text as a list of rows (lists of cells), header first."""
    found, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def ulp(cell):
    """The max ULP of a cell such as '1.51 at -16.97' or '5.9e+06', for a log axis."""
    word = cell.split()[0] if cell.split() else "-"
    if word == "-":
        return None
    value = float(word)
    if math.isinf(value) or value > CEILING:
        return CEILING
    return max(value, FLOOR)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    text = Path(argv[1]).read_text(encoding="utf-8")
    found = tables(text)
    nonlin = next(t for t in found if t[0][:2] == ["function", "fwd f32 max ULP"])
    peers = next((t for t in found if t[0][0] == "function" and "eigen" in t[0]), None)
    ours = {row[0]: (ulp(row[1]), ulp(row[2])) for row in nonlin[1:]}
    names = [row[0] for row in nonlin[1:] if not row[0].startswith("fast::")]
    peer_names = peers[0][1:] if peers else []
    theirs = {}
    for row in (peers[1:] if peers else []):
        theirs[row[0]] = []
        for cell in row[1:]:
            parts = [p.strip() for p in cell.split("/")]
            theirs[row[0]].append((ulp(parts[0]), ulp(parts[1]) if len(parts) > 1 else None))
    out = Path(argv[2])
    for index, member in ((0, "forward"), (1, "derivative")):
        lines = ["\t".join(["label", "nonlin"] + peer_names)]
        for name in dict.fromkeys(names):
            cells = [ours[name][index]]
            cells += [v[index] for v in theirs.get(name, [(None, None)] * len(peer_names))]
            lines.append(name + "\t" + "\t".join("-" if v is None else f"{v:.6g}" for v in cells))
        (out / f"accuracy_{member}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
