#!/bin/bash
# usage: tools/e8-diagnose/clocking.sh MP_CC SECONDS OUTDIR [mp_as_tcp]
# One E8 bed (8 Mb/s, 100 ms, 100-kB queue per path). For seconds 40-60 it captures both
# clients' interfaces in both directions (what each sends and the ACKs it receives, on one
# clock) and both sides of path 1's emulator (which packets its queue dropped). clocking.py
# reads them.
B=${PATHPOOL_LINUX:-target/fast-test/pathpool-linux}
CC=$1; SECS=$2; OUT=$3; ASTCP=${4:-false}
mkdir -p "$OUT"
P='{"rate_bps":8000000,"rtt_ms":100.0,"loss":0.0,"queue_bytes":100000,"queue_packets":null}'
CFG="{\"paths\":[$P,$P],\"mp_cc\":\"$CC\",\"sp_cc\":\"reno\",\"mp_as_tcp\":$ASTCP,\"seconds\":$SECS}"
$B e8 --config "$CFG" --tag ck > "$OUT/run.json" 2> "$OUT/progress.txt" &
E=$!
sleep 3
ns() { ip netns list | grep -o "ppck$1[0-9]*" | head -1; }
MP=$(ns mp); SP=$(ns sp); W1=$(ns w1)
sleep 37
for i in 1 2; do
    ip netns exec "$MP" timeout 20 tcpdump -i m$i -s 80 -w "$OUT/m$i.pcap" tcp 2>/dev/null &
    ip netns exec "$SP" timeout 20 tcpdump -i s$i -s 80 -w "$OUT/s$i.pcap" tcp 2>/dev/null &
done
ip netns exec "$W1" timeout 20 tcpdump -i wa -s 80 -w "$OUT/in.pcap" 'tcp and dst net 10.12.0.0/16' 2>/dev/null &
ip netns exec "$W1" timeout 20 tcpdump -i wb -s 80 -w "$OUT/out.pcap" 'tcp and dst net 10.12.0.0/16' 2>/dev/null &
sleep 5
ip netns exec "$MP" ss -tinH state established > "$OUT/mp.ss"
wait $E
