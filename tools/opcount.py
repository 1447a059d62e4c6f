#!/usr/bin/env python3
"""Instructions per batch in the hot loop of every float span kernel (Python 3 standard library).

    python3 tools/opcount.py [--compiler clang++] [--march x86-64-v3] [--include DIR]
                             [--json FILE] [--bench build/bench/bench.json]

Compiles tools/opcount/kernels.cpp with the flags of the benchmarks (scripts/bench.sh: Release,
-std=c++20 -O3 -DNDEBUG -march=native -falign-loops=64), disassembles the object with objdump
and, for each nonlin_opcount_* function, finds the natural loops (from the dominator tree) of the
function and of every function it calls or tail-calls, and keeps the innermost ones that step by
whole batches (the step of the register that indexes the arrays; an unrolled loop counts per
batch). The hot loop of an elementwise or gated kernel is the one with the most vector
instructions; softmax rows take several passes, so every such loop with at least --min-vector
vector instructions is listed, labelled with the function it sits in and its number there.
Counts are per batch (16 floats with AVX-512, 8 with AVX2, 4 with SSE).

The model column is the one measured in the project's TRAPS notes ("Speed on Zen 4"): an FP
operation, compare-to-mask, fpclass, rcp14, scalef or conversion costs 1 cycle, a division or
square root 2 (they run beside the FMA pipes; divides are not among the FP operations), a store
1, a logic, blend, masked move, shuffle, integer or mask operation 0.5; loads, register moves and
loop control are free.

The chain columns are the model that predicts this Zen 5's cycles (docs/design.md, "Where an
operation sits in the chain decides its cost"): "wait" is the sum, over the vector operations
and stores of one batch on the loop's fall-through path, of the cycle at which each one's last
input is ready (latencies of the LATENCY table; loads ready at 0), and "chain cycles" is
0.21 per operation + 0.0102 per cycle of wait, the two costs tools/isa_probe/chain_probe.cpp
measured. Against nonlin_bench at 4K floats it is within 8% on 30 of 38 transcendental
kernels (31 within 9%: gelu_exact backward 1.08; median 0.98); it misses where a cold branch's block lies on the fall-through path
(silu, gelu_quick, gelu_tanh and mish backward: predicted 24-52% slow), where loads and stores
bind (hardsigmoid and hardswish backward, predicted 28-45% fast) and on gelu_tanh forward (11%
slow).

The port column is the model that predicts the Intel Xeon (Emerald Rapids, Golden Cove cores) the
VM ran on from 2026-12-07: "port cycles" = the cycles the fall-through path's vector operations
hold ports 0 and 5, the only two that take 512-bit operations (PORTS: most take either, compares,
vfpclass, permutes and conversions port 5 only, shifts and vrcp14 port 0 only), or the divider's,
whichever binds. Against that day's docs run (4K floats, el/ns at the probe's 3.52 GHz) it
predicts 35 of the 59 elementwise and gated kernels that take at least 4 cycles a batch within
10% and 50 within 15% (median 0.92: the machine reaches about 92% of the bound), the chain model
23 within 10%: there every operation costs its port time wherever it sits in the chain. It
misses mish (0.69-0.78) and the log1p forwards (softplus, log_sigmoid: 0.74).

A call inside a hot loop is a finding (the callee reloads its constants, spills, and runs
vzeroupper): it goes to stderr and to the notes, and the callee's instructions (and its own
callees') are added to the loop's counts, as what runs per batch. A hot loop of an elementwise
or gated kernel without a store other than to the stack is reported too (the wrong loop was
picked). Stores and loads on the stack (spills, and the dead stores of the "const local
aggregates" trap) are among the stores and loads and shown in the notes; so are branches inside
the loop (both paths are counted) and scalar FP operations (GCC's vectorised scalar tails).
The functors are compile-time constants here, as in the benchmarks: a parameter the compiler
folds (softmax's temperature 1) costs nothing in these counts.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tools" / "opcount" / "kernels.cpp"
PREFIX = "nonlin_opcount_"

# Mnemonics without a leading "v" (VEX/EVEX and SSE spell them alike), by prefix.
DIVIDE = ("div", "sqrt")
FP = ("fmadd", "fmsub", "fnmadd", "fnmsub", "mul", "add", "sub", "max", "min", "cmp", "comi",
      "ucomi", "fpclass", "rcp", "rsqrt", "scalef", "rndscale", "getexp", "getmant", "round",
      "cvt", "range", "reduce", "fixupimm", "hadd", "hsub", "dp")
# "p" is every integer SIMD operation (pternlog, pxor, padd, psll, pcmp, pblendm, pbroadcast,
# pperm...); "k" the mask-register operations.
LOGIC = ("p", "k", "and", "or", "xor", "blend", "perm", "shuf", "unpck", "insert", "extract",
         "broadcast", "expand", "compress", "movmsk", "movsh", "movsl", "movddup", "movhl", "movlh")

VECTOR_REGISTER = re.compile(r"\b([xyz])mm\d+\b")
MASK_REGISTER = re.compile(r"\bk[0-7]\b")
LANES = {"z": 16, "y": 8, "x": 4}  # floats per register
# A direct jump or call operand: "afc0 <name+0x100>" (the name may contain '<' and '>').
TARGET = re.compile(r"^([0-9a-f]+) <.*>$")
# Calls that do not return: what follows them is another block, not their continuation.
NORETURN = re.compile(r"__cxa_throw|__throw_|_Unwind_Resume|__stack_chk_fail|\babort\b")


class Insn:
    def __init__(self, address, mnemonic, operands):
        self.address = address
        self.mnemonic = mnemonic
        self.operands = operands
        self.target = None  # the jump or call target: (section or symbol, address within it)
        self.text = f"{mnemonic} {','.join(operands)}".strip()

    @property
    def is_vector(self):
        return bool(VECTOR_REGISTER.search(self.text) or MASK_REGISTER.search(self.text))


class Function:
    def __init__(self, name, section, start):
        self.name = name
        self.section = section
        self.start = start
        self.insns = []

    @property
    def frame_pointer(self):
        """Whether rbp is this function's frame pointer (then [rbp...] is the stack)."""
        return any(i.mnemonic == "mov" and i.operands == ["rbp", "rsp"] for i in self.insns)


def compile_object(args, obj):
    # scripts/bench.sh's build: Release (-O3 -DNDEBUG), nonlin_set_dev_flags, -falign-loops=64.
    flags = ["-std=c++20", "-O3", "-DNDEBUG", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow",
             "-Wconversion", f"-march={args.march}", "-falign-loops=64", f"-I{args.include}",
             "-c", str(SOURCE), "-o", str(obj)]
    if subprocess.run([args.compiler, *flags], check=False).returncode != 0:
        sys.exit(f"opcount: {args.compiler} could not compile {SOURCE.relative_to(ROOT)}")


def disassemble(obj):
    """{function name: Function} from objdump -drC."""
    text = subprocess.run(["objdump", "-drC", "--no-show-raw-insn", "-M", "intel", str(obj)],
                          check=True, capture_output=True, text=True).stdout
    functions = {}
    section = current = None
    for line in text.splitlines():
        if m := re.match(r"^Disassembly of section (\S+):$", line):
            section = m.group(1)
        elif m := re.match(r"^([0-9a-f]+) <(.*)>:$", line):
            current = functions.setdefault(m.group(2), Function(m.group(2), section,
                                                                int(m.group(1), 16)))
        elif current is None:
            continue
        elif m := re.match(r"^\s+[0-9a-f]+: R_X86_64_(?:PLT32|PC32)\t(.*?)([+-]0x[0-9a-f]+)?$",
                           line):
            # In an object the linker fills in a call's displacement: the relocation names the
            # callee, as symbol + addend + 4 (the displacement is the last 4 bytes of the call).
            insn = current.insns[-1] if current.insns else None
            if insn and (insn.mnemonic == "call" or insn.mnemonic.startswith("j")):
                insn.target = (m.group(1), int(m.group(2) or "0", 16) + 4)
        elif m := re.match(r"^\s+([0-9a-f]+):\t(\S+)\s*(.*)$", line):
            mnemonic, rest = m.group(2), re.sub(r"\s+#.*", "", m.group(3)).strip()
            insn = Insn(int(m.group(1), 16), mnemonic, rest.split(",") if rest else [])
            if (mnemonic == "call" or mnemonic.startswith("j")) and (t := TARGET.match(rest)):
                insn.target = (section, int(t.group(1), 16))
            current.insns.append(insn)
    return functions


def resolver(functions):
    """target -> the Function it lands in (a section offset or a symbol), or None."""
    by_section = {}
    for f in functions.values():
        by_section.setdefault(f.section, []).append(f)

    def resolve(target):
        where, address = target
        if where in functions and address == 0:
            return functions[where]
        for f in by_section.get(where, []):
            if f.insns and f.start <= address <= f.insns[-1].address:
                return f
        return None

    return resolve


def reachable(functions, resolve, entry):
    """The entry and every function of the object it calls or jumps to, transitively."""
    order, todo = [], [functions[entry]]
    while todo:
        f = todo.pop(0)
        if f in order:
            continue
        order.append(f)
        todo += [g for i in f.insns if i.target and (g := resolve(i.target)) not in (None, f)]
    return order


def basic_blocks(f, resolve):
    """[(first, last) instruction index] of f's basic blocks and their successor lists."""
    index = {insn.address: k for k, insn in enumerate(f.insns)}
    jumps = {}  # instruction index -> (successor instruction indices)
    for k, insn in enumerate(f.insns):
        inside = insn.target and resolve(insn.target) is f
        target = [index[insn.target[1]]] if inside else []
        if insn.mnemonic in ("ret", "ud2") or (insn.mnemonic == "call" and insn.target
                                                and NORETURN.search(insn.target[0])):
            jumps[k] = []
        elif insn.mnemonic.startswith("jmp"):
            jumps[k] = target  # an indirect or tail jump leaves the function
        elif insn.mnemonic.startswith("j"):
            jumps[k] = target + [k + 1]
    leaders = sorted({0} | {t for ts in jumps.values() for t in ts} | {k + 1 for k in jumps})
    leaders = [k for k in leaders if k < len(f.insns)]
    blocks = [(first, last - 1) for first, last in zip(leaders, leaders[1:] + [len(f.insns)])]
    block_of = {first: b for b, (first, _) in enumerate(blocks)}
    successors = [[block_of[t] for t in jumps.get(last, [last + 1]) if t in block_of]
                  for _, last in blocks]
    return blocks, successors


def innermost_loops(f, resolve):
    """[sorted instruction indices] of each innermost natural loop of f: the loops found from
    the dominator tree, so that a loop entered in its middle (a rotated loop) is one loop."""
    blocks, successors = basic_blocks(f, resolve)
    predecessors = [[] for _ in blocks]
    for b, succ in enumerate(successors):
        for s in succ:
            predecessors[s].append(b)
    # Reverse postorder from the entry, then Cooper, Harvey and Kennedy's iterative dominators.
    order, seen, stack = [], {0}, [(0, iter(successors[0]))]
    while stack:
        b, it = stack[-1]
        n = next(it, None)
        if n is None:
            order.append(b)
            stack.pop()
        elif n not in seen:
            seen.add(n)
            stack.append((n, iter(successors[n])))
    order.reverse()
    rank = {b: k for k, b in enumerate(order)}
    idom = {0: 0}

    def intersect(a, b):
        while a != b:
            while rank[a] > rank[b]:
                a = idom[a]
            while rank[b] > rank[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            done = [p for p in predecessors[b] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(b) != new:
                idom[b], changed = new, True

    def dominates(a, b):
        while b != a and b != 0:
            b = idom[b]
        return b == a

    # A back edge u -> h (h dominates u) closes a loop: h and every block reaching u without
    # passing h. Back edges to one header make one loop.
    loops = {}
    for u in order:
        for h in successors[u]:
            if dominates(h, u):
                body, todo = {h, u}, [u] if u != h else []
                while todo:
                    for p in predecessors[todo.pop()]:
                        if p not in body and p in idom:
                            body.add(p)
                            todo.append(p)
                loops[h] = loops.get(h, set()) | body
    bodies = list(loops.values())
    return [sorted(k for b in body for k in range(blocks[b][0], blocks[b][1] + 1))
            for body in bodies if not any(other < body for other in bodies)]


def memory_operands(insn):
    return [k for k, op in enumerate(insn.operands) if "[" in op]


def on_stack(operand, frame_pointer):
    base = re.search(r"\[(\w+)", operand).group(1)
    return base == "rsp" or (frame_pointer and base == "rbp")


def classify(insn):
    """The class of one instruction: fp, div, store, load, logic, call or other."""
    m = insn.mnemonic
    if m == "call":
        return "call"
    if m == "lea" or "nop" in m:
        return "other"
    memory = memory_operands(insn)
    if 0 in memory and (m.startswith(("mov", "vmov", "vextract", "vpextr", "vcompress",
                                      "vpcompress", "vpmov", "vscatter", "vpscatter"))):
        return "store"
    if not insn.is_vector:
        return "other"
    base = m[1:] if m.startswith("v") else m
    if base.startswith("mov"):
        if memory:
            return "load"
        # A masked move is a blend; a plain register move is renamed away.
        return "logic" if "{k" in insn.operands[0] else "other"
    if base.startswith("broadcast") and memory:
        return "load"
    if base.startswith(DIVIDE):
        return "div"
    if base.startswith(FP):
        return "fp"
    if base.startswith(LOGIC):
        return "logic"
    return "other"


def count(insns, frame_pointer):
    """Counter of classes, folded loads, stack traffic and output stores over insns."""
    c = Counter()
    for insn in insns:
        kind = classify(insn)
        c[kind] += 1
        c["total"] += 1
        c["vector"] += insn.is_vector
        c["branch"] += insn.mnemonic.startswith("j") and insn.mnemonic != "jmp"
        memory = memory_operands(insn)
        if kind not in ("store", "load", "other") and any(k > 0 for k in memory):
            c["load"] += 1  # a load folded into an operation
        if kind in ("fp", "div") and insn.mnemonic.endswith(("ss", "sd")):
            c["scalar fp"] += 1
        if kind == "store":
            c["stack store" if on_stack(insn.operands[0], frame_pointer) else "output store"] += 1
        elif kind != "other" and any(on_stack(insn.operands[k], frame_pointer) for k in memory):
            c["stack load"] += 1
    return c


# Zen 5 latencies in cycles (tools/isa_probe, docs/design.md "The machine"), by mnemonic
# prefix without the leading "v"; the first match wins. A compare into a mask is taken as 5 (a
# compare feeding a blend measured 7-8, the blend 2). Loads and register moves take 0 here: a
# load issues as soon as its address is known, whatever the FP chain does.
LATENCY = (("div", 10), ("sqrt", 14), ("fmadd", 4), ("fmsub", 4), ("fnmadd", 4),
           ("fnmsub", 4), ("mul", 3), ("cmp", 5), ("fpclass", 5), ("rcp", 5), ("rsqrt", 5),
           ("perm", 5), ("scalef", 3), ("rndscale", 3), ("getexp", 3), ("getmant", 3),
           ("cvt", 4), ("range", 2), ("reduce", 3), ("fixupimm", 2), ("ternlog", 2),
           ("blend", 2), ("broadcast", 3), ("shuf", 2), ("unpck", 2), ("insert", 3),
           ("extract", 3), ("k", 1), ("p", 1), ("and", 1), ("or", 1), ("xor", 1), ("add", 2),
           ("sub", 2), ("max", 2), ("min", 2), ("mov", 2))
# What one operation costs, fitted to tools/isa_probe/chain_probe.cpp (vmaxps added to sigmoid's
# chain: 0.30 cycles beside it, 0.94 at its end, 63 cycles deeper): a cycle per this many
# operations, plus one per this many cycles that the operations wait for their inputs.
CHAIN_OPS_PER_CYCLE = 1 / 0.21
CHAIN_WAIT_PER_CYCLE = 1 / 0.0102
SIMD_REGISTER = re.compile(r"\b(?:[xyz]mm(\d+)|(k[0-7]))\b")
READS_DESTINATION = ("fmadd", "fmsub", "fnmadd", "fnmsub", "pternlog", "fixupimm")


def latency(insn):
    base = insn.mnemonic[1:] if insn.mnemonic.startswith("v") else insn.mnemonic
    if base.startswith("mov"):
        # A masked move merges into its destination (a blend); a plain move is renamed away.
        return 2 if "{k" in insn.operands[0] else 0
    for prefix, cycles in LATENCY:
        if base.startswith(prefix):
            return cycles
    return 1


def registers(operand):
    """The vector and mask registers an operand names: zmm3 and xmm3 are one register."""
    return [f"v{m.group(1)}" if m.group(1) else m.group(2)
            for m in SIMD_REGISTER.finditer(operand)]


def chain_wait(insns):
    """(operations, cycles they wait): the loop's vector operations and stores in order, each
    ready when the last of its inputs is (loads and the registers the loop does not write are
    ready at 0); the sum over them of that ready time, the cycles they sit in the scheduler."""
    ready, ops, wait = {}, 0, 0.0
    for insn in sorted(insns, key=lambda i: i.address):
        kind = classify(insn)
        if not insn.is_vector or kind in ("other", "call") and not insn.mnemonic.startswith(
                ("vmov", "mov")):
            continue
        dest = insn.operands[0] if insn.operands else ""
        memory = memory_operands(insn)
        if kind == "store" or 0 in memory:
            sources, targets = insn.operands, []
        else:
            merge = "{k" in dest and "{z}" not in dest
            reads_dest = insn.mnemonic.lstrip("v").startswith(READS_DESTINATION) or merge
            sources = insn.operands[1:] + ([re.sub(r"\{k\d\}|\{z\}", "", dest)]
                                           if reads_dest else [])
            sources += re.findall(r"\{(k[0-7])\}", dest)
            targets = registers(re.sub(r"\{k\d\}|\{z\}", "", dest))
        start = max((ready.get(r, 0.0) for op in sources for r in registers(op)), default=0.0)
        if kind == "load" or (kind == "other" and latency(insn) == 0):
            end = start if kind == "other" else 0.0  # a register move passes its input on
        else:
            ops += 1
            wait += start
            end = start + latency(insn)
        for r in targets:
            ready[r] = end
    return ops, wait


# Intel Golden Cove (the Emerald Rapids Xeon of 2026-12-07), zmm: every 512-bit operation issues
# on port 0 or port 5, one a cycle each (tools/isa_probe: FMA, add, mul, max, scalef, ternlog and
# blends 2 a cycle; compares into a mask, vfpclass, vpermps, vpmovzxwd, shuffles and the
# conversions 1, on port 5; shifts 1, on port 0; vrcp14ps one per 2 cycles, vcvtne2ps2bf16 one
# per 2.2, vdivps one per 9.6: the divider is a unit of its own, a bound beside the ports
# (DIVIDER_CYCLES), its uops taken as 3 on either port). By mnemonic prefix without the leading
# "v", the first match wins: (port, cycles it holds the port); "05" is either port. Anything else
# vector is "05".
DIVIDER_CYCLES = 9.6
PORTS = (("div", "05", 3), ("sqrt", "05", 3), ("rcp", "0", 2), ("rsqrt", "0", 2),
         ("cvtne2ps2bf16", "5", 2.2), ("cvtneps2bf16", "5", 2), ("cmp", "5", 1),
         ("pcmp", "5", 1), ("fpclass", "5", 1), ("ptestm", "5", 1), ("ptestnm", "5", 1),
         ("perm", "5", 1), ("pperm", "5", 1), ("pmovzx", "5", 1), ("pmovsx", "5", 1),
         ("unpck", "5", 1), ("punpck", "5", 1), ("pack", "5", 1), ("shuf", "5", 1),
         ("pshuf", "5", 1), ("insert", "5", 1), ("extract", "5", 1), ("compress", "5", 2),
         ("pcompress", "5", 2), ("expand", "5", 2), ("cvt", "5", 1), ("psll", "0", 1),
         ("psrl", "0", 1), ("psra", "0", 1), ("kortest", "0", 1), ("ktest", "0", 1))


def port_cycles(insns):
    """Cycles the vector operations of insns hold Golden Cove's ports 0 and 5 (see PORTS), the
    two balanced where they can be: max(port 0, port 5, (all) / 2, the divider's cycles). Loads,
    stores, register moves and broadcasts from memory are not counted (they have ports of their
    own)."""
    p0 = p5 = either = divider = 0.0
    for insn in insns:
        kind = classify(insn)
        if not insn.is_vector or kind in ("load", "store", "call") or (
                kind == "other" and latency(insn) == 0 and insn.mnemonic.lstrip("v").startswith(
                    ("mov", "lea"))):
            continue
        base = insn.mnemonic[1:] if insn.mnemonic.startswith("v") else insn.mnemonic
        divider += DIVIDER_CYCLES if base.startswith(DIVIDE) else 0
        port, cycles = next(((port, cycles) for prefix, port, cycles in PORTS
                             if base.startswith(prefix)), ("05", 1))
        if base.startswith("kmov") and "k" in insn.operands[0] and not any(
                MASK_REGISTER.fullmatch(op) for op in insn.operands[1:]):
            port = "5"  # into a mask from a general register
        if port == "0":
            p0 += cycles
        elif port == "5":
            p5 += cycles
        else:
            either += cycles
    return max(p0, p5, (p0 + p5 + either) / 2, divider)


def gpr(name):
    """The 64-bit register that a general register name is part of (eax -> rax), or None."""
    if re.fullmatch(r"r(?:[a-d]x|[sd]i|[bs]p|8|9|1[0-5])", name):
        return name
    if m := re.fullmatch(r"(r(?:8|9|1[0-5]))[dwb]", name):
        return m.group(1)
    if m := re.fullmatch(r"e?([a-d])x|([a-d])[lh]", name):
        return f"r{m.group(1) or m.group(2)}x"
    if m := re.fullmatch(r"e?(si|di|bp|sp)l?", name):
        return f"r{m.group(1)}"
    return None


def register_steps(loop):
    """{register: how much one iteration adds to it}, for the registers that only move by
    constants (add, sub, lea, inc, dec, and copies of each other) on the way round the loop."""
    value = {}  # register -> (register at the top of the iteration, offset), None if unknown

    def current(r):
        return value.get(r, (r, 0))

    for insn in loop:
        ops, m = insn.operands, insn.mnemonic
        dest = gpr(ops[0]) if ops else None
        if dest is None or m in ("cmp", "test", "bt", "push") or m.startswith("j"):
            continue
        source = gpr(ops[1]) if len(ops) > 1 else None
        imm = ops[1] if len(ops) > 1 and re.fullmatch(r"-?0x[0-9a-f]+", ops[1]) else None
        lea = re.fullmatch(r"\[(\w+)([+-]0x[0-9a-f]+)?\]", ops[1]) if m == "lea" else None
        old = current(dest)
        if m == "mov" and source and dest == ops[0]:  # a 64-bit copy
            value[dest] = current(source)
        elif m in ("add", "sub") and imm and old:
            # objdump prints a sign-extended immediate as 64 bits: sub rax,0xffffffffffffff80.
            step = int(imm, 16) - (1 << 64 if int(imm, 16) >= 1 << 63 else 0)
            value[dest] = (old[0], old[1] + step * (1 if m == "add" else -1))
        elif m in ("inc", "dec") and old:
            value[dest] = (old[0], old[1] + (1 if m == "inc" else -1))
        elif lea and gpr(lea.group(1)) and (base := current(lea.group(1))):
            value[dest] = (base[0], base[1] + int(lea.group(2) or "0", 16))
        else:
            value[dest] = None
    return {r: v[1] for r, v in value.items() if v and v[0] == r and v[1]}


def batches_per_iteration(loop):
    """Batches one iteration handles, from the step of the register that indexes the arrays
    (or of one it is copied from), or None if no such register steps by a constant."""
    lanes = max((LANES[w] for i in loop for w in VECTOR_REGISTER.findall(i.text)), default=None)
    if lanes is None:
        return None
    steps = register_steps(loop)
    for insn in loop:  # a copy ("mov rdx,r14") steps with its source
        if insn.mnemonic in ("mov", "lea") and len(insn.operands) == 2 and gpr(insn.operands[0]):
            source = re.sub(r"^\[(\w+).*", r"\1", insn.operands[1])
            if source in steps and insn.operands[0] not in steps:
                steps[insn.operands[0]] = steps[source]
    memory = " ".join(i.operands[k] for i in loop for k in memory_operands(i))
    for register, step in steps.items():
        if re.search(rf"\b{register}\*4\b", memory):  # an element index
            return abs(step) / lanes
        if re.search(rf"\[{register}\b|\+{register}(?:\*1)?[\]+-]", memory):  # a byte pointer
            return abs(step) / 4 / lanes
    return None


def top_level(text):
    """(index, char) of text outside template argument lists."""
    depth = 0
    for k, ch in enumerate(text):
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and ch not in "<>":
            yield k, ch


def short_name(name):
    """'row_sum<true>' for 'float nonlin::detail::row_sum<xsimd::avx512bw, true, float>(...)'."""
    name = re.sub(r"\[abi:[^\]]*\]", "", name.split(" [clone")[0])
    name = name[:next((k for k, ch in top_level(name) if ch == "("), len(name))]
    name = name[max((k + 1 for k, ch in top_level(name) if ch == " "), default=0):]
    cuts = [k for k, ch in top_level(name) if name.startswith("::", k)]
    parts = [name[a:b].lstrip(":") for a, b in zip([0] + cuts, cuts + [len(name)])]
    # The target's inline namespace (nonlin/isa.hpp) says nothing here: one target per object.
    name = "::".join(p for p in parts
                     if p not in ("nonlin", "detail", "math") and not p.startswith("isa_"))
    stem, _, args = name.partition("<")
    flags = re.findall(r"(?:^|,)\s*(true|false|\d+)\s*(?=,|>$)", args)
    return stem + (f"<{','.join(flags)}>" if flags else "")


def with_callees(f, insns, resolve, depth=0):
    """count(insns) plus, for every call among them, the callee's instructions (as if inlined:
    they run once per call) and its own callees'; and the names of the callees called."""
    c, calls = count(insns, f.frame_pointer), []
    for insn in insns:
        if insn.mnemonic == "call" and insn.target:
            callee = resolve(insn.target)
            calls.append(callee.name if callee else insn.target[0])
            if callee and depth < 4:
                inner, nested = with_callees(callee, callee.insns, resolve, depth + 1)
                c.update(inner)
                calls += nested
                c["callee insns"] += len(callee.insns)
                # All of the callee is counted: with branches in it, that is an upper bound.
                c["callee branches"] += sum(i.mnemonic.startswith("j") and i.mnemonic != "jmp"
                                            for i in callee.insns)
    return c, calls


def hot_path(f, indices, resolve):
    """The loop's instructions on its fall-through path: from the target of its back edge, past
    every conditional jump not taken, to the back edge. The compiler lays the likely path out
    that way ([[unlikely]] blocks and the patches near a root are jumped to and come back), so
    the cold blocks, which the counts include, are not in the chain. All of the loop where the
    walk does not close."""
    inside = set(indices)
    index = {insn.address: k for k, insn in enumerate(f.insns)}

    def target(k):
        insn = f.insns[k]
        if insn.target and resolve(insn.target) is f:
            return index.get(insn.target[1])
        return None

    heads = [target(k) for k in indices if f.insns[k].mnemonic.startswith("j")
             and target(k) in inside and target(k) <= k]
    if not heads:
        return [f.insns[k] for k in indices]
    head = min(heads)
    path, k = [], head
    while k in inside and len(path) <= len(indices):
        path.append(f.insns[k])
        insn = f.insns[k]
        if insn.mnemonic.startswith("j"):
            t = target(k)
            if t == head:
                return path
            if insn.mnemonic.startswith("jmp"):
                k = t if t is not None else -1
                continue
            # A conditional jump whose fall-through leaves the loop is the loop's own test,
            # taken to go on (GCC lays a cold block after the body and enters the back edge so).
            if k + 1 not in inside and t in inside:
                k = t
                continue
        k += 1
    return [f.insns[k] for k in indices]


def analyse_loop(f, indices, resolve, kernel, warnings):
    loop = [f.insns[k] for k in indices]
    c, calls = with_callees(f, loop, resolve)
    for callee in calls:
        warnings.append(f"{kernel}: CALL in the hot loop ({short_name(f.name)}): {callee}")
    batches = batches_per_iteration(loop)
    per_batch = {k: v / batches for k, v in c.items()}
    # The chain per batch of the fall-through path: its own step (where a cold block repeats
    # the stores and the index update, the whole loop's step counts both copies).
    hot = hot_path(f, indices, resolve)
    hot_batches = batches_per_iteration(hot) or batches
    ops, wait = chain_wait(hot)
    per_batch["chain ops"], per_batch["chain wait"] = ops / hot_batches, wait / hot_batches
    per_batch["port cycles"] = port_cycles(hot) / hot_batches
    return {
        "function": short_name(f.name),
        "address": f"{f.section}+{loop[0].address:#x}",
        "batches_per_iteration": batches,
        "counts": per_batch,
        "calls": calls,
        "model_cycles": per_batch.get("fp", 0) + 2 * per_batch.get("div", 0)
        + per_batch.get("store", 0) + 0.5 * per_batch.get("logic", 0),
        "chain_cycles": per_batch["chain ops"] / CHAIN_OPS_PER_CYCLE
        + per_batch["chain wait"] / CHAIN_WAIT_PER_CYCLE,
    }


def analyse(functions, resolve, entry, min_vector, warnings):
    """The reported loops of one kernel: one hot loop, or all large ones for softmax rows."""
    kernel = display_name(entry)
    candidates = []  # (vector insns, function, loop number in it, instruction indices)
    for f in reachable(functions, resolve, entry):
        n = 0
        for indices in sorted(innermost_loops(f, resolve)):
            # Only loops that step by whole batches: not the per-row or per-lane loops.
            batches = batches_per_iteration([f.insns[k] for k in indices])
            if batches is not None and batches >= 1 and batches == int(batches):
                n += 1
                c, _ = with_callees(f, [f.insns[k] for k in indices], resolve)
                candidates.append((c["vector"], f, n, indices))
    if not candidates:
        warnings.append(f"{kernel}: no loop over batches found")
        return []
    rows = "softmax" in entry
    chosen = ([c for c in candidates if c[0] >= min_vector] if rows else
              [max(candidates, key=lambda c: c[0])])
    loops = []
    for _, f, n, indices in chosen:
        loop = analyse_loop(f, indices, resolve, kernel, warnings)
        loop["kernel"] = kernel
        loop["label"] = f"{kernel} [{loop['function']} #{n}]" if rows else kernel
        if not rows and not loop["counts"].get("output store"):
            warnings.append(f"{kernel}: the chosen loop stores no output: wrong loop?")
        loops.append(loop)
    return loops


def source_order(entry):
    """Sort key: the order of kernels.cpp's list, then fwd, bwd, bwdy."""
    names = re.findall(r"^[A-Z_]+\((\w+),", SOURCE.read_text(), re.M)
    direction, name = entry[len(PREFIX):].split("_", 1)
    return (names.index(name) if name in names else len(names),
            ["fwd", "bwd", "bwdy"].index(direction))


def display_name(entry):
    """fwd/fast::swish(1.5) for nonlin_opcount_fwd_fast_swish_1_5."""
    direction, name = entry[len(PREFIX):].split("_", 1)
    name = re.sub(r"^fast_", "fast::", name)
    name = re.sub(r"_(\d+)_(\d+)$", r"(\1.\2)", name)
    return f"{direction}/{name}"


def bench_throughput(path, size):
    """{kernel: (n, elements/ns)} of nonlin's float rows in Google Benchmark JSON (read as
    bench/report.py reads it), at n = size, else at the largest n the run has (the gated
    units run at 4096 only, softmax at C = 1000 and 32000). Names match exactly, so
    swish(1.5) gets no figure: the benchmarks run swish with beta = 1."""
    sys.path.insert(0, str(ROOT / "bench"))
    sys.dont_write_bytecode = True  # no __pycache__ in bench/
    import report  # bench/report.py: the benchmarks' own reader of their names

    with open(path, encoding="utf-8") as f:
        rows = report.collect(json.load(f).get("benchmarks", []))
    sizes = {}
    for bench_name, row in rows.items():
        parts = bench_name.removeprefix("softmax/").split("/")  # dir/function/type/variant/n
        if len(parts) != 5 or parts[2] != "float" or parts[3] not in ("nonlin", "fast"):
            continue
        direction, function, _, variant, n = parts
        function = f"fast::{function}" if variant == "fast" else function
        sizes.setdefault(f"{direction}/{function}", {})[int(n)] = report.per_ns(row)
    return {kernel: (n, by_size[n]) for kernel, by_size in sizes.items()
            for n in [size if size in by_size else max(by_size)]}


def notes(loop):
    c, out = loop["counts"], []
    if loop["batches_per_iteration"] != 1:
        out.append(f"{loop['batches_per_iteration']:g} batches/iteration")
    # Conditional jumps in the loop besides its back edge: both paths are in the counts.
    inside = c.get("branch", 0) - c.get("callee branches", 0) - 1 / loop["batches_per_iteration"]
    if inside > 0:
        out.append(f"{inside:g} branch(es) inside, both paths counted")
    if not c.get("output store"):
        out.append("no output store")
    if c.get("scalar fp"):
        out.append(f"{c['scalar fp']:g} of the FP ops scalar (ss)")
    if c.get("stack store") or c.get("stack load"):
        out.append(f"stack: {c.get('stack store', 0):g} st, {c.get('stack load', 0):g} ld")
    for callee, times in Counter(loop["calls"]).items():
        out.append(f"**CALL** {short_name(callee)}" + (f" x{times}" if times > 1 else ""))
    if c.get("callee insns"):
        branches = f", {c['callee branches']:g} branches" if c.get("callee branches") else ""
        out.append(f"counts include {c['callee insns']:g} callee insns{branches}")
    return "; ".join(out)


def print_table(loops, throughput):
    header = ["kernel", "insns/batch", "fp", "div", "store", "load", "logic/blend", "call",
              "model cycles", "wait", "chain cycles", "port cycles"]
    if throughput is not None:
        header.append("el/ns")
    header.append("notes")
    print("| " + " | ".join(header) + " |")
    print("|---|" + "--:|" * (len(header) - 2) + "---|")
    for loop in loops:
        c = loop["counts"]
        cells = [loop["label"]] + [f"{c.get(k, 0):g}" for k in
                                   ("total", "fp", "div", "store", "load", "logic", "call")]
        cells.append(f"{loop['model_cycles']:g}")
        cells.append(f"{c['chain wait']:.0f}")
        cells.append(f"{loop['chain_cycles']:.1f}")
        cells.append(f"{c['port cycles']:.1f}")
        if throughput is not None:  # the kernel's figure, on the first of its loops
            n, per_ns = throughput.get(loop["kernel"], (None, None))
            first = loop is next(other for other in loops if other["kernel"] == loop["kernel"])
            cells.append(f"{per_ns:.3g} @{n}" if per_ns is not None and first else "-")
        cells.append(notes(loop))
        print("| " + " | ".join(cells) + " |")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compiler", default="g++")
    parser.add_argument("--march", default="native")
    parser.add_argument("--include", default=str(ROOT / "include"),
                        help="nonlin's include directory (another checkout to compare)")
    parser.add_argument("--object", help="analyse this object instead of compiling one")
    parser.add_argument("--min-vector", type=int, default=2,
                        help="softmax: list the loops with at least this many vector insns")
    parser.add_argument("--json", help="write the loops and counts here")
    parser.add_argument("--bench", help="Google Benchmark JSON of scripts/bench.sh: add el/ns")
    parser.add_argument("--bench-size", type=int, default=262144,
                        help="elementwise size for el/ns (gated and softmax: their largest)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(args.object) if args.object else Path(tmp) / "kernels.o"
        if not args.object:
            compile_object(args, obj)
        functions = disassemble(obj)
    resolve = resolver(functions)

    warnings = []
    loops = []
    # The entries, not their cold parts (nonlin_opcount_fwd_softmax.cold).
    entries = sorted((name for name in functions if re.fullmatch(PREFIX + r"\w+", name)),
                     key=source_order)
    for entry in entries:
        loops += analyse(functions, resolve, entry, args.min_vector, warnings)
    throughput = bench_throughput(args.bench, args.bench_size) if args.bench else None

    print(f"Hot loops of {SOURCE.relative_to(ROOT)}: {args.compiler} -march={args.march}; "
          "counts per batch; model = fp + 2 div + store + 0.5 logic/blend (TRAPS.md, Zen 4); "
          "chain cycles = 0.21 ops + 0.0102 wait (Zen 5); port cycles = ports 0 and 5 or the "
          "divider, whichever binds (Intel Golden Cove)\n")
    print_table(loops, throughput)
    for warning in dict.fromkeys(warnings):
        print(f"opcount: WARNING: {warning}", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"compiler": args.compiler, "march": args.march, "loops": loops}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
