// htsim driver for issue 17's scenario (scenarios/validation/runaway.toml): one sender with a
// two-subflow connection over two disjoint drop-tail paths, and one TCP flow on each path.
// Every source sits behind its own 1 Gb/s feeder queue (pathpool's zero-delay 1 Gb/s access
// links) and starts at a uniformly random time in the first second (start_spread = "1s").
// htsim's TcpSrc is what pathpool's htsim settings mirror: initial ssthresh 100 packets, RTO
// floor 250 ms, cwnd += MSS²/cwnd per ACK, every partial ACK restarting the timer.
//
// Usage: disjoint CC RATE1_MBPS DELAY1_MS BUF1_PKTS RATE2_MBPS DELAY2_MS BUF2_PKTS SEED
//                 [DURATION_S] [WINDOW_START_S] [SCAN_MS]
//   CC        lia (htsim's COUPLED_INC) or uncoupled
//   DELAY     one-way propagation delay of the path in milliseconds
//   BUF       drop-tail buffer of the path in packets
//   SCAN_MS   period of htsim's retransmission-timer scan (TcpRtxTimerScanner), 10 as in
//             htsim's drivers; a timeout fires at the first scan after the RTO expires
// Defaults: 1000 s, window from 200 s, 10 ms scan. Prints on standard error, for the window, each
// flow's and subflow's throughput in Mb/s and its fast recoveries; htsim prints a line with
// "RTO" and "Flow ID NAME" on standard output for every timeout (names: r1, r2, mp0, mp1).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "config.h"
#include "network.h"
#include "eventlist.h"
#include "queue.h"
#include "pipe.h"
#include "tcp.h"
#include "mtcp.h"
#include "paths.h"
#include "window.h"

int main(int argc, char** argv) {
    if (argc < 9) {
        fprintf(stderr,
                "usage: %s lia|uncoupled RATE1_MBPS DELAY1_MS BUF1_PKTS RATE2_MBPS DELAY2_MS "
                "BUF2_PKTS SEED [DURATION_S] [WINDOW_START_S] [SCAN_MS]\n",
                argv[0]);
        return 2;
    }
    std::string cc = argv[1];
    const double rate_mbps[2] = {atof(argv[2]), atof(argv[5])};
    const double delay_ms[2] = {atof(argv[3]), atof(argv[6])};
    const int buffer_pkts[2] = {atoi(argv[4]), atoi(argv[7])};
    unsigned seed = (unsigned)atoi(argv[8]);
    double duration_s = argc > 9 ? atof(argv[9]) : 1000.0;
    double window_s = argc > 10 ? atof(argv[10]) : 200.0;
    double scan_ms = argc > 11 ? atof(argv[11]) : 10.0;
    srand(seed);
    srandom(seed);

    EventList ev;
    ev.setEndtime(timeFromSec(duration_s));
    std::vector<Queue*> queues;
    std::vector<Pipe*> pipes;
    for (int p = 0; p < 2; p++) {
        queues.push_back(new Queue(speedFromMbps(rate_mbps[p]), memFromPkt(buffer_pkts[p]), ev, NULL));
        pipes.push_back(new Pipe(timeFromMs(delay_ms[p]), ev));
    }
    TcpRtxTimerScanner rtx(timeFromUs(scan_ms * 1000), ev);
    auto add = [&](TcpSrc* src, TcpSink* sink, int p, const char* name) {
        src->setName(name);
        rtx.registerTcp(*src);
        Queue* feeder = new Queue(speedFromMbps(1000.0), memFromPkt(2000), ev, NULL);
        connect_tcp(src, sink, {feeder, queues[p], pipes[p]}, {pipes[p]}, timeFromMs(1000 * drand()));
    };
    std::vector<TcpSink*> sinks;  // r1, r2, mp0, mp1
    std::vector<TcpSrc*> srcs;
    const char* tcp_names[2] = {"r1", "r2"};
    for (int p = 0; p < 2; p++) {
        TcpSrc* src = new TcpSrc(NULL, NULL, ev);
        TcpSink* sink = new TcpSink();
        add(src, sink, p, tcp_names[p]);
        sinks.push_back(sink);
        srcs.push_back(src);
    }
    MultipathTcpSrc* msrc = new MultipathTcpSrc(cc == "lia" ? COUPLED_INC : UNCOUPLED, ev, NULL);
    MultipathTcpSink* msnk = new MultipathTcpSink(ev);
    const char* sub_names[2] = {"mp0", "mp1"};
    for (int p = 0; p < 2; p++) {
        TcpSrc* src = new TcpSrc(NULL, NULL, ev);
        TcpSink* sink = new TcpSink();
        msrc->addSubflow(src);
        msnk->addSubflow(sink);
        add(src, sink, p, sub_names[p]);
        sinks.push_back(sink);
        srcs.push_back(src);
    }
    WindowStart window(ev, sinks, timeFromSec(window_s));
    while (ev.doNextEvent()) {
    }

    const char* names[4] = {"r1", "r2", "mp0", "mp1"};
    double span = duration_s - window_s;
    fprintf(stderr, "cc=%s seed=%u", cc.c_str(), seed);
    for (int k = 0; k < 4; k++)
        fprintf(stderr, " %s=%.3f(fr=%u)", names[k], window.since(k) * 8 / span / 1e6, srcs[k]->_drops);
    fprintf(stderr, "\n");
    return 0;
}
