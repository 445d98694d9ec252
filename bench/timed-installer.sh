#!/bin/sh
# Runs the reference installer and appends its wall time (ms) to $BPA_BENCH_TIMES, so a
# benchmark can split a reconcile into installer time and bpa's own overhead.
start=$(date +%s%N)
"$(dirname "$0")/../installer/reference/run.sh" "$@"
rc=$?
end=$(date +%s%N)
echo $(((end - start) / 1000000)) >> "$BPA_BENCH_TIMES"
exit $rc
