#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""isa_mix_symbols: the weak symbols of nonlin (not of its tests) that two or more of the given
objects define must have the same code in each: the linker keeps one of them for all, so a body
that differs between targets would run in a TU built for another target. Usage:
shared_symbols.py NAME=OBJECT ... (the objects of tests/isa_mix, one per x86-64 level)."""
import re
import subprocess
import sys

# Mangled names of nonlin's own entities: _Z, optional local-entity / guard prefixes, a nested
# name whose first component is `nonlin`, and whose second is not `test`.
NONLIN = re.compile(r"^_Z(?:GV|TH|TW)?Z?N[rVKRO]*6nonlin(?!4test)")


def functions(obj, names):
    """{mangled name: normalized disassembly} of the functions `names` in the object."""
    if not names:
        return {}
    text = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", "-M", "intel", obj],
                          check=True, capture_output=True, text=True).stdout
    out, name, body = {}, None, []
    for line in text.splitlines():
        if line.endswith(">:") and " <" in line:
            if name is not None:
                out[name] = "\n".join(body)
            symbol = line[line.index(" <") + 2:-2]
            name, body = (symbol if symbol in names else None), []
        elif name is not None and line.strip():
            # Drop the address column and the address comments; keep the mnemonic, the
            # operands and the relocations (which name the callees).
            fields = line.split("\t")
            content = " ".join(f.strip() for f in fields[1:]) if len(fields) > 1 else line
            content = re.sub(r"\b[0-9a-f]+ <[^>]*>", "", content)
            content = re.sub(r"#.*$", "", content).strip()
            body.append(content)
    if name is not None:
        out[name] = "\n".join(body)
    return out


def weak_symbols(obj):
    nm = subprocess.run(["nm", "--defined-only", obj], check=True, capture_output=True,
                        text=True).stdout
    return {parts[2] for parts in (l.split() for l in nm.splitlines())
            if len(parts) == 3 and parts[1] in "WVu" and NONLIN.match(parts[2])}


def main():
    objects = dict(arg.split("=", 1) for arg in sys.argv[1:])
    weak = {label: weak_symbols(obj) for label, obj in objects.items()}
    seen = {}
    for label, names in weak.items():
        for n in names:
            seen.setdefault(n, []).append(label)
    shared = sorted(n for n, labels in seen.items() if len(labels) > 1)
    code = {label: functions(obj, set(shared)) for label, obj in objects.items()}
    differing = []
    for n in shared:
        bodies = {code[label].get(n) for label in seen[n]}
        if len(bodies) > 1:
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
