#!/usr/bin/env bash
# Checks Architecture.md's rule "a layer uses only the layers above it" for the Swift layers of
# CovenantCore (called by .ci/lint.sh; prints the folder graph, exits 1 on a broken rule).
#
# The order is the one of the table under "## Layers" in Architecture.md: each row names its
# folders (`Sources/CovenantCore/<Folder>/`). Every folder of CovenantCore must be in the table.
# A folder *uses* another when one of its files names a type, function or global declared at
# the top level of a file of the other folder (a name declared in the using file itself, as a
# nested type, does not count). This reads names, not the compiler's view: an extension member
# (`DispatchQueue.promises`) is not attributed to its folder, and a file that only extends a
# type of a lower layer is seen through that type's name.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/lib.sh
need_tool python3 || { echo "layers: python3 unavailable, not checked"; exit 0; }

python3 - "$@" <<'PYTHON'
import collections, os, re, sys

core = "Sources/CovenantCore"
doc = "Sources/Covenant/Covenant.docc/Architecture.md"

# The layer order: the rows of the table under "## Layers", top first.
text = open(doc).read()
section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
order = []
for row in section.splitlines():
    if not row.startswith("|") or row.startswith("|---"):
        continue
    cells = [c.strip() for c in row.strip("|").split("|")]
    if len(cells) < 2:
        continue
    for folder in re.findall(r"`(?:Sources/CovenantCore/)?([A-Z][A-Za-z]+)/`", cells[1]):
        order.append(folder)
rank = {folder: i for i, folder in enumerate(order)}

folders = sorted(d for d in os.listdir(core) if os.path.isdir(os.path.join(core, d)))
missing = [f for f in folders if f not in rank]
if missing:
    print(f"layers: {', '.join(missing)} not in Architecture.md's table of layers", file=sys.stderr)
    sys.exit(1)

def code_of(path):
    source = open(path).read()
    source = re.sub(r'"""(?:.|\n)*?"""', '""', source)
    source = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', source)
    source = re.sub(r"/\*(?:.|\n)*?\*/", "", source)
    return re.sub(r"//[^\n]*", "", source)

declaration = re.compile(
    r"^(?:(?:@[\w.]+(?:\([^)]*\))?|public|package|internal|fileprivate|private|open|final|"
    r"indirect|static|nonisolated|mutating|prefix|postfix|infix)\s+)*"
    r"(class|struct|enum|protocol|typealias|actor|func|let|var)\s+([A-Za-z_]\w*)")

files = {f: sorted(os.path.join(core, f, n) for n in os.listdir(os.path.join(core, f))
                   if n.endswith(".swift")) for f in folders}
owner, local = {}, {}
for folder, paths in files.items():
    for path in paths:
        depth, names = 0, set()
        for line in code_of(path).split("\n"):
            names.update(re.findall(r"^\s*case\s+([A-Za-z_]\w*)", line))  # enum cases
            match = declaration.match(line.strip())
            if match:
                names.add(match.group(2))
                if depth == 0:
                    owner.setdefault(match.group(2), folder)
            depth += line.count("{") - line.count("}")
        local[path] = names

# Keywords that a top-level function may share a name with (`any`: `Promise+Any.swift`).
keywords = {"any", "some", "all"}
uses = collections.defaultdict(lambda: collections.defaultdict(set))
for folder, paths in files.items():
    for path in paths:
        # A name after a dot is a member (`SelectRandom.Generator`), not a top-level name.
        names = set(re.findall(r"(?<![.\w])[A-Za-z_]\w*", code_of(path)))
        for name in names - local[path] - keywords:
            other = owner.get(name)
            if other and other != folder:
                uses[folder][other].add(f"{name} ({os.path.basename(path)})")

broken = 0
for folder in order:
    if folder not in files:
        continue
    targets = sorted(uses[folder], key=lambda f: rank[f])
    print(f"{folder:12} -> {', '.join(targets) if targets else '(nothing)'}")
    for other in targets:
        if rank[other] > rank[folder]:
            broken += 1
            print(f"  layers: {folder} uses {other}, a layer below it: "
                  + ", ".join(sorted(uses[folder][other])), file=sys.stderr)
if broken:
    sys.exit(1)
print("ok    every layer of CovenantCore uses only the layers above it (Architecture.md)")
PYTHON
