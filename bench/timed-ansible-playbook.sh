#!/bin/sh
# Stands first on PATH as `ansible-playbook` while bench/provision.ts runs bpa with the
# kubespray flavour's default commands: runs the real ansible-playbook
# ($BPA_BENCH_ANSIBLE_PLAYBOOK) and appends its wall time (ms) to $BPA_BENCH_TIMES, so the
# benchmark can split a reconcile into the installer's time and bpa's own overhead.
start=$(date +%s%N)
"$BPA_BENCH_ANSIBLE_PLAYBOOK" "$@"
rc=$?
end=$(date +%s%N)
echo $(((end - start) / 1000000)) >> "$BPA_BENCH_TIMES"
exit $rc
