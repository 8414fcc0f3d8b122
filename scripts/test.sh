#!/usr/bin/env bash
# The README's test command: builds everything, then runs every package's tests in one mocha process.
# The Mongo suites run against $MONGODB_URI when it is set; otherwise against a FerretDB test server
# started here (needs Go, or a FerretDB binary built before) and stopped on exit. When neither is
# available they are skipped with a loud banner, and under CI=true that is a failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

banner() {
  local line='!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
  printf '\n%s\n!!! %s\n%s\n\n' "$line" "$1" "$line" >&2
}

has_go() {
  [[ -n "${GO:-}" && -x "${GO}" ]] || command -v go >/dev/null 2>&1 || [[ -x /usr/local/go/bin/go ]]
}

npx --no-install tsc -b

skipped=""
if [[ -z "${MONGODB_URI:-}" ]]; then
  if has_go || [[ -x tools/ferretdb/bin/ferretdb-test ]]; then
    # Reuse a server that was already running (and leave it running); stop only the one started here.
    if bash scripts/ferretdb.sh status >/dev/null 2>&1; then
      eval "$(bash scripts/ferretdb.sh status 2>/dev/null)"
    else
      trap 'bash scripts/ferretdb.sh stop' EXIT
      eval "$(bash scripts/ferretdb.sh start)"
    fi
  else
    skipped="MONGO SUITES SKIPPED: MONGODB_URI is not set and Go is not installed, so no FerretDB test server could be started. Set MONGODB_URI=mongodb://... or install Go >= 1.24."
  fi
fi

if [[ -n "$skipped" ]]; then
  banner "$skipped"
else
  export MONGODB_URI
  # Scheme and host only: a URI may carry a password.
  echo "Mongo suites run against $(sed -E 's#^([a-z+]+://)([^@/]*@)?([^/?]*).*#\1\3#' <<<"$MONGODB_URI")" >&2
fi

status=0
summaries="$(mktemp)"
npx --no-install mocha | tee -a "$summaries" || status=$?

# The HTTP suites once more on the Mongo store (issue 4): the same tests, the other adapter. Each test
# server gets a database of its own on $MONGODB_URI; suites that stub the store keep memory.
if [[ -z "$skipped" ]]; then
  echo "HTTP suites again on the Mongo store (HORTUS_TEST_STORE=mongodb)" >&2
  HORTUS_TEST_STORE=mongodb npx --no-install mocha --no-config --reporter ./scripts/mocha-summary-reporter.cjs \
    --timeout 10000 --exit 'packages/http-koa/dist/test/**/*.test.js' | tee -a "$summaries" || status=$?
  # One closing line for both passes, in the reporter's form.
  sed -nE 's/^mocha: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/p' "$summaries" |
    awk '{ p += $1; f += $2; s += $3 } END { printf "\nboth passes together:\nmocha: %d passed, %d failed, %d skipped\n", p, f, s }'
fi
rm -f "$summaries"

if [[ -n "$skipped" ]]; then
  banner "$skipped"
  if [[ "${CI:-}" == "true" ]]; then
    echo "CI=true: skipping the Mongo suites is a failure." >&2
    [[ $status -ne 0 ]] || status=1
  fi
fi
exit "$status"
