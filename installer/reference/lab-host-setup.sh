#!/bin/sh
# Host setup for bpa's test lab (startLab({ hostSetup }) runs it inside each new lab host).
# Lab hosts share this machine's /etc; the reference installer writes its markers to
# /etc/bpa-reference on every host, so each host needs its own /etc: an overlay whose upper
# layer lives in the host's lab directory and disappears with the lab.
set -eu
d="$BPA_LAB_HOST_DIR/etc-overlay"
mkdir -p "$d/upper" "$d/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$d/upper,workdir=$d/work" /etc
