#!/usr/bin/env bash
# check_format.sh: every C and C++ file the repository tracks must be as
# clang-format (Debian 12's, version 14) writes it with the tree's
# .clang-format. Prints the files that differ and exits 1; `--fix` rewrites
# them in place instead. Runs in seconds; scripts/test.sh runs it first.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=check
[ "${1:-}" = --fix ] && mode=fix
command -v clang-format >/dev/null || { echo "check_format.sh: clang-format is not installed (scripts/deps.sh installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cc' '*.hpp' '*.cpp')
bad=()
for f in "${files[@]}"; do
  if [ "$mode" = fix ]; then
    clang-format -i "$f"
  elif ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format.sh: ${#bad[@]} file(s) differ from clang-format's output:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix with: bash scripts/check_format.sh --fix (or clang-format -i FILE)" >&2
  exit 1
fi
echo "check_format.sh: ${#files[@]} files formatted as .clang-format says"
