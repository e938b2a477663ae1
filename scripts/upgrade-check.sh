#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An upgrade in place: OLD `blegate run` fills a cache with undelivered records (5 simulated
# straps for 30 s, the backend unreachable), then NEW opens the same cache (its migrations
# run) with the loopback backend up, until every one of those records has left its outbox.
# Prints the migrations before and after, and how many of the old pending records reached
# the backend, how many are missing and how many were sent twice. Exit 1 if any is
# missing or sent twice.
#   scripts/upgrade-check.sh OLD_BLEGATE NEW_BLEGATE
# NEW_BLEGATE also runs the simulator; the backend is this tree's debug blegate-test-backend.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
[ $# = 2 ] || { sed -n 3,10p "$0" >&2; exit 2; }
OLD=$1 NEW=$2
BACKEND="$(swift build --show-bin-path)/blegate-test-backend"
[ -x "$BACKEND" ] || swift build --product blegate-test-backend
command -v sqlite3 >/dev/null || { echo "upgrade-check: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
source scripts/simulated-gym.sh
simulated_gym "$NEW" "$BACKEND" migrate --straps 5 --adapters 1 --rate 1 --seed 3
conf() { printf '[gateway]\nid = "migrate-demo"\nstate_directory = "%s"\n[backend]\nurl = "%s"\ntoken_file = "%s"\nunpaired = "send"\n[status]\nsocket = "%s"\n' "$work" "$1" "$token_file" "$work/status.sock" > "$work/blegate.toml"; }
db="$work/cache.sqlite"
# Phase 1: the old binary, backend unreachable: everything stays pending.
conf "http://127.0.0.1:9"
"$OLD" run --config "$work/blegate.toml" --bus "$bus" > "$work/old.out" 2>&1 & old=$!
sleep 30; kill -TERM $old; wait $old || true
pending_old=$(sqlite3 -readonly "$db" "SELECT count(*) FROM outbox")+$(sqlite3 -readonly "$db" "SELECT count(*) FROM outbox_unpaired")
sqlite3 -readonly "$db" "SELECT id FROM record WHERE sequence IN (SELECT sequence FROM outbox UNION SELECT sequence FROM outbox_unpaired) ORDER BY sequence" > "$work/pending-ids"
echo "old binary: $(sqlite3 -readonly "$db" 'SELECT count(*) FROM record') records, pending $pending_old = $(wc -l < "$work/pending-ids"); migrations: $(sqlite3 -readonly "$db" 'SELECT group_concat(identifier) FROM grdb_migrations')"
# Phase 2: the new binary with the backend up.
conf "$url"
"$NEW" run --config "$work/blegate.toml" --bus "$bus" > "$work/new.out" 2>&1 & new=$!
for _ in $(seq 1 120); do
    sleep 1
    left=$(sqlite3 -readonly "$db" "SELECT id FROM record WHERE sequence IN (SELECT sequence FROM outbox UNION SELECT sequence FROM outbox_unpaired)" 2>/dev/null | grep -cFxf "$work/pending-ids" || true)
    [ "$left" = 0 ] && break
done
kill -TERM $new; wait $new || true
echo "new binary: migrations $(sqlite3 -readonly "$db" 'SELECT group_concat(identifier) FROM grdb_migrations'); old pending still pending: $left"
tok=$(cat "$token_file")
curl -s -H "Authorization: Bearer $tok" "$url/_admin/records" > "$work/records.json"
curl -s -H "Authorization: Bearer $tok" "$url/_admin/requests" > "$work/requests.json"
python3 - "$work" <<'PY'
import json,sys
w=sys.argv[1]
pend=[l.strip() for l in open(w+'/pending-ids') if l.strip()]
recs=json.load(open(w+'/records.json'))['records']
ids=[r['record']['id'] for r in recs]
sent=sum((q.get('items') or 0) for q in json.load(open(w+'/requests.json'))['requests'] if q['path'].endswith('/metrics') and q['status']==200)
missing=[i for i in pend if i not in set(ids)]
twice=sent-len(set(ids))
print(f"backend: {len(ids)} records stored ({len(set(ids))} distinct), {sent} sent in accepted requests ({twice} sent twice); of the old binary's {len(pend)} pending: {len(pend)-len(missing)} delivered, {len(missing)} missing")
sys.exit(1 if missing or twice or not pend else 0)
PY
