#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL 15 cluster and MEMORY_TEST_POSTGRES_URL pointing at it.
# An already-set MEMORY_TEST_POSTGRES_URL is used as it is. Without server binaries the command
# still runs, and the PostgreSQL tests fail loudly rather than skip.
set -euo pipefail

if [[ -n "${MEMORY_TEST_POSTGRES_URL:-}" ]]; then
  exec "$@"
fi

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
if [[ ! -x "$PG_BIN/initdb" && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
  echo "with-postgres: installing postgresql-15" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15) >&2 || true
fi
if [[ ! -x "$PG_BIN/initdb" ]]; then
  echo "with-postgres: no PostgreSQL binaries at $PG_BIN; PostgreSQL tests will fail" >&2
  exec "$@"
fi

run_pg() {
  if [[ "$(id -u)" == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

PG_DIR=$(mktemp -d /tmp/crmmem-pg.XXXXXX)
chmod 755 "$PG_DIR"
[[ "$(id -u)" == 0 ]] && chown postgres "$PG_DIR"
PG_PORT=${PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}

cleanup() {
  run_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
trap cleanup EXIT

run_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 >/dev/null
run_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
  -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
run_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres crmmem_test

export MEMORY_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/crmmem_test"
echo "with-postgres: PostgreSQL on 127.0.0.1:$PG_PORT" >&2
"$@"
