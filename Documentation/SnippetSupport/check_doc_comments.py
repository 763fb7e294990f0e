#!/usr/bin/env python3
"""Fails when a public symbol declared in Covenant or CovenantTesting has no /// doc comment.

Reads the symbol graphs that .ci/docs.sh emits. Symbols without a source location are members
inherited from protocols (Sequence's `filter`, …) and are skipped, as are extension blocks.
Usage: check_doc_comments.py SYMBOL_GRAPH_DIR
"""
import glob
import json
import os
import sys

graph_dir = sys.argv[1]
total, missing = 0, []
for module in ("Covenant", "CovenantTesting"):
    files = [os.path.join(graph_dir, f"{module}.symbols.json")] + glob.glob(os.path.join(graph_dir, f"{module}@*.symbols.json"))
    for path in files:
        for symbol in json.load(open(path))["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open") or "location" not in symbol:
                continue
            if symbol["kind"]["identifier"] == "swift.extension":
                continue
            total += 1
            if not symbol.get("docComment", {}).get("lines"):
                where = symbol["location"]
                missing.append(f"{where['uri'].replace('file://', '')}:{where['position']['line'] + 1}: "
                               f"{module}.{'.'.join(symbol['pathComponents'])} has no doc comment")
for line in sorted(set(missing)):
    print(line)
print(f"doc comments: {total - len(missing)} of {total} public symbols documented")
sys.exit(1 if missing else 0)
