#!/usr/bin/env bash
# What the CI scripts share; sourced (`source "$(dirname "$0")/lib.sh"`), not run:
#   section TITLE...              prints a section header with the time (UTC);
#   need_tool COMMAND [PACKAGE...] installs PACKAGE (default: COMMAND) with apt-get when COMMAND
#                                 is missing; returns 1, with a message, when it cannot.
# Integrations/*/ scripts source it through their own relative path.

section() { printf '\n==== %s (%s) ====\n' "$*" "$(date -u +%H:%M:%S)"; }

need_tool() {
  local tool=$1
  shift
  command -v "$tool" >/dev/null 2>&1 && return 0
  local packages=("$@")
  [ ${#packages[@]} -gt 0 ] || packages=("$tool")
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "need_tool: $tool is missing and apt-get is unavailable" >&2
    return 1
  fi
  echo "need_tool: installing ${packages[*]} (for $tool)" >&2
  # The package lists are updated only when the install fails without: usually they are fresh.
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1; } ||
    { echo "need_tool: could not install ${packages[*]}" >&2; return 1; }
  command -v "$tool" >/dev/null 2>&1
}
