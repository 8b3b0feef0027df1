// htsim driver for the cross-check of `pathpool reproduce wischik-nsdi11`, case (b): the WiFi/3G
// scenario of htsim's own multipath driver (sim/tests/main.cpp, its default parameters, as
// scenarios/reproductions/wischik-mismatch.toml takes them): "3G" 166 pkt/s, RTT 150 ms,
// RandomQueue of 3 + 12·BDP packets; "WiFi" 400 pkt/s, RTT 10 ms, RandomQueue of
// 3 + max(10, 4·BDP) packets; every source behind its own feeder queue at twice the path's
// rate; a two-subflow connection and one TCP flow on each path (main.cpp's TCP_1 = TCP_2 = 1),
// starting in the first 50 ms as there. 300 s simulated, figures over 150-300 s.
//
// Usage: mismatch CC CAP SEED
//   CC    lia (htsim's COUPLED_INC) or uncoupled
//   CAP   1: the subflows stop growing while queueing is half their RTT (main.cpp's CAP
//         default, a heuristic pathpool does not model); 0: they do not
// Prints on standard error the connection's share against the WiFi TCP flow (pathpool's
// "MP share") and the utilisation of both links.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "config.h"
#include "network.h"
#include "eventlist.h"
#include "queue.h"
#include "randomqueue.h"
#include "pipe.h"
#include "tcp.h"
#include "mtcp.h"
#include "window.h"

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s lia|uncoupled CAP SEED\n", argv[0]);
        return 2;
    }
    std::string cc = argv[1];
    int cap = atoi(argv[2]);
    unsigned seed = (unsigned)atoi(argv[3]);
    srand(seed);
    srandom(seed);

    EventList ev;
    ev.setEndtime(timeFromSec(300.001));
    // Path 0 is 3G (main.cpp's path 1), path 1 WiFi (its path 2).
    const double pkts[2] = {166, 400};
    const simtime_picosec rtt[2] = {timeFromMs(150), timeFromMs(10)};
    int wifi_buffer = std::max(10, (int)(timeAsSec(rtt[1]) * pkts[1] * 4));
    const mem_b buffer[2] = {memFromPkt(3 + timeAsSec(rtt[0]) * pkts[0] * 12), memFromPkt(3 + wifi_buffer)};
    std::vector<Queue*> queues;
    std::vector<Pipe*> pipes;
    for (int p = 0; p < 2; p++) {
        queues.push_back(new RandomQueue(speedFromPktps(pkts[p]), buffer[p], ev, NULL, memFromPkt(3)));
        pipes.push_back(new Pipe(rtt[p] / 2, ev));
    }
    TcpRtxTimerScanner rtx(timeFromMs(10), ev);
    auto add = [&](TcpSrc* src, TcpSink* sink, int p) {
        src->_ssthresh = (uint32_t)(timeAsSec(rtt[p]) * pkts[p] * 1000);
        rtx.registerTcp(*src);
        Queue* feeder = new Queue(speedFromPktps(pkts[p]) * 2, memFromPkt(2000), ev, NULL);
        route_t* out = new route_t();
        out->push_back(feeder);
        out->push_back(queues[p]);
        out->push_back(pipes[p]);
        out->push_back(sink);
        route_t* ack = new route_t();
        ack->push_back(pipes[p]);
        ack->push_back(src);
        src->connect(*out, *ack, *sink, timeFromMs(50 * drand()));
    };
    std::vector<TcpSink*> sinks;  // TCP on 3G, TCP on WiFi, subflow on 3G, subflow on WiFi
    for (int p = 0; p < 2; p++) {
        TcpSrc* src = new TcpSrc(NULL, NULL, ev);
        TcpSink* sink = new TcpSink();
        add(src, sink, p);
        sinks.push_back(sink);
    }
    MultipathTcpSrc* msrc = new MultipathTcpSrc(cc == "lia" ? COUPLED_INC : UNCOUPLED, ev, NULL);
    MultipathTcpSink* msnk = new MultipathTcpSink(ev);
    for (int p = 0; p < 2; p++) {
        TcpSrc* src = new TcpSrc(NULL, NULL, ev);
        TcpSink* sink = new TcpSink();
        src->_cap = cap;
        msrc->addSubflow(src);
        msnk->addSubflow(sink);
        add(src, sink, p);
        sinks.push_back(sink);
    }
    WindowStart window(ev, sinks, timeFromSec(150));
    while (ev.doNextEvent()) {
    }

    double d[4];
    for (int k = 0; k < 4; k++) d[k] = window.since(k);
    double mp = d[2] + d[3];
    double capacity = (pkts[0] + pkts[1]) * Packet::data_packet_size() * 150.0;
    fprintf(stderr, "cc=%s cap=%d seed=%u mp_share=%.1f utilisation=%.1f\n", cc.c_str(), cap, seed,
            100 * mp / (mp + d[1]), 100 * (mp + d[0] + d[1]) / capacity);
    return 0;
}
