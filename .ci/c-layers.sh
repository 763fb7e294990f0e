#!/usr/bin/env bash
# The C layer's structure, checked on a fresh clone without a Swift build (cc and nm only):
#
#   1. the layers: Sources/CCoroutineContext/cov_internal.h declares them ("LAYERS", lowest
#      first); every .c/.S of the target is in that list and every listed file exists;
#   2. the graph: each file is compiled (cc -c, natively, and for arm64 when the cross compiler
#      is installed) and each object may use (nm: its undefined symbols) only symbols defined by
#      objects of lower layers: no cycle, no edge up or sideways. CCovenantShims (the Swift-only
#      shims) sits above every layer. The graph is printed;
#   3. the includes: a private header (Sources/CCoroutineContext/NAME.h, the declarations of
#      NAME.c, or of switch_*.S for switch.h) is included only by files of its layer or above,
#      and no .c file declares a cov_ function of its own: those are declared in headers;
#   4. the hazard of the inline thread-slot accessors (CCovenantShims.h): a Swift use of
#      cov_tls_get_unsafe_after_suspension / cov_tls_set_unsafe_after_suspension is allowed only
#      in ThreadSlot's two wrappers listed below (ThreadSlot.swift says why); .ci/lint.sh checks
#      that every caller of those wrappers is @inline(never).
#
# Architecture.md ("The C layer") describes the layers; this script is what keeps them true.
set -euo pipefail
cd "$(dirname "$0")/.."

lib=Sources/CCoroutineContext
shims=Sources/CCovenantShims

# The Swift functions allowed to use the inline thread-slot accessors: ThreadSlot's wrappers,
# whose callers .ci/lint.sh checks (each @inline(never), the access before any suspension).
tls_unsafe_allowed=(loadBeforeAnySuspension storeBeforeAnySuspension)

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# MARK: - 1. The declared layers

declare -A layer
count=0
while IFS= read -r line; do
  count=$((count + 1))
  for file in $line; do layer[$file]=$count; done
done < <(sed -n 's|^//   \(\([a-z0-9_]*\.[cS] *\)*\)--.*|\1|p' "$lib/cov_internal.h")
[ "$count" -gt 0 ] || { echo "FAIL: no LAYERS list in $lib/cov_internal.h"; exit 1; }
top=$((count + 1))

for file in "${!layer[@]}"; do
  [ -e "$lib/$file" ] || fail "$file is listed in cov_internal.h's LAYERS but does not exist"
done
for path in "$lib"/*.c "$lib"/*.S; do
  file=$(basename "$path")
  [ -n "${layer[$file]:-}" ] || fail "$file is not in cov_internal.h's LAYERS: give it a layer"
done
for path in "$shims"/*.c; do layer["CCovenantShims/$(basename "$path")"]=$top; done

# MARK: - 2. The graph of the object files

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-O2 -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer -I "$lib/include" -pthread)

# Compiles every file with compiler $1 into $work/$2/ and prints a line per symbol its object
# uses ("file U symbol") or defines ("file D symbol"), read with nm $3.
symbols() {
  local cc=$1 arch=$2 nm=$3
  mkdir -p "$work/$arch"
  for path in "$lib"/*.c "$lib"/*.S "$shims"/*.c; do
    local name
    case $path in $shims/*) name="CCovenantShims/$(basename "$path")" ;; *) name=$(basename "$path") ;; esac
    local object="$work/$arch/${name//\//_}.o"
    "$cc" "${flags[@]}" -I "$shims/include" -c "$path" -o "$object" ||
      { fail "$name does not compile for $arch"; continue; }
    "$nm" -P "$object" 2>/dev/null | awk -v name="$name" '
      $2 == "U" { print name, "U", $1 }
      $2 ~ /^[TDBRVW]$/ { print name, "D", $1 }'
  done
}

# Checks one architecture's graph (the lines of `symbols` on stdin) and prints it.
check_graph() {
  local arch=$1
  awk -v arch="$arch" -v top="$top" '
    FNR == NR { layer[$1] = $2; next }
    $2 == "D" { if (!($3 in owner)) owner[$3] = $1; next }
    $2 == "U" { uses[$1] = uses[$1] " " $3; next }
    END {
      bad = 0
      for (file in uses) {
        n = split(uses[file], symbols, " ")
        for (i = 1; i <= n; i++) {
          to = owner[symbols[i]]
          if (to == "" || to == file || (file, to) in edge) continue
          edge[file, to] = 1
          targets[file] = targets[file] " " to
          if (layer[to] >= layer[file]) {
            printf "FAIL (%s): %s (layer %s) uses %s of %s (layer %s): a file uses only lower layers\n",
              arch, file, layer[file], symbols[i], to, layer[to]
            bad++
          }
        }
      }
      # Cycles: peel off the files that use no file left, and those no file left uses (Kahn,
      # both ways); what remains lies on a cycle (or between two).
      for (file in layer) alive[file] = 1
      do {
        removed = 0
        for (file in alive) { used[file] = 0; uses_left[file] = 0 }
        for (file in alive) {
          n = split(targets[file], list, " ")
          for (i = 1; i <= n; i++) if (list[i] in alive) { uses_left[file] = 1; used[list[i]] = 1 }
        }
        for (file in alive) if (!uses_left[file] || !used[file]) { delete alive[file]; removed = 1 }
      } while (removed)
      cycle = ""
      for (file in alive) cycle = cycle " " file
      if (cycle != "") { printf "FAIL (%s): files on a cycle:%s\n", arch, cycle; bad++ }
      # The graph, by layer, lowest first (files of a layer and their targets sorted by name).
      edges = 0
      for (l = 1; l <= top; l++) {
        count = 0
        for (file in layer) if (layer[file] == l) names[++count] = file
        sort_names(names, count)
        for (k = 1; k <= count; k++) {
          file = names[k]
          n = split(targets[file], list, " ")
          sort_names(list, n)
          line = ""
          for (i = 1; i <= n; i++) { line = line (i > 1 ? ", " : "") list[i]; edges++ }
          if (line == "") printf "  %2d  %s\n", l, file
          else printf "  %2d  %-32s -> %s\n", l, file, line
        }
      }
      printf "C layer (%s): %d files, %d edges, %s\n", arch, length(layer), edges,
        bad ? bad " problem(s)" : "every edge goes down, no cycle"
      exit bad ? 1 : 0
    }
    function sort_names(a, n,    i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    }' <(for file in "${!layer[@]}"; do echo "$file ${layer[$file]}"; done) -
}

echo "The C layer, lowest first (layer, file -> the files whose symbols it uses):"
symbols cc native nm >"$work/native.txt"
check_graph "$(uname -m)" <"$work/native.txt" || failures=$((failures + 1))
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && command -v aarch64-linux-gnu-nm >/dev/null 2>&1; then
  symbols aarch64-linux-gnu-gcc arm64 aarch64-linux-gnu-nm >"$work/arm64.txt"
  # arm64, where switch_arm64.S has the code: the summary, or everything if it fails.
  if check_graph arm64 <"$work/arm64.txt" >"$work/arm64-graph.txt"; then
    tail -1 "$work/arm64-graph.txt"
  else
    cat "$work/arm64-graph.txt"
    failures=$((failures + 1))
  fi
else
  echo "arm64: not checked (no aarch64-linux-gnu-gcc)"
fi

# MARK: - 3. Includes and declarations

# The layer of a private header: that of the file it declares (switch.h: switch_*.S);
# cov_internal.h is below every layer.
header_layer() {
  local base=${1%.h}
  [ "$1" = cov_internal.h ] && { echo 0; return; }
  [ -n "${layer[$base.c]:-}" ] && { echo "${layer[$base.c]}"; return; }
  for file in "${!layer[@]}"; do
    case $file in "$base"_*.S) echo "${layer[$file]}"; return ;; esac
  done
  echo ""
}
for path in "$lib"/*.c "$lib"/*.S "$lib"/*.h; do
  file=$(basename "$path")
  case $file in *.h) own=$(header_layer "$file") ;; *) own=${layer[$file]:-0} ;; esac
  [ -n "$own" ] || { fail "$file: a private header that declares no file of the layers"; continue; }
  while read -r included; do
    [ -e "$lib/$included" ] || continue  # a public header (include/) or a system one
    theirs=$(header_layer "$included")
    if [ -z "$theirs" ] || [ "$theirs" -gt "$own" ]; then
      fail "$file (layer $own) includes $included (layer ${theirs:-none}): headers of lower layers only"
    fi
  done < <(sed -n 's|^#include "\([^"]*\)".*|\1|p' "$path")
done
# A cov_ function declared (not defined) at file scope of a .c file: a prototype that belongs in
# the header of the file that defines it. (Comments and preprocessor directives, with their
# continuation lines, are left out.)
for path in "$lib"/*.c "$shims"/*.c; do
  awk -v file="$path" '
    {
      text = $0
      if (directive || text ~ /^[[:space:]]*#/) { directive = text ~ /\\$/; next }
      if (comment) { if (!sub(/.*\*\//, "", text)) next; comment = 0 }
      gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", text)
      if (sub(/\/\*.*/, "", text)) comment = 1
      sub(/\/\/.*/, "", text)
      if (depth == 0) statement = statement " " text
      opened = gsub(/{/, "{", text)
      closed = gsub(/}/, "}", text)
      if (depth == 0 && (opened || text ~ /;[[:space:]]*$/)) {
        if (!opened && statement ~ /[^_a-zA-Z0-9]cov_[a-z0-9_]+[[:space:]]*\(/ &&
            statement !~ /^[[:space:]]*(static|typedef)[^a-zA-Z0-9_]/ && statement !~ /=/)
          printf "FAIL: %s:%d declares a cov_ function: declare it in its file'\''s header\n", file, NR
        statement = ""
      }
      depth += opened - closed
    }' "$path"
done | tee "$work/declarations.txt"
[ -s "$work/declarations.txt" ] && failures=$((failures + $(wc -l <"$work/declarations.txt")))

# MARK: - 4. The inline thread-slot accessors

# Every use, with the innermost Swift function around it (brace nesting, comments and string
# literals left out) and whether that function is @inline(never).
while IFS= read -r swift; do
  awk -v file="$swift" '
    function strip(line) {
      gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
      sub(/\/\/.*/, "", line)
      return line
    }
    {
      line = strip($0)
      if (match(line, /(^|[^a-zA-Z0-9_])func[[:space:]]+[a-zA-Z_][a-zA-Z0-9_]*/)) {
        # A function: the attributes on the lines just above it, or on its own line.
        name = substr(line, RSTART, RLENGTH)
        sub(/.*func[[:space:]]+/, "", name)
        pending = name
        pending_never = never || line ~ /@inline\(never\)/
        never = 0
      } else if (line ~ /^[[:space:]]*(@.*)?$/) {
        if (line ~ /@inline\(never\)/) never = 1  # attributes, doc comments, blank lines
      } else {
        never = 0
      }
      if ($0 ~ /cov_tls_(get|set)_unsafe_after_suspension/ && $0 !~ /^[[:space:]]*\/\//) {
        inner = "-"; inner_never = 0
        for (i = depth; i >= 1; i--)
          if (kind[i] != "") { inner = kind[i]; inner_never = never_at[i]; break }
        printf "%s:%d %s %d\n", file, NR, inner, inner_never
      }
      n = length(line)
      for (c = 1; c <= n; c++) {
        ch = substr(line, c, 1)
        if (ch == "{") {
          depth++; kind[depth] = pending; never_at[depth] = pending_never; pending = ""
        } else if (ch == "}") {
          if (depth > 0) depth--
          pending = ""  # a function without a body (a protocol requirement) ends here
        }
      }
    }' "$swift"
done < <(grep -rlE 'cov_tls_(get|set)_unsafe_after_suspension' --include='*.swift' \
           Sources Tests Benchmarks Integrations 2>/dev/null | grep -v '/\.build' || true) >"$work/tls.txt"
while read -r where function never; do
  allowed=0
  for name in "${tls_unsafe_allowed[@]}"; do [ "$function" = "$name" ] && allowed=1; done
  if [ $allowed = 0 ]; then
    fail "$where: cov_tls_*_unsafe_after_suspension in $function, which is not allowed to (.ci/c-layers.sh, tls_unsafe_allowed): use ThreadSlot"
  fi
done <"$work/tls.txt"
# In C, the accessors are only defined (CCovenantShims.h); C code uses cov_tls_slots itself.
if grep -rnE 'cov_tls_(get|set)_unsafe_after_suspension' "$lib" "$shims"/*.c Tests/CContextSwitch \
     Benchmarks/CSwitch 2>/dev/null; then
  fail "cov_tls_*_unsafe_after_suspension used in C (above)"
fi
echo "inline thread-slot accessors (cov_tls_*_unsafe_after_suspension), by enclosing function:"
sed 's/^/  /' "$work/tls.txt"

if [ $failures -gt 0 ]; then
  echo "c-layers: $failures problem(s)"
  exit 1
fi
echo "c-layers: OK"
