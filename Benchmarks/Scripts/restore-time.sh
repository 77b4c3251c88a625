#!/usr/bin/env bash
# restore-time.sh s3://BUCKET/PREFIX [ROUNDS=5]
#
# Alternates `statejournal restore` of a replica into an empty directory with
# `aws s3 cp --recursive` of the same prefix, ROUNDS times each (the order flips every round),
# dropping the page cache before each run when it can (root). Prints the wall time and the peak
# resident set size (/usr/bin/time -v) of every run. Needs AWS_ENDPOINT_URL (or S3_ENDPOINT) and
# the keys in the environment (source the s3.env of .ci/ceph-rgw-start), a release build of
# statejournal (STATEJOURNAL, default .build/release/statejournal) and aws.
# See "Requests and costs at the default settings" in BackingUpAndMovingAStore.md.
set -u
replica=${1:?usage: restore-time.sh s3://BUCKET/PREFIX [ROUNDS]}
rounds=${2:-5}
endpoint=${AWS_ENDPOINT_URL:-${S3_ENDPOINT:?set AWS_ENDPOINT_URL or S3_ENDPOINT}}
statejournal=${STATEJOURNAL:-.build/release/statejournal}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

run() { # NAME COMMAND...
  local name=$1
  shift
  rm -rf "$scratch/target"
  sync
  [ -w /proc/sys/vm/drop_caches ] && echo 3 >/proc/sys/vm/drop_caches
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$scratch/time" "$@" >"$scratch/out" 2>&1
  local status=$?
  end=$(date +%s.%N)
  [ $status = 0 ] || { echo "$name failed ($status):"; cat "$scratch/out"; }
  printf '%-7s %7.3f s  peak RSS %6d KiB\n' "$name" "$(echo "$end - $start" | bc)" \
    "$(awk -F': ' '/Maximum resident/ {print $2}' "$scratch/time")"
}
restore() { run restore "$statejournal" restore "$replica" --into "$scratch/target" --endpoint "$endpoint"; }
copy() { run aws aws --endpoint-url "$endpoint" s3 cp --recursive --quiet "$replica" "$scratch/target"; }
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then restore; copy; else copy; restore; fi
done
