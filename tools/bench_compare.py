#!/usr/bin/env python3
"""Before -> after on a shared, noisy machine: two nonlin_bench binaries run in alternation.

    tools/bench_compare.py BASE_BENCH NEW_BENCH --filter 'fwd/sigmoid/float/nonlin/262144'

Each round runs every selected benchmark on both binaries back to back (in alternating order, so
that a slow moment does not land on one side only); the table shows each side's median items/s over the rounds
and the ratio new / base. Build the base from a worktree of the old commit, e.g.
    git worktree add /tmp/base HEAD~1 && cmake -S /tmp/base -B /tmp/base/build ... (as bench.sh)
Never run it beside a build or the accuracy tool.
"""

import argparse
import json
import os
import re
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
    # The benchmarks the filter selects, then each one on its own, the two sides back to back:
    # noise on this machine comes in bursts of seconds, which would otherwise land on one side.
    names = list(run(args.base, args.filter, "0.001"))
    for round_index in range(args.rounds):
        for name in names:
            order = [("base", args.base), ("new", args.new)]
            if round_index % 2:
                order.reverse()
            for side, binary in order:
                exact = "^" + re.escape(name) + "$"
                for got, rate in run(binary, exact, args.min_time).items():
                    samples[side].setdefault(got, []).append(rate)
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
