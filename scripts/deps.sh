#!/bin/sh
# Install the Debian packages ndtrace needs to build and test, if missing.
# Idempotent and silent when everything is there.  Not root: print the
# exact apt-get line and fail.  Every tool a test uses is here (mandoc,
# zsh, fish, chromium for the --html rendering test; GNU parallel, sshd,
# rsync, slurm-wlm and munge for the scale-out recipes of
# tests/scaleout-*.bats; python3-torch, CPU only, for the pipeline-parallel
# generator tests/tools/gen_pipeline.py that tests/pipeline-fixtures.bats
# runs): a test fails, never skips, when its tool is missing.
set -u
PKGS="gcc make libc6-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
pkgconf zlib1g-dev libssl-dev libcsv-dev jq bats bats-assert bats-support python3 python3-protobuf
mandoc groff-base time clang libclang-rt-14-dev valgrind
zsh fish chromium python3-torch
parallel openssh-server openssh-client rsync slurm-wlm munge"
[ -n "${ND_EXTRA_PKGS:-}" ] && PKGS="$PKGS $ND_EXTRA_PKGS"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "ndtrace: missing packages:$missing" >&2
	echo "run as root:  apt-get install -y$missing" >&2
	exit 1
fi
echo "ndtrace: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || exit 1
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
