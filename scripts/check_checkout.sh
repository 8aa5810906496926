#!/usr/bin/env bash
# check_checkout.sh: build, test and package logsink the way a user and a
# Debian packager do, from a checkout that is not CI's own:
#   - a clone of HEAD in a private (0700) directory whose path has a space,
#     as a checkout under /root is (uncommitted changes are not in it);
#   - the plain Release build README's users type, tests and benchmarks
#     included, configured for /usr as a packager does; with -Werror here
#     (LOGSINK_WERROR=ON), so that a warning fails CI rather than a user's
#     build, which has no -Werror;
#   - the whole ctest suite in that tree (CI's one optimised build: the
#     presets' trees are for developers);
#   - `cpack -G DEB` from that same tree, then lintian on every package:
#     any lintian error fails, warnings are printed (each one is fixed or
#     overridden with its reason in systemd/deb/lintian/);
#   - hardening-check (devscripts) on every ELF file in the packages: each
#     has Debian's hardening (cmake/Hardening.cmake): PIE, the stack
#     protector, fortified libc calls, full RELRO (relro + BIND_NOW).
# Usage: scripts/check_checkout.sh   (JOBS=N: the build's parallelism;
#   LOGSINK_CHECK_TOP=DIR: make the checkout in DIR/"check dir" and keep it,
#   its build tree is DIR/"check dir"/build (test.sh runs the benchmarks'
#   smoke runs there); LOGSINK_CHECK_KEEP=1: keep the temporary checkout and
#   print where it is)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
if [ -n "${LOGSINK_CHECK_TOP:-}" ]; then
  top=$LOGSINK_CHECK_TOP # the caller's (private, as mktemp -d makes it), kept
else
  top=$(mktemp -d) # mode 0700
  if [ "${LOGSINK_CHECK_KEEP:-0}" = 1 ]; then
    trap 'echo "check_checkout: kept $top"' EXIT
  else
    trap 'rm -rf "$top"' EXIT
  fi
fi
dir="$top/check dir"
git -c advice.detachedHead=false clone -q --no-hardlinks "$src" "$dir" # CI: HEAD may be detached
chmod 0700 "$dir"
echo "check_checkout: $(git -C "$dir" log -1 --format='%h %s') in '$dir'"
cd "$dir"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DLOGSINK_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
# 300 s per test unless the test sets its own limit, as the presets' ctest.
ctest --test-dir build -j "$jobs" --output-on-failure --timeout 300

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
