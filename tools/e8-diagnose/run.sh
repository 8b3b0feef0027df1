#!/bin/bash
# usage: tools/e8-diagnose/run.sh MP_CC SECONDS OUTDIR [mp_as_tcp]   (captures seconds 40-70 on wire 1 both sides)
B=${PATHPOOL_LINUX:-target/fast-test/pathpool-linux}
CC=$1; SECS=$2; OUT=$3; ASTCP=${4:-false}
mkdir -p $OUT
P='{"rate_bps":8000000,"rtt_ms":100.0,"loss":0.0,"queue_bytes":100000,"queue_packets":null}'
CFG="{\"paths\":[$P,$P],\"mp_cc\":\"$CC\",\"sp_cc\":\"reno\",\"mp_as_tcp\":$ASTCP,\"seconds\":$SECS}"
$B e8 --config "$CFG" --tag dg > $OUT/run.json 2> $OUT/progress.txt &
E=$!
sleep 3
MP=$(ip netns list | grep -o "ppdgmp[0-9]*" | head -1); SP=$(ip netns list | grep -o "ppdgsp[0-9]*" | head -1); W1=$(ip netns list | grep -o "ppdgw1[0-9]*" | head -1)
ip netns exec $MP bash -c "while :; do echo T \$(date +%s.%N); ss -tinH state established; sleep 0.2; done" > $OUT/mp.ss 2>/dev/null &
A=$!
ip netns exec $SP bash -c "while :; do echo T \$(date +%s.%N); ss -tinH state established; sleep 0.2; done" > $OUT/sp.ss 2>/dev/null &
C=$!
sleep 37
ip netns exec $W1 timeout 30 tcpdump -i wa -s 80 -w $OUT/in.pcap 'tcp and src net 10.0.0.0/8 and dst net 10.12.0.0/16' 2>/dev/null &
ip netns exec $W1 timeout 30 tcpdump -i wb -s 80 -w $OUT/out.pcap 'tcp and dst net 10.12.0.0/16' 2>/dev/null &
sleep $((SECS-45)); for n in $MP $SP; do ip netns exec $n nstat -as > $OUT/nstat.$( [ $n = $MP ] && echo mp || echo sp ) 2>/dev/null; done
wait $E
kill $A $C 2>/dev/null
