#!/usr/bin/env bash
# Debian packages the integration tests and the lab use. Idempotent; installs only what is
# missing, so a second run costs nothing.
set -euo pipefail
# sudo: the lab's non-root SSH user becomes root through it (Kubespray's become).
# ansible, python3-jmespath: the collections (ansible.utils for ipaddr) and modules a real
# Kubespray checkout needs (test/integration/apply/kubespray-real.test.ts, BPA_TEST_KUBESPRAY_DIR).
# jq: the GitHub CLI stand-in of test/unit/scripts/pr-comment.test.ts runs its --jq filters.
# chromium: the status page is tested in a real headless browser (test/integration/ui/),
# driven by playwright-core.
# zsh, fish: the completion scripts of `bpa completion` are loaded and run in them.
# docker-registry, skopeo, containerd: the site registry, pushing to it, and ctr pulling through
# the mirror configuration bpa writes (test/integration/artifacts/registry-lab.test.ts).
# age: the data keys of the site's SOPS files (bpa's own use), and age keys made by tests.
# lua5.1: Argo CD's health script of docs/kubernetes-status.md runs in it against the status
# bpa wrote (test/integration/kube/kube-status.test.ts).
pkgs=(git openssh-server openssh-client iproute2 dnsmasq busybox ansible-core sshpass gnupg gpgv
  sudo ansible python3-jmespath jq chromium zsh fish docker-registry skopeo containerd age lua5.1)
# kubectl: the real-server tests drive the bootstrap cluster as an operator does. Debian's
# kubernetes-client (the server's version) only where no kubectl is installed already.
command -v kubectl >/dev/null || pkgs+=(kubernetes-client)
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
