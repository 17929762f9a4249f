#!/usr/bin/env bash
# Local set-up on a machine with Postgres and Redis installed (the node-svc kind): installs the pinned pnpm
# globally when it is missing, starts Postgres and Redis when they
# are down, installs Debian's chromium for the console's browser test when it is missing (root and apt
# only; otherwise that one test is skipped, saying so), writes .env with their URLs when it does not
# exist, and migrates the saga schema.
set -euo pipefail
cd "$(dirname "$0")/.."

# The README's set-up runs through `npx pnpm@…`; put the same pinned pnpm on PATH for every later command
# (`pnpm demo`, `pnpm test`). The version is the one package.json's packageManager names.
# Why npm's global bin and not `command -v pnpm`: under `npx pnpm@… bootstrap`, PATH holds npx's own
# temporary pnpm, which is gone once npx exits.
pnpm_version=$(node -p 'require("./package.json").packageManager.split("@")[1]')
global_pnpm="$(npm prefix -g 2>/dev/null)/bin/pnpm"
if [ ! -x "$global_pnpm" ] || [ "$("$global_pnpm" --version 2>/dev/null)" != "$pnpm_version" ]; then
  echo "installing pnpm@$pnpm_version globally"
  npm install -g "pnpm@$pnpm_version" 2>&1 >/dev/null | { grep -v "Unknown env config" >&2 || true; }
fi

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 1; done
fi

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (for test/console-browser.test.ts)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 ||
      echo "chromium could not be installed: the console's browser test will be skipped"
  else
    echo "chromium is not installed: the console's browser test will be skipped (apt-get install chromium)"
  fi
fi

if [ ! -f .env ]; then
  cat > .env <<'ENV'
DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
REDIS_URL=redis://127.0.0.1:6379
SAGA_DB_SCHEMA=saga
ENV
  echo "wrote .env"
fi

set -a; . ./.env; set +a
pnpm --silent migrate
