#!/usr/bin/env bash
# Public API check: renders the public API of every Swift module behind a library product as
# sorted text (one line per declaration, one per conformance) and compares it with the digest
# checked in under api/. A difference fails with the diff and what to do.
#
#   bash .ci/api.sh             # check (what CI runs)
#   bash .ci/api.sh --update    # rewrite api/*.txt from the current code
#
# Source: `swift package dump-symbol-graph` at `public` level (so `package`, `internal`,
# `@_spi` and underscored symbols are left out, as README's "Versioning" says), without source
# locations or doc comments, so the digest does not depend on paths or wording. The declarations
# are printed by the compiler: a new toolchain can change how some print; regenerate the digest
# with the toolchain CI uses (the version is recorded in the first line of each file).
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/lib.sh

mode=check
case "${1:-}" in
  "") ;;
  --update) mode=update ;;
  *) echo "usage: bash .ci/api.sh [--update]"; exit 2 ;;
esac

need_tool python3
section "public API against api/"
log=$(mktemp)
description=$(mktemp)
rendered=$(mktemp -d)
trap 'rm -rf "$log" "$description" "$rendered"' EXIT

swift package describe --type json >"$description"
if ! swift package dump-symbol-graph --skip-synthesized-members --minimum-access-level public \
  >"$log" 2>&1; then
  # Test modules have no graph until the tests are built (a plain `swift build` does not build
  # them); that is no failure here. Every library module's graph is required below.
  if grep "error:" "$log" | grep -vq "Failed to emit symbol graph for '[A-Za-z]*Tests'"; then
    cat "$log"; echo "api: symbol graph extraction failed"; exit 1
  fi
fi
graphs=$(sed -n 's/^Files written to //p' "$log" | tail -1)
[ -d "$graphs" ] || { cat "$log"; echo "api: no symbol graph directory in the output above"; exit 1; }

python3 - "$description" "$graphs" "$rendered" "$(swift --version 2>/dev/null | head -1)" <<'PYTHON'
import glob, json, os, sys

package_file, graphs, out, toolchain = sys.argv[1:5]
package = json.load(open(package_file))
targets = {t["name"]: t for t in package["targets"]}

# The Swift modules a client can reach: the targets of library products and, recursively, the
# Swift targets they depend on (an umbrella module re-exports them). C modules are not API.
modules, pending = set(), [t for p in package["products"] if "library" in p["type"] for t in p["targets"]]
while pending:
    name = pending.pop()
    target = targets.get(name)
    if name in modules or target is None or target.get("module_type") != "SwiftTarget":
        continue
    modules.add(name)
    pending.extend(target.get("target_dependencies") or [])

def text(fragments):
    return "".join(f["spelling"] for f in fragments or []).replace("\n", " ")

# Conformances every type gets implicitly, whose listing depends on the toolchain (Swift 6.2
# added SendableMetatype): not part of what a change to Covenant can alter.
IMPLICIT = {"Copyable", "Escapable", "SendableMetatype"}

def constraints(items):
    parts = []
    for c in items or []:
        if c["rhs"] in IMPLICIT:
            continue
        op = {"conformance": ":", "superclass": ":", "sameType": "=="}.get(c["kind"], c["kind"])
        parts.append(f'{c["lhs"]} {op} {c["rhs"]}')
    return " where " + ", ".join(sorted(parts)) if parts else ""

# Names of every symbol in every graph, for relationships whose source is another module's type
# (a conformance added by an extension in CovenantFoundation to a CovenantCore type).
names = {}
for path in glob.glob(os.path.join(graphs, "*.symbols.json")):
    for symbol in json.load(open(path))["symbols"]:
        names[symbol["identifier"]["precise"]] = ".".join(symbol["pathComponents"])

for module in sorted(modules):
    lines = set()
    files = sorted(glob.glob(os.path.join(graphs, f"{module}.symbols.json")) +
                   glob.glob(os.path.join(graphs, f"{module}@*.symbols.json")))
    if not files:
        sys.exit(f"api: no symbol graph for {module} in {graphs}")
    for graph in (json.load(open(f)) for f in files):
        for symbol in graph["symbols"]:
            path = ".".join(symbol["pathComponents"])
            line = f'{path}  {text(symbol.get("declarationFragments"))}'
            extension = symbol.get("swiftExtension", {})
            line += constraints(extension.get("constraints"))
            for availability in symbol.get("availability", []):
                flags = [k for k in ("isUnconditionallyDeprecated", "isUnconditionallyUnavailable")
                         if availability.get(k)]
                versions = [f'{k} {v["major"]}.{v.get("minor", 0)}' for k, v in sorted(availability.items())
                            if isinstance(v, dict) and "major" in v]
                if flags or versions:
                    domain = availability.get("domain", "*")
                    line += f'  @available({", ".join([domain] + flags + versions)})'
            lines.add(line)
        for relation in graph["relationships"]:
            if relation["kind"] not in ("conformsTo", "inheritsFrom"):
                continue
            source = names.get(relation["source"])
            if source is None:
                continue
            target = names.get(relation["target"]) or relation.get("targetFallback") or relation["target"]
            if target.split(".")[-1] in IMPLICIT:
                continue
            verb = "conforms to" if relation["kind"] == "conformsTo" else "inherits from"
            lines.add(f"{source}  {verb} {target}{constraints(relation.get('swiftConstraints'))}")
    with open(os.path.join(out, f"{module}.txt"), "w") as f:
        f.write(f"# Public API of {module} ({toolchain}); regenerate: bash .ci/api.sh --update\n")
        f.write("".join(line + "\n" for line in sorted(lines)))
PYTHON

mkdir -p api
if [ "$mode" = update ]; then
  rm -f api/*.txt
  cp "$rendered"/*.txt api/
  echo "api: digest written to api/ ($(ls api | tr '\n' ' ')). Add a CHANGELOG.md entry for the change."
  exit 0
fi

status=0
for file in "$rendered"/*.txt; do
  name=$(basename "$file")
  if [ ! -f "api/$name" ]; then
    echo "api: api/$name is missing (a new public module?)"; status=1; continue
  fi
  # The first line names the toolchain; only the declarations are compared.
  if ! diff -u --label "api/$name (recorded)" --label "$name (this code)" \
      <(tail -n +2 "api/$name") <(tail -n +2 "$file"); then
    status=1
  fi
done
for file in api/*.txt; do
  [ -e "$file" ] || continue
  [ -f "$rendered/$(basename "$file")" ] || { echo "api: $file has no module any more"; status=1; }
done
if [ $status -ne 0 ]; then
  cat <<'EOF'

api: the public API differs from the recorded digest (lines starting with - were removed or
changed, + added). If the change is intended: run `bash .ci/api.sh --update`, commit api/
with the change, and add an entry to CHANGELOG.md under "Unreleased" (a removal or a changed
signature is a breaking change: see "Versioning" in README.md).
EOF
  exit 1
fi
echo "api: public API matches api/ ($(ls "$rendered" | tr '\n' ' '))"
