#!/usr/bin/env python3
"""Where a callgrind profile's instructions go, by the code they belong to (for redis.sh).

    python3 callgrind_groups.py PROFILE OPERATIONS [TOP]

Prints one line per group -- swift-nio, CovenantNIO, CovenantCore, the RESP code -- with its
instructions per operation, then the TOP costliest functions of those groups. Code outside them
(the Swift runtime's retain, release, exclusivity checks and metadata look-ups, the standard
library's specializations, libc) is charged to whoever called it, in proportion to the calls'
inclusive costs, level by level, so that each group carries the runtime work it causes. What
cannot be traced to a group (the loop's own thread start, say) is reported as "unattributed".
Functions are grouped by the module in their Swift mangled name (a generic specialization
counts for the module that declares the generic code) or by their C prefix.
"""
import re
import sys
from collections import defaultdict

GROUPS = [
    # First: the example's extensions of CovenantNIO's types are mangled under those types.
    ("RESP code", re.compile(r"^\$s(16CovenantRESPCore|19CovenantRESPExample)|RESPExample|RESPCore")),
    ("swift-nio", re.compile(
        r"^\$s(8NIOPosix|7NIOCore|21NIOConcurrencyHelpers|17_NIODataStructures|11NIOEmbedded"
        r"|7Atomics|11DequeModule|12_NIOBase64)|^(c_nio_|CNIO)")),
    ("CovenantNIO", re.compile(r"^\$s11CovenantNIO")),
    ("CovenantCore", re.compile(r"^\$s12CovenantCore|^cov_")),
]


def group_of(name):
    for group, pattern in GROUPS:
        if pattern.search(name):
            return group
    return None


def parse(path):
    names = {}
    self_cost = defaultdict(int)
    # (caller, callee) -> inclusive cost of the calls
    edges = defaultdict(int)
    current = None
    callee = None
    expect_call_cost = False

    def name_of(spec):
        match = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not match:
            return spec
        key, name = match.groups()
        if name is not None:
            names[key] = name
        return names.get(key, key)

    with open(path) as profile:
        for line in profile:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                current = name_of(line[3:])
            elif line.startswith("cfn="):
                callee = name_of(line[4:])
            elif line.startswith("calls="):
                expect_call_cost = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                fields = line.split()
                cost = int(fields[1]) if len(fields) > 1 else 0
                if expect_call_cost:
                    edges[(current, callee)] += cost
                    expect_call_cost = False
                elif current is not None:
                    self_cost[current] += cost
    return self_cost, edges


def main():
    path, operations = sys.argv[1], int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    self_cost, edges = parse(path)
    callers = defaultdict(list)
    for (caller, callee), cost in edges.items():
        if caller != callee and cost > 0:
            callers[callee].append((caller, cost))
    charged = defaultdict(int)  # per attributable function: self + runtime work it caused
    pending = defaultdict(int)
    for name, cost in self_cost.items():
        if group_of(name):
            charged[name] += cost
        else:
            pending[name] += cost
    unattributed = 0
    for _ in range(30):
        moved = defaultdict(int)
        for name, cost in pending.items():
            incoming = callers.get(name)
            if not incoming or cost == 0:
                unattributed += cost
                continue
            total = sum(weight for _, weight in incoming)
            for caller, weight in incoming:
                share = cost * weight / total
                if group_of(caller):
                    charged[caller] += share
                else:
                    moved[caller] += share
        pending = moved
        if not pending:
            break
    unattributed += sum(pending.values())
    totals = defaultdict(float)
    for name, cost in charged.items():
        totals[group_of(name)] += cost
    for group in ["swift-nio", "CovenantNIO", "CovenantCore", "RESP code"]:
        print(f"{group}\t{totals[group] / operations:.0f}")
    print(f"unattributed\t{unattributed / operations:.0f}")
    print("--")
    for name, cost in sorted(charged.items(), key=lambda item: -item[1])[:top]:
        print(f"{cost / operations:.0f}\t{group_of(name)}\t{name}")


if __name__ == "__main__":
    main()
