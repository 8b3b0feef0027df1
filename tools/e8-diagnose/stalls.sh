#!/bin/bash
# Samples, every 2 s in every running E8 bed, the multipath client's subflows and MPTCP
# sockets and the server's side of them (`ss`); every 10 s both namespaces' MIB counters.
# One file per bed in OUTDIR, named after its multipath-client namespace. Start it beside
# `pathpool reproduce convergence-linux` (root); stalls.py reads the files.
# usage: stalls.sh OUTDIR SECONDS
out=$1; n=$2; mkdir -p "$out"
end=$(( $(date +%s) + n )); k=0
while [ "$(date +%s)" -lt "$end" ]; do
  t=$(date +%s.%N)
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^ppe8x[0-9]+mp[0-9]+$'); do
    d=${ns/mp/d}
    {
      echo "@ $t"
      ip netns exec "$ns" ss -tinH state established '( dport = :5201 )'
      echo "@M"; ip netns exec "$ns" ss -MinH
      echo "@D"; ip netns exec "$d" ss -tinmH state established '( sport = :5201 )'
      echo "@DM"; ip netns exec "$d" ss -MinmH
      if [ $((k % 5)) -eq 0 ]; then
        echo "@NSTAT-D"; ip netns exec "$d" nstat -az 2>/dev/null | grep -E 'MPTcp|Prune|RcvQDrop|OFODrop|TCPZeroWindow|TCPWantZeroWindow|TCPToZeroWindow|TCPFromZeroWindow|TCPTimeouts|TCPRcvCollapsed'
        echo "@NSTAT-MP"; ip netns exec "$ns" nstat -az 2>/dev/null | grep -E 'MPTcp|TCPTimeouts|TCPLossProbes|TCPSpuriousRTOs|TCPZeroWindow|TCPFromZeroWindow|TCPToZeroWindow|TCPWantZeroWindow'
      fi
    } >> "$out/$ns.txt" 2>/dev/null
  done
  k=$((k+1))
  sleep 2
done
