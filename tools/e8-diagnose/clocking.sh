#!/bin/bash
# usage: [ONE_SUBFLOW_AFTER=S | BACKUP_AFTER=S] [QUICKACK=1] tools/e8-diagnose/clocking.sh MP_CC SECONDS OUTDIR [mp_as_tcp]
# One E8 bed (8 Mb/s, 100 ms, 100-kB queue per path). For seconds 40-60 it captures both
# clients' interfaces in both directions (what each sends and the ACKs it receives, on one
# clock) and both sides of path 1's emulator (which packets its queue dropped); then the
# server's sockets (`ss -tinm`) and TCP counters. clocking.py, acks.py and episodes.py read
# them. With ONE_SUBFLOW_AFTER=S (4-39) the client's second-path subflows are closed at
# second S, and the MPTCP connections run on path 1 alone; with BACKUP_AFTER=S they become
# backup subflows at second S, open but idle. With QUICKACK=1 the server's routes get
# `quickack 1` at second 3: the server acknowledges every segment at once (no delayed ACKs),
# for the Reno flows and the subflows alike.
B=${PATHPOOL_LINUX:-target/fast-test/pathpool-linux}
CC=$1; SECS=$2; OUT=$3; ASTCP=${4:-false}
mkdir -p "$OUT"
P='{"rate_bps":8000000,"rtt_ms":100.0,"loss":0.0,"queue_bytes":100000,"queue_packets":null}'
CFG="{\"paths\":[$P,$P],\"mp_cc\":\"$CC\",\"sp_cc\":\"reno\",\"mp_as_tcp\":$ASTCP,\"seconds\":$SECS}"
$B e8 --config "$CFG" --tag ck > "$OUT/run.json" 2> "$OUT/progress.txt" &
E=$!
sleep 3
ns() { ip netns list | grep -o "ppck$1[0-9]*" | head -1; }
MP=$(ns mp); SP=$(ns sp); W1=$(ns w1); D=$(ns d)
if [ -n "${QUICKACK:-}" ]; then
    # A route's quickack attribute turns delayed ACKs off for the sockets that use it; a
    # route change makes the open sockets look their route up again.
    ip -n "$D" -4 route show | while read -r route; do
        eval "ip -n \"\$D\" route change $route quickack 1"
    done
    ip -n "$D" -4 route show > "$OUT/d.routes"
fi
if [ -n "${ONE_SUBFLOW_AFTER:-}" ]; then
    # Removing the client's `subflow` endpoint closes the subflows made from it: the MPTCP
    # connections go on with their path-1 subflow alone.
    sleep $((ONE_SUBFLOW_AFTER - 3))
    ip -n "$MP" mptcp endpoint flush
    sleep $((40 - ONE_SUBFLOW_AFTER))
elif [ -n "${BACKUP_AFTER:-}" ]; then
    # Marking the endpoint backup makes its subflows backups (MP_PRIO): they stay open, and
    # the scheduler sends on them only if no other subflow can send.
    sleep $((BACKUP_AFTER - 3))
    ip -n "$MP" mptcp endpoint change 10.10.2.1 backup
    sleep $((40 - BACKUP_AFTER))
else
    sleep 37
fi
for i in 1 2; do
    ip netns exec "$MP" timeout 20 tcpdump -i m$i -s 80 -w "$OUT/m$i.pcap" tcp 2>/dev/null &
    ip netns exec "$SP" timeout 20 tcpdump -i s$i -s 80 -w "$OUT/s$i.pcap" tcp 2>/dev/null &
done
ip netns exec "$W1" timeout 20 tcpdump -i wa -s 80 -w "$OUT/in.pcap" 'tcp and dst net 10.12.0.0/16' 2>/dev/null &
ip netns exec "$W1" timeout 20 tcpdump -i wb -s 80 -w "$OUT/out.pcap" 'tcp and dst net 10.12.0.0/16' 2>/dev/null &
sleep 5
ip netns exec "$MP" ss -tinH state established > "$OUT/mp.ss"
ip netns exec "$D" ss -tinmH state established > "$OUT/d.ss"
ip netns exec "$D" nstat -as > "$OUT/nstat.d"
wait $E
