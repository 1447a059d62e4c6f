#!/usr/bin/env python3
"""Before -> after on a shared, noisy machine: two nonlin_bench binaries run in alternation.

    tools/bench_compare.py BASE_BENCH NEW_BENCH --filter 'fwd/sigmoid/float/nonlin/262144'

Each round runs both binaries once (in alternating order, so that a slow moment does not land on
one side only) with the same filter; the table shows each side's median items/s over the rounds
and the ratio new / base. Build the base from a worktree of the old commit, e.g.
    git worktree add /tmp/base HEAD~1 && cmake -S /tmp/base -B /tmp/base/build ... (as bench.sh)
Never run it beside a build or the accuracy tool.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys


def run(binary, filter_regex, min_time):
    out = subprocess.run(
        [binary, f"--benchmark_filter={filter_regex}", f"--benchmark_min_time={min_time}",
         "--benchmark_format=json"],
        check=True, capture_output=True, text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1")).stdout
    return {b["name"]: b["items_per_second"] for b in json.loads(out)["benchmarks"]
            if "items_per_second" in b}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--filter", required=True, help="Google Benchmark filter regex")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-time", default="0.05")
    args = parser.parse_args()
    samples = {"base": {}, "new": {}}
    for round_index in range(args.rounds):
        order = [("base", args.base), ("new", args.new)]
        if round_index % 2:
            order.reverse()
        for side, binary in order:
            for name, rate in run(binary, args.filter, args.min_time).items():
                samples[side].setdefault(name, []).append(rate)
    names = [n for n in samples["base"] if n in samples["new"]]
    if not names:
        sys.exit("bench_compare.py: no benchmark ran on both sides")
    print(f"{args.rounds} rounds, medians, elements/ns\n")
    print("| benchmark | base | new | new / base |")
    print("|---|--:|--:|--:|")
    for name in names:
        base = statistics.median(samples["base"][name]) / 1e9
        new = statistics.median(samples["new"][name]) / 1e9
        print(f"| {name} | {base:.3f} | {new:.3f} | {new / base:.2f} |")


if __name__ == "__main__":
    main()
