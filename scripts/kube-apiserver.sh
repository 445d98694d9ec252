#!/usr/bin/env bash
# Provides a real kube-apiserver (with etcd and kube-controller-manager) for the tests of
# test/k8s/, built from Debian's `kubernetes` source package, since no other source of Kubernetes
# binaries is reachable from this machine or CI.
#
#   bash scripts/kube-apiserver.sh          install, build if needed, print where the binaries are
#   bash scripts/kube-apiserver.sh --find   only print where they are (exit 1 when not built)
#
# The binaries go to $BPA_KUBE_CACHE (default /var/cache/bpa/kube) under a key made of the
# package version and this script's hash, so a second run takes seconds and an edited script
# rebuilds. $BPA_KUBE_CACHE/current links to the last good build; its bin/ holds
# kube-apiserver, kube-controller-manager and etcd, and is where test/k8s/ looks
# (BPA_KUBE_ASSETS overrides it there). A cold build takes about 7 minutes on two cores and
# leaves about 1.5 GB of Go build cache in $BPA_KUBE_CACHE/go-build, kept so that a rebuild
# (after an edit of this script) is faster; docs/architecture.md has the figures.
set -euo pipefail

CACHE=${BPA_KUBE_CACHE:-/var/cache/bpa/kube}
SELF=$(readlink -f "$0")
START=$(date +%s)

die() {
  echo "kube-apiserver.sh: cannot provide kube-apiserver: $*" >&2
  exit 1
}

report() {
  echo "kube binaries in $CACHE/current/bin (-> $1), $(($(date +%s) - START)) s:"
  ls -1 "$1"/bin | sed "s|^|  $1/bin/|"
}

if [ "${1:-}" = --find ]; then
  [ -x "$CACHE/current/bin/kube-apiserver" ] || die "not built: run bash scripts/kube-apiserver.sh as root"
  echo "$CACHE/current/bin"
  exit 0
fi
[ $# -eq 0 ] || die "unknown argument $1 (usage: $0 [--find])"

# The source package comes from the machine's own Debian mirror: add a deb-src entry beside
# the deb one.
SRC_LIST=/etc/apt/sources.list.d/bpa-deb-src.sources
updated=
apt_update() {
  if [ -z "$updated" ]; then
    apt-get update -qq || die "apt-get update failed"
    updated=1
  fi
}
src_version() {
  apt-cache showsrc kubernetes 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1
}

if [ ! -f "$SRC_LIST" ]; then
  [ "$(id -u)" = 0 ] || die "needs root to add $SRC_LIST and install Debian packages"
  uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -1)
  [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list.d/debian.sources"
  printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" >"$SRC_LIST"
fi
version=$(src_version)
if [ -z "$version" ]; then
  [ "$(id -u)" = 0 ] || die "needs root to run apt-get update"
  apt_update
  version=$(src_version)
  [ -n "$version" ] || die "Debian has no source package 'kubernetes' (apt-cache showsrc kubernetes)"
fi
KEY="$version-$(sha256sum "$SELF" | cut -c1-12)"
OUT="$CACHE/$KEY"

# golang-go: the compiler; etcd-server: the store the tests start; rsync: `make gen_openapi`;
# golang-github-modern-go-reflect2-dev: replaces the vendored reflect2 1.0.1, which crashes
# under Go >= 1.18 on the first custom-resource write; dpkg-dev: `apt-get source`;
# jq: the package's build scripts.
pkgs=(golang-go etcd-server rsync make jq golang-github-modern-go-reflect2-dev dpkg-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ -x "$OUT/bin/kube-apiserver" ] && [ -x "$OUT/bin/kube-controller-manager" ] && [ ${#missing[@]} -eq 0 ]; then
  ln -sfn "$KEY" "$CACHE/current" 2>/dev/null || true
  report "$OUT"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root to install ${missing[*]:-packages} and build into $CACHE"
if [ ${#missing[@]} -gt 0 ]; then
  apt_update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed"
fi
[ -x /usr/bin/etcd ] || die "etcd-server installed no /usr/bin/etcd"

mkdir -p "$CACHE"
# One build at a time: a second run waits, then finds the first one's binaries.
exec 9>"$CACHE/.lock"
flock 9
if [ -x "$OUT/bin/kube-apiserver" ] && [ -x "$OUT/bin/kube-controller-manager" ]; then
  ln -sfn "$KEY" "$CACHE/current"
  report "$OUT"
  exit 0
fi
rm -f "$CACHE/current"
# Always the same directory: the Go build cache keys packages by their path, so only then does
# a rebuild (another version of this script) reuse it.
BUILD="$CACHE/build"
LOG="$CACHE/build.log"
rm -rf "$BUILD"
mkdir -p "$BUILD"
echo "building kube-apiserver and kube-controller-manager $version in $BUILD (log: $LOG); takes minutes"
(cd "$BUILD" && apt-get source -qq kubernetes >"$LOG" 2>&1) || {
  tail -20 "$LOG" >&2
  die "apt-get source kubernetes failed"
}
SRC=$(find "$BUILD" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
[ -n "$SRC" ] || die "apt-get source left no kubernetes-* directory in $BUILD"

# The vendored reflect2 1.0.1 reads Go maps through runtime internals that changed in Go 1.18.
REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -f "$REFLECT2/reflect2.go" ] || die "$REFLECT2 missing (golang-github-modern-go-reflect2-dev)"
rm -rf "$SRC/vendor/github.com/modern-go/reflect2"
cp -r "$REFLECT2" "$SRC/vendor/github.com/modern-go/reflect2"
rm -f "$SRC/vendor/github.com/modern-go/reflect2/go.mod"

# Since Go 1.19, reflect.DeepEqual of two reflect.Values compares what they hold, so the type
# validator's null test takes "" (the zero string) for null and refuses `errorMessage: ""` in a
# custom resource. Null is nil only.
for f in vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go vendor/github.com/go-openapi/validate/type.go; do
  [ -f "$SRC/$f" ] || continue
  sed -i 's/if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {/if data == nil {/' "$SRC/$f"
  grep -q 'reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data))' "$SRC/$f" && die "patching the null test of $f failed"
  grep -q '^	if data == nil {$' "$SRC/$f" || die "the null test of $f has a form this script does not know"
done
grep -q '^	if data == nil {$' "$SRC/vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go" ||
  die "vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go not found or not patched"

export GO111MODULE=off CGO_ENABLED=0 HOME="$BUILD" GOPATH="$SRC/.go" GOFLAGS=
mkdir -p "$GOPATH/src/k8s.io"
ln -sfn ../../.. "$GOPATH/src/k8s.io/kubernetes"
# The build scripts set GOCACHE to _output/local/go/cache; kept outside the source tree, the
# Go build cache makes a rebuild (another version of this script) take a fraction of the time.
# It is for one package version: a new one starts it afresh, so it does not grow without end.
[ "$(cat "$CACHE/go-build.version" 2>/dev/null)" = "$version" ] || rm -rf "$CACHE/go-build"
echo "$version" >"$CACHE/go-build.version"
mkdir -p "$CACHE/go-build" "$SRC/_output/local/go"
ln -sfn "$CACHE/go-build" "$SRC/_output/local/go/cache"
# nice: the machine's two cores are shared with the rest of CI.
(
  cd "$GOPATH/src/k8s.io/kubernetes" &&
    nice -n 10 make gen_openapi &&
    nice -n 10 make WHAT="cmd/kube-apiserver cmd/kube-controller-manager"
) >>"$LOG" 2>&1 || {
  tail -30 "$LOG" >&2
  die "the build failed (log: $LOG)"
}
rm -rf "$OUT"
mkdir -p "$OUT/bin"
cp "$SRC/_output/bin/kube-apiserver" "$SRC/_output/bin/kube-controller-manager" "$OUT/bin/" ||
  die "the build made no binaries in $SRC/_output/bin"
ln -s /usr/bin/etcd "$OUT/bin/etcd"
"$OUT/bin/kube-apiserver" --version >/dev/null || die "the built kube-apiserver does not run"
rm -rf "$BUILD"
# Builds of an older script or package version are not used any more.
find "$CACHE" -mindepth 1 -maxdepth 1 ! -name "$KEY" ! -name 'go-build*' ! -name .lock ! -name build.log \
  -exec rm -rf {} +
ln -sfn "$KEY" "$CACHE/current"
report "$OUT"
