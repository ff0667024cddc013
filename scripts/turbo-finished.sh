#!/bin/sh
# Whether every turbo run in a log (.ci/run's) finished its tasks: each summary line "Tasks: N successful,
# M total" must have N = M. turbo stopped from outside ("Shutting down Turborepo tasks") exits 0 with tasks
# unfinished, which would pass a run that never ran its tests. Exit 1, with a line, when one did not.
# Usage: turbo-finished.sh <log>
set -eu
unfinished=$(sed 's/\x1b\[[0-9;]*m//g' "$1" |
  awk '/^ *Tasks: +[0-9]+ successful, [0-9]+ total/ && $2 != $4 { n++ } END { print n + 0 }')
if [ "$unfinished" != 0 ]; then
  echo "turbo left tasks unfinished in $unfinished run(s): the run failed"
  exit 1
fi
