#!/usr/bin/env bash
# Runs CI (.ci/run) N times, each in a fresh clone of the committed HEAD, to
# catch flaky tests: what passes once may fail one run in ten.
#
#   scripts/ci-repeat.sh [--hog | --hogs K] N
#
#   --hog     run two CPU hogs (`node -e 'for(;;){}'`) beside every run, as on
#             a busy CI machine (with the suite's own work: load 4 or more on
#             two cores); they are killed when the run ends.
#   --hogs K  run K hogs instead.
#
# Prints `run i: pass|fail (seconds)` per run and a summary; keeps the log of
# every failed run; exits 1 if any run failed. Uncommitted changes are NOT
# tested (commit first).
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

hog=0
runs=''
expect_hogs=0
for arg in "$@"; do
  if [ "$expect_hogs" = 1 ]; then
    case "$arg" in '' | *[!0-9]*) echo "ci-repeat: --hogs takes a number" >&2; exit 2 ;; esac
    hog="$arg"
    expect_hogs=0
    continue
  fi
  case "$arg" in
    --hog) hog=2 ;;
    --hogs) expect_hogs=1 ;;
    -h | --help) usage; exit 0 ;;
    '' | *[!0-9]*) echo "ci-repeat: unexpected argument '$arg'" >&2; usage >&2; exit 2 ;;
    *) runs="$arg" ;;
  esac
done
if [ -z "$runs" ] || [ "$runs" -lt 1 ]; then usage >&2; exit 2; fi

root="$(git rev-parse --show-toplevel)"
head="$(git -C "$root" rev-parse HEAD)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "ci-repeat: uncommitted changes are not tested; running the committed HEAD ${head:0:12}" >&2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/oncely-ci-repeat.XXXXXX")"
hog_pids=''
stop_hog() {
  for pid in $hog_pids; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  hog_pids=''
}
cleanup() {
  stop_hog
  # The clones are large (node_modules); the logs of failed runs are kept.
  find "$work" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "ci-repeat: ${runs} run(s) of .ci/run at ${head:0:12}$([ "$hog" -gt 0 ] && echo ", with ${hog} CPU hog(s)"); logs in ${work}"
passed=0
failed=0
total_start=$SECONDS
for i in $(seq 1 "$runs"); do
  dir="$work/run-$i"
  log="$work/run-$i.log"
  git clone --quiet --no-checkout "$root" "$dir"
  # HEAD may be a branch the clone's default checkout would not pick (a worktree) or detached.
  git -C "$dir" cat-file -e "$head^{commit}" 2>/dev/null || git -C "$dir" fetch --quiet origin "$head"
  git -C "$dir" checkout --quiet --detach "$head"

  for _ in $(seq 1 "$hog"); do
    node -e 'for(;;){}' &
    hog_pids="$hog_pids $!"
  done
  start=$SECONDS
  if (cd "$dir" && bash .ci/run) >"$log" 2>&1; then
    result=pass
    passed=$((passed + 1))
    rm -f "$log"
  else
    result=fail
    failed=$((failed + 1))
  fi
  stop_hog
  echo "run $i: $result ($((SECONDS - start)) s)"
  rm -rf "$dir"
done

echo "summary: ${passed}/${runs} passed, ${failed} failed, $((SECONDS - total_start)) s in all"
if [ "$failed" -gt 0 ]; then
  echo "logs of the failed runs: ${work}/run-*.log"
  exit 1
fi
rmdir "$work" 2>/dev/null || true
