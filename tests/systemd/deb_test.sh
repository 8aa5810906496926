#!/usr/bin/env bash
# deb_test.sh: `cpack -G DEB` on a built /usr tree gives the packages
# (liblogsink0, logsink, logsink-dev; python3-logsink is checked by
# deb_python_check.sh) with the right files, modes, control data and
# maintainer scripts, and they install, configure and purge with dpkg
# inside a scratch root. Lintian's verdict is CI's packaging stage.
# Usage: deb_test.sh <source dir> <build dir> <Debian version>
# A build dir for another prefix is not touched: the packages then come from
# <build>/deb-usr, a product-only /usr tree configured and built here (once).
set -euo pipefail
src=$1 build=$(realpath "$2") version=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
if [ "$prefix" != /usr ]; then
  # cpack must refuse this tree rather than ship /usr/local paths.
  if (cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/refused") > "$tmp/refused.log" 2>&1; then
    bad "cpack built packages from a CMAKE_INSTALL_PREFIX=$prefix tree"
  fi
  grep -q 'needs -DCMAKE_INSTALL_PREFIX=/usr' "$tmp/refused.log" || { cat "$tmp/refused.log"; bad "no prefix hint"; }
  gen=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build/CMakeCache.txt")
  build=$build/deb-usr
  cmake -S "$src" -B "$build" -G "$gen" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
    -DLOGSINK_BUILD_TESTS=OFF -DLOGSINK_BUILD_BENCH=OFF > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
  cmake --build "$build" -j2 > "$tmp/build.log" 2>&1 || { tail -50 "$tmp/build.log"; exit 1; }
fi

# ---- build the packages from the already-built tree ----
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out") > "$tmp/cpack.log" 2>&1 || {
  cat "$tmp/cpack.log"; exit 1; }
arch=$(dpkg --print-architecture)
lib=$tmp/out/liblogsink0_${version}_${arch}.deb
deb=$tmp/out/logsink_${version}_${arch}.deb
dev=$tmp/out/logsink-dev_${version}_${arch}.deb
ls -l "$tmp/out"/*.deb
[ -f "$lib" ] && [ -f "$deb" ] && [ -f "$dev" ] || { echo "expected $lib, $deb and $dev"; ls "$tmp/out"; exit 1; }

# ---- file lists and modes ----
mode() { stat -c %a "$1"; }
check() {  # check <root> <path> <mode>
  if [ ! -e "$1/$2" ]; then bad "missing /$2"; return; fi
  [ "$(mode "$1/$2")" = "$3" ] || bad "/$2 has mode $(mode "$1/$2"), want $3"
}
dpkg-deb -x "$lib" "$tmp/l"
dpkg-deb -x "$deb" "$tmp/d"
dpkg-deb -x "$dev" "$tmp/v"
check "$tmp/d" usr/bin/logsinkd 755
check "$tmp/d" usr/bin/logctl 755
check "$tmp/d" usr/bin/logsink_hello 755
check "$tmp/d" lib/systemd/system/logsinkd.service 644
check "$tmp/d" lib/systemd/system/logsinkd.socket 644
check "$tmp/d" lib/systemd/system/logsinkd-syslog.socket 644
check "$tmp/d" usr/lib/sysusers.d/logsink.conf 644
check "$tmp/d" usr/lib/tmpfiles.d/logsink.conf 644
check "$tmp/d" usr/lib/sysctl.d/60-logsink.conf 644
check "$tmp/d" usr/share/bash-completion/completions/logctl 644
check "$tmp/d" usr/share/bash-completion/completions/logsinkd 644
fwd=$tmp/out/logsink-forward_${version}_${arch}.deb
if [ -f "$fwd" ]; then
  dpkg-deb -x "$fwd" "$tmp/f"
  check "$tmp/f" usr/bin/logsink-forward 755
  check "$tmp/f" usr/share/doc/logsink-forward/examples/central.toml 644
  check "$tmp/f" usr/share/doc/logsink-forward/examples/rsyslog-receiver.conf 644
  check "$tmp/f" usr/share/bash-completion/completions/logsink-forward 644
else
  bad "no logsink-forward package"
fi
grep -qx 'net.unix.max_dgram_qlen = 512' "$tmp/d/usr/lib/sysctl.d/60-logsink.conf" ||
  bad "60-logsink.conf does not set net.unix.max_dgram_qlen = 512"
check "$tmp/d" etc/logsink/logsinkd.toml 644
check "$tmp/d" usr/share/man/man1/logctl.1.gz 644
check "$tmp/d" usr/share/man/man1/logsink_hello.1.gz 644
check "$tmp/d" usr/share/man/man8/logsinkd.8.gz 644
ls "$tmp"/l/usr/lib/*/liblogsink.so.* >/dev/null 2>&1 || bad "no liblogsink.so.* in liblogsink0"
check "$tmp/v" usr/include/logsink/logsink.h 644
check "$tmp/v" usr/share/man/man3/liblogsink.3.gz 644
for pair in l:liblogsink0 d:logsink v:logsink-dev; do
  r=${pair%%:*} p=${pair#*:}
  check "$tmp/$r" "usr/share/doc/$p/copyright" 644
  check "$tmp/$r" "usr/share/doc/$p/changelog.Debian.gz" 644
done
# Every man page names the project's version on its .TH line.
for m in "$tmp"/d/usr/share/man/*/*.gz "$tmp"/v/usr/share/man/*/*.gz; do
  zcat "$m" | grep "^\.TH .*\"logsink ${version%-*}\"" >/dev/null || bad "$m: .TH does not name logsink ${version%-*}"
done
ls "$tmp"/v/usr/lib/*/liblogsink.a >/dev/null 2>&1 || bad "no liblogsink.a in logsink-dev"
ls "$tmp"/v/usr/lib/*/liblogsink.so >/dev/null 2>&1 || bad "no liblogsink.so link in logsink-dev"
ls "$tmp"/v/usr/lib/*/pkgconfig/logsink.pc >/dev/null 2>&1 || bad "no logsink.pc"
ls "$tmp"/v/usr/lib/*/cmake/logsink/logsinkConfig.cmake >/dev/null 2>&1 || bad "no logsinkConfig.cmake"
# Nothing may land under the build machine's prefix or outside the FHS roots.
for r in l d v; do
  stray=$(cd "$tmp/$r" && find . -type f | grep -Ev '^\./(usr/|lib/systemd/system/|etc/logsink/)' || true)
  [ -z "$stray" ] || bad "unexpected files in the $r package: $stray"
  [ ! -e "$tmp/$r/usr/local" ] || bad "/usr/local in the $r package"
done
# The packages must not overlap (dpkg would refuse the second one).
overlap=$( (for r in l d v; do (cd "$tmp/$r" && find . -type f); done) | sort | uniq -d)
[ -z "$overlap" ] || bad "files in both packages: $overlap"
grep -q '^prefix=/usr$' "$tmp"/v/usr/lib/*/pkgconfig/logsink.pc || bad "logsink.pc prefix is not /usr"
grep -q '^ExecStart=/usr/bin/logsinkd --config /etc/logsink/logsinkd.toml ' \
  "$tmp/d/lib/systemd/system/logsinkd.service" || bad "ExecStart does not run /usr/bin/logsinkd with /etc/logsink"

# python3-logsink has a check of its own.
"$(dirname "$0")/deb_python_check.sh" "$tmp/out/python3-logsink_${version}_all.deb" || bad "python3-logsink"

# ---- control data ----
info=$(dpkg-deb -I "$deb")
echo "$info" | sed -n '/Package:/,$p'
for s in postinst prerm postrm conffiles; do
  echo "$info" | grep -Eq "^ +[0-9]+ bytes, +[0-9]+ lines +\*? *$s( |$)" || bad "no $s in the control archive"
done
dpkg-deb -e "$deb" "$tmp/ctl"
grep -qx /etc/logsink/logsinkd.toml "$tmp/ctl/conffiles" || bad "logsinkd.toml is not a conffile"
for s in postinst prerm postrm; do [ "$(mode "$tmp/ctl/$s")" = 755 ] || bad "$s mode $(mode "$tmp/ctl/$s")"; done
echo "$info" | grep -q '^ Depends:.*libuv1' || bad "logsink does not depend on libuv1 (shlibdeps)"
dpkg-deb -f "$dev" Depends | grep -qx "liblogsink0 (= $version)" || bad "logsink-dev Depends: $(dpkg-deb -f "$dev" Depends)"
dpkg-deb -f "$deb" Depends | grep -q "liblogsink0 (= $version)" || bad "logsink Depends: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -e "$lib" "$tmp/libctl"
grep -qx 'activate-noawait ldconfig' "$tmp/libctl/triggers" || bad "liblogsink0 has no ldconfig trigger"
grep -Eq '^liblogsink 0 liblogsink0 \(>= ' "$tmp/libctl/shlibs" || bad "liblogsink0 shlibs: $(cat "$tmp/libctl/shlibs")"
! grep -hv '^ *#' "$tmp/libctl/postinst" "$tmp/libctl/postrm" | grep -qw ldconfig ||
  bad "liblogsink0 scripts call ldconfig (the trigger does)"

# ---- install, configure, purge in a scratch root ----
# --force-script-chrootless runs the maintainer scripts on this system with
# DPKG_ROOT=<root>; they honour it (sysusers/tmpfiles --root, no systemctl),
# so nothing outside the root is touched. Dependencies (libc6, libuv1, ...)
# are not in the scratch dpkg database, hence --force-depends.
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
: > "$root/etc/passwd"; : > "$root/etc/group"; : > "$root/etc/shadow"; : > "$root/etc/gshadow"
dpkgr() { dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root \
  --log=/dev/null "$@"; }
real_passwd=$(sha256sum /etc/passwd /etc/group)
# The quick start (scripts/run.sh as root) leaves a root-owned directory and
# ring where the service, which runs as logsink, must open it: installing
# hands them over.
mkdir -m 0750 -p "$root/var/lib/logsink"
: > "$root/var/lib/logsink/logsink.ring"
chmod 0640 "$root/var/lib/logsink/logsink.ring"
dpkgr -i "$lib" "$deb" "$dev" > "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; bad "dpkg -i failed"; }
[ "$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Status}' logsink)" = "install ok installed" ] ||
  bad "logsink not installed in the scratch root"
grep -q '^logsink:' "$root/etc/passwd" || bad "postinst did not create the logsink user in the root"
grep -q '^logsink:' "$root/etc/group" || bad "postinst did not create the logsink group in the root"
[ -d "$root/var/lib/logsink" ] && [ "$(mode "$root/var/lib/logsink")" = 750 ] ||
  bad "/var/lib/logsink missing or not 0750 in the root"
[ -x "$root/usr/bin/logsinkd" ] || bad "logsinkd not installed"
ring_owner=$(stat -c '%u:%g %a' "$root/var/lib/logsink/logsink.ring")
want_owner="$(awk -F: '$1 == "logsink" { print $3 }' "$root/etc/passwd"):$(awk -F: '$1 == "logsink" { print $3 }' "$root/etc/group") 640"
[ "$ring_owner" = "$want_owner" ] ||
  bad "a ring left by root is $ring_owner after install, not $want_owner (postinst)"
[ "$real_passwd" = "$(sha256sum /etc/passwd /etc/group)" ] || bad "the real /etc/passwd or /etc/group changed"
echo 'log_level = "debug"' >> "$root/etc/logsink/logsinkd.toml"
dpkgr -r logsink-dev logsink liblogsink0 >> "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; bad "dpkg -r failed"; }
[ ! -e "$root/usr/bin/logsinkd" ] || bad "logsinkd left after remove"
[ -f "$root/etc/logsink/logsinkd.toml" ] || bad "remove deleted the edited conffile"
dpkgr -P logsink >> "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; bad "dpkg -P failed"; }
[ ! -e "$root/etc/logsink/logsinkd.toml" ] || bad "purge left the conffile"
[ ! -e "$root/var/lib/logsink" ] || bad "purge left /var/lib/logsink"
[ -z "$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Status}' logsink 2>/dev/null)" ] ||
  [ "$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Status}' logsink)" = "unknown ok not-installed" ] ||
  bad "logsink still known after purge"

[ $fail = 0 ] && echo "deb packages: files, modes, control data, install/remove/purge in a scratch root OK"
exit $fail
