#!/usr/bin/env python3
"""Heap use of each stage, from one DHAT profile.

    bench/dhat-stages.py DHAT_JSON PACKETS

Each allocation site belongs to the stage whose entry function (as in
callgrind-stages.py) is on its call stack; the rest is the run's own (the
command line, output, threads). Per stage: blocks and bytes allocated per
packet, and the bytes it held at the run's peak of heap. Run DHAT with
--num-callers=50 or so, so every stack reaches its stage.
Standard-library Python.
"""
import json
import re
import sys
from collections import defaultdict

from importlib.machinery import SourceFileLoader
from pathlib import Path

stages_module = SourceFileLoader(
    "callgrind_stages", str(Path(__file__).with_name("callgrind-stages.py"))
).load_module()


def main():
    path, packets = sys.argv[1], int(sys.argv[2])
    with open(path) as profile:
        dhat = json.load(profile)
    matchers = [
        (stage, re.compile(r"(: |::)(" + "|".join(patterns) + r") \("))
        for stage, patterns in stages_module.STAGES
    ]
    frames = dhat["ftbl"]
    totals = defaultdict(lambda: [0, 0, 0])
    for site in dhat["pps"]:
        stage = next(
            (name for name, matcher in matchers if any(matcher.search(frames[f]) for f in site["fs"])),
            "the rest",
        )
        total = totals[stage]
        total[0] += site["tbk"]
        total[1] += site["tb"]
        total[2] += site["gb"]
    print("stage\tblocks per packet\tbytes per packet\tMB at peak")
    for stage in [name for name, _ in stages_module.STAGES] + ["the rest"]:
        blocks, allocated, at_peak = totals[stage]
        print(f"{stage}\t{blocks / packets:.2f}\t{allocated / packets:.0f}\t{at_peak / 1e6:.1f}")
    whole = [sum(t[i] for t in totals.values()) for i in range(3)]
    print(f"whole run\t{whole[0] / packets:.2f}\t{whole[1] / packets:.0f}\t{whole[2] / 1e6:.1f}")


if __name__ == "__main__":
    main()
