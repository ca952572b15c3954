#!/usr/bin/env bash
# `make run`: the retrieval sidecar in the background, the memory service in the foreground.
# Ctrl-C (or SIGTERM) stops both. Recall answers "degraded" until the sidecar has loaded its model.
# Both read the shared secret from data/retrieval-secret, which dev mode creates (0600) on first
# use: only processes that can read that file can call the sidecar.
set -euo pipefail
BIN=${BIN:-.venv/bin}
mkdir -p data
export RETRIEVAL_SHARED_SECRET_FILE=${RETRIEVAL_SHARED_SECRET_FILE:-$PWD/data/retrieval-secret}
RETRIEVAL_DEV_MODE=${RETRIEVAL_DEV_MODE:-1} "$BIN/python" -m retrieval_service serve \
    >data/retrieval.log 2>&1 &
sidecar=$!
trap 'kill -TERM "$sidecar" 2>/dev/null; wait "$sidecar" 2>/dev/null || true' EXIT
echo "retrieval sidecar starting (pid $sidecar, log data/retrieval.log)"
MEMORY_DEV_MODE=${MEMORY_DEV_MODE:-1} "$BIN/python" -m memory_service serve
