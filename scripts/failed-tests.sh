#!/bin/sh
# The failed tests of a log (.ci/run's), each once, as vitest names them in its "Failed Tests" section:
# "FAIL [project] <file> > <describe> > <test>", with the turbo package in front where there is one, and
# under each, indented, the error's first line and where it was thrown: the tail of a CI log is what a
# reader is shown, and a failure seen once on a loaded machine must say there what it was.
# Usage: failed-tests.sh <log>
set -eu
sed 's/\x1b\[[0-9;]*m//g' "$1" |
  awk '
  function flush() { if (name != "" && !seen[name]++) { print name; if (error != "") print "    " error; if (at != "") print "    " at } name = "" }
  / FAIL +.*\.test\.tsx?( |$)/ {
    flush()
    pkg = ($1 ~ /^@/) ? $1 : ""; sub(/:test(:release)?:?$/, "", pkg); if (pkg != "") pkg = pkg " "
    line = $0; sub(/^.* FAIL +/, "", line)
    name = pkg line; error = ""; at = ""; next
  }
  name != "" && error == "" && /[A-Za-z]*Error[:!]/ { error = $0; sub(/^@[^ ]+ +/, "", error); sub(/^ +/, "", error); next }
  name != "" && at == "" && /❯ .*:[0-9]+:[0-9]+/ { at = $0; sub(/^.*❯ +/, "at ", at); flush() }
  END { flush() }'
