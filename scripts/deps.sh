#!/usr/bin/env bash
# deps.sh: install the Debian 12 packages logsink needs to build, test and run.
# Idempotent: installs only what is missing; runs `apt-get update` at most once.
# Must run as root (or with sudo available) on Debian 12.
set -euo pipefail

pkgs=(
  g++ cmake ninja-build pkg-config
  libuv1-dev libspdlog-dev libfmt-dev libtoml11-dev libsystemd-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
  python3 python3-venv python3-pip python3-setuptools python3-wheel systemd dpkg-dev lintian git
  devscripts                         # hardening-check, scripts/check_checkout.sh
  clang libclang-rt-14-dev libffi-dev
  clang-format                       # scripts/check_format.sh (the tree's style, enforced)
  libnats-dev
  libzstd-dev liblz4-dev             # compressed ring blocks (proto/FORMAT.md)
  nats-server rsyslog rsyslog-relp   # the servers logsink-forward's tests talk to
  libnss-wrapper                     # a hosts file of a test's own (tests/forward)
  bsdutils                           # logger(1), tests/syslog (Essential: normally present)
)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# rsyslog and nats-server are test peers here, not this machine's services:
# no package's postinst may start a service (policy-rc.d exit 101).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
