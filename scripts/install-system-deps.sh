#!/usr/bin/env bash
# Debian packages the integration tests and the lab use. Idempotent; installs only what is
# missing, so a second run costs nothing.
set -euo pipefail
pkgs=(git openssh-server openssh-client iproute2 dnsmasq busybox ansible-core sshpass gnupg gpgv)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "installed: ${missing[*]}"
fi
