#!/bin/sh
# The failed tests of a log (.ci/run's), each once, as vitest names them in its "Failed Tests" section:
# "FAIL [project] <file> > <describe> > <test>", with the turbo package in front where there is one. The
# tail of a CI log is what a reader is shown; this puts the names there.
# Usage: failed-tests.sh <log>
set -eu
sed 's/\x1b\[[0-9;]*m//g' "$1" |
  awk '/ FAIL +.*\.test\.tsx?( |$)/ {
    pkg = ($1 ~ /^@/) ? $1 : ""; sub(/:test(:release)?:?$/, "", pkg); if (pkg != "") pkg = pkg " "
    line = $0; sub(/^.* FAIL +/, "", line)
    if (!seen[pkg line]++) print pkg line
  }'
