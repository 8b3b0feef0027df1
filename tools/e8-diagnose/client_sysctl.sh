#!/bin/bash
# Sets a sysctl in every E8 bed's multipath-client namespace as it appears (polling every
# 0.2 s; a bed's build takes seconds, so it is set before the bed's connections open), for
# SECONDS. Start it just before `pathpool reproduce convergence-linux` (root). Prints one
# line per namespace with the value read back.
# usage: client_sysctl.sh NAME VALUE SECONDS
# e.g.:  client_sysctl.sh net.ipv4.tcp_wmem "4096 16384 524288" 930
name=$1; v=$2; end=$(( $(date +%s) + $3 )); declare -A done
while [ "$(date +%s)" -lt "$end" ]; do
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^ppe8x[0-9]+mp[0-9]+$'); do
    if [ -z "${done[$ns]}" ]; then
      ip netns exec "$ns" sysctl -qw "$name=$v" 2>/dev/null && done[$ns]=1 \
        && echo "$(date +%T.%N) $ns $name = $(ip netns exec "$ns" sysctl -n "$name")"
    fi
  done
  sleep 0.2
done
