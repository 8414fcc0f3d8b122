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

# Every script runs on the Node.js that `install` brought (the root's `node` devDependency, first on the
# scripts' PATH): better-sqlite3 13 crashes a Node.js older than 22.
node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 22 || (major === 22 && minor < 12)) {
    console.error(`Tests need Node.js 22.12 or newer, this is ${process.version} (${process.execPath}): run them with \`npx --yes pnpm@10.34.9 test\`, which puts the project'"'"'s own Node.js first.`);
    process.exit(1);
  }
  console.error(`Node.js ${process.version} (${process.execPath})`);
'

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
# No test may write the default data directory of the one who runs them.
data_existed=false
[[ -e data ]] && data_existed=true
summaries="$(mktemp)"
npx --no-install mocha | tee -a "$summaries" || status=$?

# The HTTP suites and the in-process CLI suites once more on each persistent store: the same tests, the
# other adapters. Each test server or CLI test gets a data directory (SQLite) or a database on $MONGODB_URI
# (MongoDB) of its own; suites that stub the store keep memory.
CLI_STORE_SUITES=(cli.test.js cli-data.test.js cli-checks.test.js keys.test.js accounts.test.js hostile-cli.test.js device-boxes.test.js firmware.test.js box-simulate.test.js)
http_pass() {
  echo "HTTP and CLI suites again on the $1 store (HORTUS_TEST_STORE=$1)" >&2
  HORTUS_TEST_STORE="$1" npx --no-install mocha --no-config --reporter ./scripts/mocha-summary-reporter.cjs \
    --timeout 10000 --exit 'packages/e2e/dist/test/**/*.test.js' \
    "${CLI_STORE_SUITES[@]/#/packages/cli/dist/test/}" | tee -a "$summaries" || status=$?
}
http_pass sqlite
[[ -n "$skipped" ]] || http_pass mongodb
# One closing line for every pass, in the reporter's form.
sed -nE 's/^mocha: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/p' "$summaries" |
  awk '{ p += $1; f += $2; s += $3 } END { printf "\nevery pass together:\nmocha: %d passed, %d failed, %d skipped\n", p, f, s }'
rm -f "$summaries"
if [[ "$data_existed" == false && -e data ]]; then
  echo "A test wrote ./data (the default HORTUS_DATA_DIR): give it a data directory of its own." >&2
  status=1
fi

if [[ -n "$skipped" ]]; then
  banner "$skipped"
  if [[ "${CI:-}" == "true" ]]; then
    echo "CI=true: skipping the Mongo suites is a failure." >&2
    [[ $status -ne 0 ]] || status=1
  fi
fi
exit "$status"
