#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/<target>/ deterministically (fixed seeds): a few inputs per
target, float and double, small and large, so that libFuzzer starts from long inputs with every
kind of value. Rerun after changing how a target reads its bytes:  python3 fuzz/make_corpus.py"""
import pathlib
import random

HERE = pathlib.Path(__file__).resolve().parent
TARGETS = {"elementwise_fuzz": 0xE1, "softmax_fuzz": 0x50, "glu_fuzz": 0x61}


def seeds(salt):
    rng = random.Random(salt)
    out = []
    for i, size in enumerate([48, 160, 400, 900, 1600, 3000]):
        data = bytearray(rng.getrandbits(8) for _ in range(size))
        data[0] = i & 1  # float, double, float, ...
        out.append(bytes(data))
    # All-zero bytes: the smallest valid everything (float, n = 0); then only specials.
    out.append(bytes(64))
    out.append(bytes([1]) + bytes(rng.randrange(0, 80) for _ in range(1200)))
    return out


for target, salt in TARGETS.items():
    directory = HERE / "corpus" / target
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("seed-*"):
        old.unlink()
    for i, data in enumerate(seeds(salt)):
        (directory / f"seed-{i:02d}").write_bytes(data)
