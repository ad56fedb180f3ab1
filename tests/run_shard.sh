#!/usr/bin/env bash
# run_shard.sh BINARY SPEC INDEX COUNT [OPTION...]: runs shard INDEX (from 0) of COUNT of the
# Catch2 test cases that SPEC selects in BINARY, with Catch2's OPTIONs (e.g. --durations yes).
# A shard is a run of consecutive cases in declaration order: neighbours often compile the same
# kernels, which the later one then finds in the cache. The CPU suite is single-threaded; CTest
# runs its shards side by side (scripts/test.sh: ctest -j 2), so it uses every core. A name
# Catch2 does not read back from the list is an error, never a case left out.
set -euo pipefail
binary=$1 spec=$2 index=$3 count=$4
shift 4
names=$(mktemp) list=$(mktemp) back=$(mktemp)
trap 'rm -f "$names" "$list" "$back"' EXIT
# Catch2 v2 exits with the number of cases it listed, so the listing's status is not checked.
"$binary" "$spec" --list-test-names-only > "$names" || true
[ -s "$names" ] || { echo "run_shard.sh: $binary lists no test case for $spec" >&2; exit 1; }
awk -v i="$index" -v n="$count" 'NF { row[++k] = $0 }
  END { for (j = int(i * k / n) + 1; j <= int((i + 1) * k / n); ++j) print row[j] }' "$names" > "$back" && mv "$back" "$names"
# An empty list would make Catch2 run every case.
[ -s "$names" ] || { echo "run_shard.sh: shard $index of $count has no case"; exit 0; }
# -f reads test specs, in which , [ ] " * and \ are special: escaped, a line matches its case only.
sed 's/[][\\",*]/\\&/g' "$names" > "$list"
"$binary" -f "$list" --list-test-names-only > "$back" || true
if ! cmp -s "$names" "$back"; then
  echo "run_shard.sh: Catch2 reads back other test names than listed (< listed, > read back):" >&2
  diff "$names" "$back" >&2 || true
  exit 1
fi
"$binary" -f "$list" "$@"
