#!/usr/bin/env python3
"""Instructions per packet of each stage, from one callgrind profile.

    bench/callgrind-stages.py CALLGRIND_OUT PACKETS [--functions PATTERN]

A stage's cost is the inclusive cost of its entry functions (their own
instructions and everything they call), summed over every file their code
was inlined from; a function's calls to itself are not counted twice. With
--functions, lists every function whose name matches PATTERN (a regular
expression) with its inclusive cost instead: for finding a stage's entry
functions in another build. Standard-library Python.
"""
import re
import sys
from collections import defaultdict

# Each stage's entry functions, by the end of their path: the crates moved
# between modules over time (tcpwhy::pipeline became pipeline, its reader
# moved to pipeline::threads), the functions kept their names. The
# tracker's `process` is inlined into its caller, so what it calls (the host
# numbering, the analysis, the sweep) are the tracker's entries.
STAGES = [
    ("read and decode", [r"pipeline::(threads::)?read"]),
    ("tracker", [
        r"Tracker::process", r"Tracker::analyze", r"Tracker::sweep_at", r"HostNumbering::note(_on)?",
        r"Tracker::finish(_all)?", r"Tracker::drain_events",
    ]),
    ("transactions and ledger", [r"transactions::Builder::observe", r"transactions::Builder::finish"]),
    ("timeline", [r"timeline::Timeline::\w+"]),
    # With the parts of the diagnosis it runs on a thread beside it.
    ("diagnose", [
        r"diagnose::diagnose", r"diagnose::patterns::context", r"diagnose::detectors::structural",
        r"diagnose::describe::summary::summary",
    ]),
]


def inclusive_costs(path):
    """Inclusive instruction count of every function, by name."""
    names = {}
    own = defaultdict(int)
    calls = defaultdict(int)
    total = 0
    current = callee = None
    in_call = False

    def named(field):
        match = re.match(r"\((\d+)\)(?: (.*))?", field)
        if not match:
            return field
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
        return names[match.group(1)]

    with open(path) as profile:
        for line in profile:
            if line.startswith("fn="):
                current = named(line[3:].rstrip("\n"))
            elif line.startswith("cfn="):
                callee = named(line[4:].rstrip("\n"))
            elif line.startswith("calls="):
                in_call = True
            elif line.startswith("summary:"):
                total = int(line.split()[1])
            elif line[:1].isdigit() or line[:1] in "+-*":
                fields = line.split()
                cost = int(fields[1]) if len(fields) > 1 else 0
                if in_call:
                    if callee != current:
                        calls[current] += cost
                    in_call = False
                else:
                    own[current] += cost
    costs = {name: own[name] + calls[name] for name in set(own) | set(calls)}
    return costs, total


def stage_costs(costs):
    """Each stage's inclusive cost: the sum over its entry functions."""
    result = []
    for stage, patterns in STAGES:
        matcher = re.compile(r"(^|::)(" + "|".join(patterns) + r")$")
        result.append((stage, sum(cost for name, cost in costs.items() if matcher.search(name))))
    return result


def main():
    path, packets = sys.argv[1], int(sys.argv[2])
    costs, total = inclusive_costs(path)
    if len(sys.argv) > 4 and sys.argv[3] == "--functions":
        pattern = re.compile(sys.argv[4])
        for name, cost in sorted(costs.items(), key=lambda item: -item[1]):
            if pattern.search(name):
                print(f"{cost / packets:12.1f}  {name}")
        return
    stages = stage_costs(costs)
    missing = [stage for stage, cost in stages if cost == 0]
    if missing:
        sys.exit(f"callgrind-stages: no entry function of {', '.join(missing)} in {path}; "
                 "find the new names with --functions and add them to STAGES")
    for stage, cost in stages + [("whole run", total)]:
        print(f"{stage}\t{cost / packets:.0f}")


if __name__ == "__main__":
    main()
