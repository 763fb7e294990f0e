#!/usr/bin/env bash
# Documentation step of CI (called by .ci/run; also the way to build the docs locally):
#   1. compiles every ```swift block of README.md and the DocC articles, runs the ones with
#      `// prints:` lines and checks their output (Documentation/SnippetSupport/check_snippets.py);
#      the same build emits the symbol graphs of Covenant and CovenantTesting;
#   2. checks that every public symbol has a /// doc comment (check_doc_comments.py);
#   3. runs the toolchain's `docc convert` on each catalog with those symbol graphs, and fails on
#      any unresolved or ambiguous symbol or article link.
# Everything goes to .build-docs/ (its own scratch path: the emit-symbol-graph flags would
# otherwise invalidate the main .build). No package plugin, no dependency in Package.swift.
# Output: .build-docs/Covenant.doccarchive and .build-docs/CovenantTesting.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/lib.sh
section "documentation: snippets, symbol graphs, docc"
need_tool python3
DOCC=$(command -v docc || xcrun --find docc)

# Kept between runs on purpose: an incremental build only re-emits the graphs of the modules it
# recompiles, so deleting this directory would lose the others.
graphs=.build-docs/symbol-graphs
mkdir -p "$graphs"
python3 Documentation/SnippetSupport/check_snippets.py --symbol-graph-dir "$graphs/all"

status=0
python3 Documentation/SnippetSupport/check_doc_comments.py "$graphs/all" || status=1
for module in Covenant CovenantTesting; do
  rm -rf "$graphs/$module" && mkdir -p "$graphs/$module"
  cp "$graphs/all/$module.symbols.json" "$graphs/$module/"
  cp "$graphs/all/$module"@*.symbols.json "$graphs/$module/" 2>/dev/null || true
  log=.build-docs/docc-$module.log
  "$DOCC" convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$graphs/$module" \
    --output-dir ".build-docs/$module.doccarchive" \
    --fallback-display-name "$module" --fallback-bundle-identifier "dev.covenant.$module" \
    --transform-for-static-hosting >"$log" 2>&1 || { cat "$log"; echo "docc convert failed for $module"; exit 1; }
  # Unresolved links: "'X' doesn't exist at '/Covenant'", "'X' is ambiguous at …", topic
  # references that cannot be resolved. Other warnings (e.g. an undocumented parameter) are
  # printed but do not fail the step.
  links=$(grep -cE "warning: .*(doesn't exist at|is ambiguous at|couldn't be resolved|No (symbol|article) matched|can't be resolved)" "$log" || true)
  others=$(grep -c "warning:" "$log" || true)
  if [ "$links" -gt 0 ]; then
    cat "$log"
    echo "docc: $links unresolved or ambiguous links in $module's documentation"
    status=1
  else
    grep -A6 "warning:" "$log" || true
    echo "docc: $module built with no unresolved links ($others other warnings) -> .build-docs/$module.doccarchive"
  fi
done
exit $status
