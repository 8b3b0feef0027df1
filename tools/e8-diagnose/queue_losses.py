import struct, sys, collections
def read(path):
    f = open(path, 'rb'); gh = f.read(24)
    magic = struct.unpack('<I', gh[:4])[0]
    nano = magic == 0xa1b23c4d
    out = []
    while True:
        h = f.read(16)
        if len(h) < 16: break
        ts, tu, incl, orig = struct.unpack('<IIII', h)
        d = f.read(incl)
        t = ts + tu * (1e-9 if nano else 1e-6)
        if len(d) < 14 + 20 or struct.unpack('!H', d[12:14])[0] != 0x0800: continue
        ip = d[14:]; ihl = (ip[0] & 15) * 4; tot = struct.unpack('!H', ip[2:4])[0]
        if ip[9] != 6: continue
        src = '.'.join(map(str, ip[12:16])); tcp = ip[ihl:]
        sport = struct.unpack('!H', tcp[0:2])[0]; seq = struct.unpack('!I', tcp[4:8])[0]
        doff = (tcp[12] >> 4) * 4; payload = tot - ihl - doff
        if payload <= 0: continue
        out.append((t, f'{src}:{sport}', seq))
    return out
inp = read(sys.argv[1]); outp = read(sys.argv[2])
t0 = max(inp[0][0], outp[0][0]) + 1; t1 = min(inp[-1][0], outp[-1][0]) - 1
# a packet offered in [t0, t1-0.2] is delivered within 0.2 s (queue ≤ 100 ms) or dropped
offered = collections.defaultdict(list)
for t, k, s in inp:
    if t0 <= t <= t1 - 0.2: offered[k].append((t, s))
delivered = collections.Counter((k, s) for t, k, s in outp)
rows = []
for k, pk in sorted(offered.items()):
    n = len(pk); lost = 0
    seen = collections.Counter()
    for t, s in pk:
        seen[s] += 1
        if seen[s] > delivered[(k, s)]: lost += 1
    # trains: consecutive packets of this flow with gaps under 0.3 ms
    gaps = [b[0] - a[0] for a, b in zip(pk, pk[1:])]
    trains = 1 + sum(1 for g in gaps if g >= 0.0003)
    kind = 'MP' if k.startswith('10.10.') else 'SP'
    rows.append((kind, k, n, lost, n / trains))
    print(f"{kind} {k:>22} offered {n:6d} dropped {lost:4d} ({100*lost/max(n,1):4.2f}%) mean train {n/trains:4.2f} pkts")
for kind in ('MP', 'SP'):
    r = [x for x in rows if x[0] == kind]
    if r:
        n = sum(x[2] for x in r); l = sum(x[3] for x in r)
        print(f"{kind} total offered {n} dropped {l} ({100*l/n:.2f}%), mean train {sum(x[2] for x in r)/sum(x[2]/x[4] for x in r):.2f}")
