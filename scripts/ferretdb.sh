#!/usr/bin/env bash
# MongoDB-wire-compatible test server for CI/local tests: FerretDB v1.24.2
# (Apache-2.0) embedded in tools/ferretdb; SQLite backend with data under /tmp
# (the default), or PostgreSQL backend in a database of its own.
#
# Usage: [FERRETDB_BACKEND=sqlite|postgresql] scripts/ferretdb.sh build|start|stop|status
#   FERRETDB_BACKEND=postgresql: a new database ferretdb_<random> on the PostgreSQL
#           server of FERRETDB_POSTGRESQL_SERVER (default postgres://postgres@127.0.0.1:5432),
#           created at start (PostgreSQL must run: CI starts it) and dropped at stop.
#           FERRETDB_STATE_DIR (default .ferretdb) lets both backends run side by side.
#   build   go build tools/ferretdb -> tools/ferretdb/bin/ferretdb-test (only if stale)
#   start   build if needed, start in background on a free 127.0.0.1 port
#           (or $FERRETDB_PORT), wait until it accepts connections, write
#           .ferretdb/uri and .ferretdb/pid, print MONGODB_URI=... on stdout
#           (only that line goes to stdout, so `eval "$(scripts/ferretdb.sh start)"`
#           or `scripts/ferretdb.sh start >> "$GITHUB_ENV"` work)
#   stop    SIGTERM the server via .ferretdb/pid, remove its data dir and .ferretdb/
#   status  print MONGODB_URI=... and exit 0 if running, else exit 1
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC_DIR="$ROOT/tools/ferretdb"
BIN="$SRC_DIR/bin/ferretdb-test"
STATE_DIR="${FERRETDB_STATE_DIR:-$ROOT/.ferretdb}"
BACKEND="${FERRETDB_BACKEND:-sqlite}"
PG_SERVER="${FERRETDB_POSTGRESQL_SERVER:-postgres://postgres@127.0.0.1:5432}"
URI_FILE="$STATE_DIR/uri"
PID_FILE="$STATE_DIR/pid"
DATA_FILE="$STATE_DIR/datadir"
PG_DB_FILE="$STATE_DIR/pgdatabase"
LOG_FILE="$STATE_DIR/server.log"
START_TIMEOUT="${FERRETDB_START_TIMEOUT:-30}"

log() { echo "ferretdb: $*" >&2; }
die() { log "error: $*"; exit 1; }

find_go() {
  if [[ -n "${GO:-}" && -x "${GO}" ]]; then echo "$GO"; return; fi
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  if [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go; return; fi
  return 1
}

needs_build() {
  [[ ! -x "$BIN" ]] && return 0
  local f
  for f in "$SRC_DIR/main.go" "$SRC_DIR/go.mod" "$SRC_DIR/go.sum"; do
    [[ -e "$f" && "$f" -nt "$BIN" ]] && return 0
  done
  return 1
}

cmd_build() {
  if ! needs_build; then
    log "binary up to date: ${BIN#"$ROOT"/}"
    return 0
  fi
  local go
  go="$(find_go)" || die "Go toolchain not found (need Go >= 1.24 on PATH, at /usr/local/go/bin/go, or via \$GO). Install from https://go.dev/dl/ or use actions/setup-go in CI."
  log "building ${BIN#"$ROOT"/} with $("$go" version) (first build downloads modules and may take several minutes)..."
  local start=$SECONDS
  mkdir -p "$(dirname "$BIN")"
  # Pure-Go SQLite (modernc.org/sqlite), so no cgo needed. -mod=mod tolerates a
  # go.sum that is missing entries (it is committed complete, so normally a no-op).
  ( cd "$SRC_DIR" && CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" \
      "$go" build -trimpath -ldflags="-s -w" -o "$BIN.tmp" . ) \
    || { rm -f "$BIN.tmp"; die "go build failed"; }
  mv -f "$BIN.tmp" "$BIN"
  log "built in $((SECONDS - start))s"
}

# Prints the pid if the pid file points at a live ferretdb-test process.
running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # guard against pid reuse
  [[ "$(ps -p "$pid" -o comm= 2>/dev/null || true)" == ferretdb-test* ]] || return 1
  echo "$pid"
}

port_open() { # host port
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

cmd_start() {
  local pid
  if pid="$(running_pid)"; then
    log "already running (pid $pid)"
    echo "MONGODB_URI=$(cat "$URI_FILE")"
    return 0
  fi
  cmd_build
  rm -rf "$STATE_DIR"
  mkdir -p "$STATE_DIR"
  local data_dir backend_args
  data_dir="$(mktemp -d /tmp/ferretdb-data.XXXXXX)"
  echo "$data_dir" > "$DATA_FILE"
  case "$BACKEND" in
    sqlite) backend_args=(-dir "$data_dir") ;;
    postgresql)
      command -v psql >/dev/null 2>&1 || die "psql not found (needed to create the PostgreSQL database)"
      local database="ferretdb_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
      psql "$PG_SERVER/postgres" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $database" >&2 \
        || die "cannot create database $database on $PG_SERVER (is PostgreSQL running?)"
      echo "$database" > "$PG_DB_FILE"
      backend_args=(-handler postgresql -postgresql-url "$PG_SERVER/$database")
      ;;
    *) die "FERRETDB_BACKEND must be sqlite or postgresql, not $BACKEND" ;;
  esac

  nohup "$BIN" -listen "127.0.0.1:${FERRETDB_PORT:-0}" "${backend_args[@]}" \
    -log-level "${FERRETDB_LOG_LEVEL:-warn}" </dev/null >"$LOG_FILE" 2>&1 &
  pid=$!
  echo "$pid" > "$PID_FILE"

  local uri="" deadline=$((SECONDS + START_TIMEOUT))
  while (( SECONDS < deadline )); do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$LOG_FILE" >&2 || true
      drop_pg_database
      rm -rf "$data_dir" "$STATE_DIR"
      die "server exited during startup (log above)"
    fi
    if [[ -z "$uri" ]]; then
      uri="$(sed -n 's/^ready \(mongodb:\/\/.*\)$/\1/p' "$LOG_FILE" | head -n1)"
    fi
    if [[ -n "$uri" ]]; then
      local hostport="${uri#mongodb://}"; hostport="${hostport%%/*}"
      if port_open "${hostport%:*}" "${hostport##*:}"; then
        echo "$uri" > "$URI_FILE"
        log "started pid $pid, data in $data_dir"
        echo "MONGODB_URI=$uri"
        return 0
      fi
    fi
    sleep 0.2
  done
  kill "$pid" 2>/dev/null || true
  cat "$LOG_FILE" >&2 || true
  drop_pg_database
  rm -rf "$data_dir" "$STATE_DIR"
  die "server did not accept connections within ${START_TIMEOUT}s"
}

drop_pg_database() {
  [[ -f "$PG_DB_FILE" ]] || return 0
  local database
  database="$(cat "$PG_DB_FILE")"
  [[ "$database" =~ ^ferretdb_[0-9a-f]+$ ]] || return 0
  psql "$PG_SERVER/postgres" -qc "DROP DATABASE IF EXISTS $database" >&2 || log "could not drop $database"
}

cmd_stop() {
  local pid
  if pid="$(running_pid)"; then
    kill -TERM "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "pid $pid did not exit after SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    log "stopped pid $pid"
  else
    log "not running"
  fi
  if [[ -f "$DATA_FILE" ]]; then
    local data_dir
    data_dir="$(cat "$DATA_FILE")"
    [[ "$data_dir" == /tmp/ferretdb-data.* ]] && rm -rf "$data_dir"
  fi
  drop_pg_database
  rm -rf "$STATE_DIR"
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    log "running (pid $pid)"
    echo "MONGODB_URI=$(cat "$URI_FILE")"
  else
    log "not running"
    return 1
  fi
}

case "${1:-}" in
  build) cmd_build ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 build|start|stop|status" >&2; exit 2 ;;
esac
