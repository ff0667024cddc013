#!/bin/sh
# The ten slowest test files of a log (.ci/run's): vitest's line for each file, "✓ [project] <file> (N
# tests) <ms>ms" (❯ where one failed), as "<seconds> s  <package> <project> <file>", slowest first (no
# package for the runs .ci/run makes outside turbo: the release test, the other Node lines).
# Usage: slowest-files.sh <log>
set -eu
sed 's/\x1b\[[0-9;]*m//g' "$1" |
  awk '/ (✓|❯) .*\.test\.tsx? \([0-9]+ tests?[^)]*\) [0-9]+ms$/ {
    ms = $NF; sub(/ms$/, "", ms)
    pkg = ($1 ~ /^@/) ? $1 : ""; sub(/:test(:release)?:?$/, "", pkg)
    line = $0; sub(/^.*(✓|❯) +/, "", line); sub(/ \([0-9]+ tests?[^)]*\) [0-9]+ms$/, "", line)
    printf "%d %.1f s  %s%s\n", ms, ms / 1000, pkg == "" ? "" : pkg " ", line
  }' | sort -rn | head -10 | cut -d' ' -f2-
