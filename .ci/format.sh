#!/usr/bin/env bash
# Formatting gate: `swift format lint --strict` with the repository's .swift-format over every
# Swift file we write (library, tests, benchmarks, integrations, CI programs, snippet support,
# manifests).
#
#   bash .ci/format.sh            # lint; exit 1 on any finding (what CI runs)
#   bash .ci/format.sh --fix      # rewrite the files in place, then lint what is left
#
# `--fix` cannot repair everything: the rules that need a human (ReplaceForEachWithForLoop,
# OneCasePerLine, EndOfLineComment past the line length, …) are reported by the lint that follows.
# CONTRIBUTING.md explains the configuration.
set -euo pipefail
cd "$(dirname "$0")/.."

paths=(Sources Tests Benchmarks/Sources Benchmarks/AtomicsMicro Documentation/SnippetSupport)
paths+=(Package.swift Benchmarks/Package.swift)
# The other packages in the repository: integrations, and CI's own programs (.ci/footprint/).
for package in Integrations/*/ .ci/*/; do
  for part in Sources Tests Package.swift; do
    if [ -e "$package$part" ]; then paths+=("$package$part"); fi
  done
done

if [ "${1:-}" = "--fix" ]; then
  swift format format --in-place --recursive --parallel --configuration .swift-format "${paths[@]}"
fi

if ! swift format lint --strict --recursive --parallel --configuration .swift-format "${paths[@]}"; then
  echo "swift format lint failed: run 'bash .ci/format.sh --fix', fix what it still reports, commit"
  exit 1
fi
echo "format: clean (${#paths[@]} paths)"
