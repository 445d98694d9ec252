#!/bin/bash
# The bpa reference installer: runs one of its playbooks against a cluster directory in KUD's
# layout (<clusterDir>/hosts.ini in, <clusterDir>/artifacts/admin.conf out). bpa's installer
# command templates call it as, e.g.:
#
#   installer/reference/run.sh cluster {clusterDir} {inventory}
#   installer/reference/run.sh scale   {clusterDir} {inventory} {nodes}
#   installer/reference/run.sh remove  {clusterDir} {inventory} {nodes}
#   installer/reference/run.sh reset   {clusterDir} {inventory}
#   installer/reference/run.sh addon   {clusterDir} {inventory} {plugins}
#
# Environment:
#   BPA_SSH_KEY          private key for the hosts (default: ssh's own defaults)
#   BPA_SSH_USER         remote user (default root)
#   BPA_KNOWN_HOSTS      known_hosts file the host keys are checked against; unset: no host
#                        key checking (with a warning)
#   BPA_ANSIBLE_FORKS    hosts worked on in parallel (default 10)
#   BPA_CLUSTER          cluster name (default: the cluster directory's name)
# Fault injection, for tests and demos:
#   BPA_REFERENCE_SLEEP  seconds to sleep before running the playbook (a hanging installer)
#   BPA_REFERENCE_FAIL=1 fail after the host checks
#   BPA_REFERENCE_RAW=1  treat the hosts as having no python3 (raw commands only)
#
# The exit status is ansible-playbook's: 0 ok, non-zero (2 or 4) when a task failed or a host
# was unreachable; 64 for a usage error of this script.
set -u

usage() {
  echo "usage: $0 cluster|scale|remove|reset|addon CLUSTER_DIR INVENTORY [NODES|PLUGINS]" >&2
  echo "run.sh: $*" >&2
  exit 64
}

[ $# -ge 3 ] || usage "expected at least 3 arguments, got $#"
mode=$1
cluster_dir=$2
inventory=$3
list=${4:-}

# Values reach ansible as extra variables and --limit patterns: keep them to plain names.
safe_path='^/[A-Za-z0-9._/-]+$'
[[ $cluster_dir =~ $safe_path ]] || usage "cluster directory must be an absolute plain path: $cluster_dir"
[[ $inventory =~ $safe_path ]] || usage "inventory must be an absolute plain path: $inventory"
[ -d "$cluster_dir" ] || usage "no cluster directory $cluster_dir"
[ -r "$inventory" ] || usage "cannot read the inventory $inventory"
names='^[a-z0-9]([-a-z0-9]*[a-z0-9])?(,[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'

case $mode in
cluster)
  playbook=cluster.yml
  [ $# -eq 3 ] || usage "cluster takes no node or plugin list"
  ;;
reset)
  # Every host of the inventory: no --limit.
  playbook=reset.yml
  [ $# -eq 3 ] || usage "reset takes no node or plugin list"
  ;;
scale | remove)
  playbook=scale.yml
  [ "$mode" = remove ] && playbook=remove-node.yml
  [ $# -eq 4 ] && [[ $list =~ $names ]] || usage "$mode needs a comma-separated list of node names"
  ;;
addon)
  playbook=addon.yml
  [ $# -eq 4 ] && [[ $list =~ $names ]] || usage "addon needs a comma-separated list of plugin names"
  ;;
*)
  usage "unknown mode $mode"
  ;;
esac

cluster=${BPA_CLUSTER:-$(basename "$cluster_dir")}
[[ $cluster =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || usage "cluster name $cluster is not a valid name"
forks=${BPA_ANSIBLE_FORKS:-10}
[[ $forks =~ ^[1-9][0-9]{0,3}$ ]] || usage "BPA_ANSIBLE_FORKS must be a positive integer: $forks"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work="$cluster_dir/.ansible"
mkdir -p "$work/tmp" "$work/home" || exit 1

export ANSIBLE_CONFIG="$here/ansible.cfg"
export ANSIBLE_HOME="$work/home"
export ANSIBLE_LOCAL_TEMP="$work/tmp"
export ANSIBLE_FORKS=$forks
export ANSIBLE_REMOTE_USER=${BPA_SSH_USER:-root}
export ANSIBLE_NOCOLOR=1
export ANSIBLE_FORCE_COLOR=0
export PYTHONUNBUFFERED=1
ssh_args="-o ControlMaster=no -o BatchMode=yes -o ConnectTimeout=10"
if [ -n "${BPA_KNOWN_HOSTS:-}" ]; then
  [ -r "$BPA_KNOWN_HOSTS" ] || usage "cannot read BPA_KNOWN_HOSTS $BPA_KNOWN_HOSTS"
  [[ $BPA_KNOWN_HOSTS =~ $safe_path ]] || usage "BPA_KNOWN_HOSTS must be an absolute plain path"
  export ANSIBLE_HOST_KEY_CHECKING=True
  ssh_args="$ssh_args -o UserKnownHostsFile=$BPA_KNOWN_HOSTS -o StrictHostKeyChecking=yes"
else
  echo "run.sh: WARNING: BPA_KNOWN_HOSTS is not set; host keys are not checked" >&2
  export ANSIBLE_HOST_KEY_CHECKING=False
  ssh_args="$ssh_args -o UserKnownHostsFile=/dev/null"
fi
export ANSIBLE_SSH_ARGS=$ssh_args
if [ -n "${BPA_SSH_KEY:-}" ]; then
  [ -r "$BPA_SSH_KEY" ] || usage "cannot read BPA_SSH_KEY $BPA_SSH_KEY"
  export ANSIBLE_PRIVATE_KEY_FILE=$BPA_SSH_KEY
fi

for knob in BPA_REFERENCE_FAIL BPA_REFERENCE_RAW; do
  [[ ${!knob:-0} =~ ^[01]$ ]] || usage "$knob must be 0 or 1"
done
if [ -n "${BPA_REFERENCE_SLEEP:-}" ]; then
  [[ $BPA_REFERENCE_SLEEP =~ ^[0-9]+$ ]] || usage "BPA_REFERENCE_SLEEP must be whole seconds"
  echo "run.sh: BPA_REFERENCE_SLEEP: sleeping ${BPA_REFERENCE_SLEEP}s before $playbook"
  sleep "$BPA_REFERENCE_SLEEP"
fi

args=(-i "$inventory" "$here/$playbook"
  -e "cluster_name=$cluster" -e "cluster_dir=$cluster_dir"
  -e "bpa_playbook=$playbook"
  -e "bpa_reference_fail=${BPA_REFERENCE_FAIL:-0}"
  -e "bpa_reference_raw=${BPA_REFERENCE_RAW:-0}")
case $mode in
scale | remove) args+=(--limit "$list") ;;
addon) args+=(-e "plugins=$list") ;;
esac

echo "run.sh: ansible-playbook ${args[*]}"
# Not exec: bpa recognises its installer by the command line it started.
ansible-playbook "${args[@]}"
exit $?
