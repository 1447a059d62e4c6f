#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""isa_mix_symbols: the weak symbols of nonlin (not of its tests) that two or more of the given
objects define must have the same bytes and relocations in each: the linker keeps one of them for
all, so a body that differs between targets would run in a TU built for another target. Usage:
shared_symbols.py NAME=OBJECT ... (the objects of tests/isa_mix, one per x86-64 level).
The definitions are read from the ELF sections (readelf), not disassembled: objdump took ~10 s
an object here, most of the test stage's longest test, for the one or few symbols shared."""
import re
import subprocess
import sys

# Mangled names of nonlin's own entities: _Z, optional local-entity / guard prefixes, a nested
# name whose first component is `nonlin`, and whose second is not `test`.
NONLIN = re.compile(r"^_Z(?:GV|TH|TW)?Z?N[rVKRO]*6nonlin(?!4test)")


def run(*args):
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


SECTION = re.compile(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)")
RELOCATIONS = re.compile(r"^Relocation section '([^']+)'")


def weak_symbols(obj):
    """{mangled name: (section index, offset, size)} of nonlin's weak and unique definitions."""
    out = {}
    for line in run("readelf", "-sW", obj).splitlines():
        parts = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(parts) == 8 and parts[4] in ("WEAK", "UNIQUE") and parts[6].isdigit() \
                and NONLIN.match(parts[7]):
            out[parts[7]] = (int(parts[6]), int(parts[1], 16), int(parts[2], 0))
    return out


def bodies(obj, symbols):
    """{mangled name: (bytes, relocations)} of the given symbols of weak_symbols(obj): the
    definition's bytes as stored (zeros where a relocation goes) and its relocations (offset
    within the definition, type, target + addend), which name the callees and the constants."""
    if not symbols:
        return {}
    sections = {}
    for line in run("readelf", "-SW", obj).splitlines():
        m = SECTION.match(line)
        if m:
            sections[int(m[1])] = (m[2], m[3], int(m[4], 16), int(m[5], 16))
    relocations, current = {}, None
    for line in run("readelf", "-rW", obj).splitlines():
        m = RELOCATIONS.match(line)
        if m:
            current = relocations.setdefault(m[1].removeprefix(".rela"), [])
        elif current is not None and line[:1] in "0123456789abcdef" and line.strip():
            fields = line.split(None, 4)
            if len(fields) >= 3:
                current.append((int(fields[0], 16), fields[2], " ".join(fields[3:])))
    with open(obj, "rb") as f:
        data = f.read()
    out = {}
    for name, (index, value, size) in symbols.items():
        section, kind, offset, _ = sections[index]
        stored = b"" if kind == "NOBITS" else data[offset + value:offset + value + size]
        relocs = tuple((at - value, kind, target) for at, kind, target in
                       relocations.get(section, []) if value <= at < value + size)
        out[name] = (size, stored, relocs)
    return out


def main():
    objects = dict(arg.split("=", 1) for arg in sys.argv[1:])
    weak = {label: weak_symbols(obj) for label, obj in objects.items()}
    seen = {}
    for label, names in weak.items():
        for n in names:
            seen.setdefault(n, []).append(label)
    shared = sorted(n for n, labels in seen.items() if len(labels) > 1)
    code = {label: bodies(obj, {n: weak[label][n] for n in shared if n in weak[label]})
            for label, obj in objects.items()}
    differing = []
    for n in shared:
        versions = {code[label].get(n) for label in seen[n]}
        if len(versions) > 1:
            differing.append(n)
    demangled = subprocess.run(["c++filt"], input="\n".join(differing), capture_output=True,
                               text=True).stdout.splitlines() if differing else []
    for mangled, readable in zip(differing, demangled):
        print(f"differs between {', '.join(seen[mangled])}: {readable}")
    total = sum(len(names) for names in weak.values())
    print(f"{total} weak nonlin symbols in {len(objects)} objects; {len(shared)} shared between "
          f"them, {len(differing)} of those with different code")
    if total == 0:
        print("no weak nonlin symbols found: the objects or the name pattern are not what this "
              "check expects")
        return 1
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
