import json, sys, subprocess
for d in sys.argv[1:]:
    r = json.load(open(f'{d}/run.json')); m = sum(r['mp_bytes'][30:]); s = sum(r['sp_bytes'][30:])
    ns = {}
    for f in ('mp', 'sp'):
        v = {}
        for l in open(f'{d}/nstat.{f}'):
            p = l.split()
            if len(p) >= 2 and p[1].isdigit(): v[p[0]] = int(p[1])
        ns[f] = v
    rec = {f: 1000 * ns[f].get('TcpExtTCPSackRecovery', 0) / ns[f]['TcpOutSegs'] for f in ns}
    to = {f: ns[f].get('TcpExtTCPTimeouts', 0) for f in ns}
    ds = {f: ns[f].get('TcpExtTCPDSACKRecv', 0) for f in ns}
    pc = subprocess.run(['python3', 'tools/e8-diagnose/queue_losses.py', f'{d}/in.pcap', f'{d}/out.pcap'], capture_output=True, text=True).stdout.strip().splitlines()[-2:]
    print(f"{d}: share(s30-) {100*m/(m+s):.1f}%  recoveries/1000 segs mp {rec['mp']:.2f} sp {rec['sp']:.2f} (x{rec['mp']/rec['sp']:.2f})  timeouts {to}  dsack {ds}")
    for l in pc: print('   ', l)
