#!/usr/bin/env bash
# check_checkout.sh: build, test and package logsink the way a user and a
# Debian packager do, from a checkout that is not CI's own:
#   - a clone of HEAD in a private (0700) directory whose path has a space,
#     as a checkout under /root is (uncommitted changes are not in it);
#   - the plain Release build README's users type (no preset, so no -Werror:
#     a compiler's new warning must not break it), tests and benchmarks
#     included, configured for /usr as a packager does;
#   - in that tree, the tests a build of its own can break: the fast subset
#     (label unit), the client library as installed and linked (client),
#     the daemon's own tests (daemon), systemd and packaging; the whole
#     suite ran on the same commit in test.sh's first two stages, and
#     running it a third time here took 11 of CI's minutes;
#   - `cpack -G DEB` from that same tree, then lintian on every package:
#     any lintian error fails, warnings are printed (each one is fixed or
#     overridden with its reason in systemd/deb/lintian/);
#   - hardening-check (devscripts) on every ELF file in the packages: each
#     has Debian's hardening (cmake/Hardening.cmake): PIE, the stack
#     protector, fortified libc calls, full RELRO (relro + BIND_NOW).
# Usage: scripts/check_checkout.sh   (JOBS=N: the build's parallelism;
#   LOGSINK_CHECK_KEEP=1: keep the checkout and print where it is)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
top=$(mktemp -d) # mode 0700
if [ "${LOGSINK_CHECK_KEEP:-0}" = 1 ]; then
  trap 'echo "check_checkout: kept $top"' EXIT
else
  trap 'rm -rf "$top"' EXIT
fi
dir="$top/check dir"
git -c advice.detachedHead=false clone -q --no-hardlinks "$src" "$dir" # CI: HEAD may be detached
chmod 0700 "$dir"
echo "check_checkout: $(git -C "$dir" log -1 --format='%h %s') in '$dir'"
cd "$dir"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build -j "$jobs" --output-on-failure -L 'unit|client|daemon|systemd|packaging'

(cd build && cpack -G DEB -B "$dir/build/packages" >/dev/null)
debs=("$dir"/build/packages/*.deb)
ls -l "${debs[@]}"
# Errors fail the run; warnings and info are shown so that they stay visible.
lintian --fail-on error --display-info --tag-display-limit 0 "${debs[@]}"
# Control-flow protection (-fcf-protection) is not among Debian 12's flags
# (dpkg-buildflags has no "branch" feature there): not required.
unpacked="$top/unpacked"
for d in "${debs[@]}"; do dpkg-deb -x "$d" "$unpacked"; done
mapfile -t elfs < <(find "$unpacked" -type f -exec sh -c 'head -c 4 "$1" | grep -q "^.ELF"' _ {} \; -print | sort)
[ ${#elfs[@]} -gt 0 ] || { echo "check_checkout: no ELF file in the packages" >&2; exit 1; }
hardening-check --nocfprotection "${elfs[@]}"
echo "check_checkout: build, ctest, packages, lintian and hardening-check OK"
