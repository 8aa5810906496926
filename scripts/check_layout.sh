#!/usr/bin/env bash
# check_layout.sh: every product source file (the libraries' and programs'
# .c/.cc/.h, not tests or benchmarks) is named in CONTRIBUTING.md's layout
# with its job, by its stem in backquotes (`ring_writer` covers
# ring_writer.h and ring_writer.cc). Prints the files it misses and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=CONTRIBUTING.md
missing=()
n=0
while IFS= read -r f; do
  n=$((n + 1))
  stem=$(basename "$f")
  stem=${stem%.*}
  grep -qF "\`$stem" "$doc" || missing+=("$f")
done < <(git ls-files 'proto/include/*' 'storage/src/*' 'storage/include/*' 'client/src/*' \
  'client/include/*' 'config/src/*' 'config/include/*' 'daemon/src/*' 'render/src/*' \
  'render/include/*' 'logctl/*' 'forward/src/*' | grep -E '\.(c|cc|h)$')
if [ ${#missing[@]} -gt 0 ]; then
  echo "check_layout.sh: $doc does not name ${#missing[@]} source file(s); give each a line with its job:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "check_layout.sh: $doc names all $n product source files"
