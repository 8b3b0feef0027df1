// htsim driver for the cross-check of `pathpool reproduce wischik-nsdi11`, case (c): Wischik
// et al. NSDI'11 "choosing efficient paths" (thesis E6c) with pathpool's parameters
// (scenarios/reproductions/wischik-pooling.toml): three links L0, L1, L2 of RATE packets/s,
// 50 ms one way each; connection i has a one-hop path over L(i) and a two-hop path over L(i+1)
// then L(i+2); ACKs return over pipes of the same delays. Every source starts uniformly in
// [0, 1) s; 300 s simulated; figures over 150-300 s.
//
// Usage: pooling CC QUEUE RATE_PKTS BUFFER_PKTS SEED
//   CC      lia (htsim's COUPLED_INC) or uncoupled
//   QUEUE   random (RandomQueue, 3-packet band) or droptail (Queue)
// Prints on standard error the connections' mean goodput as a percentage of one link's
// capacity (pathpool's "throughput / C") and the two-hop subflows' part of the traffic;
// htsim prints a line containing "RTO" on standard output for every timeout.
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
    if (argc < 6) {
        fprintf(stderr, "usage: %s lia|uncoupled random|droptail RATE_PKTS BUFFER_PKTS SEED\n", argv[0]);
        return 2;
    }
    std::string cc = argv[1], queue_type = argv[2];
    double rate_pkts = atof(argv[3]);
    int buffer_pkts = atoi(argv[4]);
    unsigned seed = (unsigned)atoi(argv[5]);
    srand(seed);
    srandom(seed);

    EventList ev;
    ev.setEndtime(timeFromSec(300.001));
    linkspeed_bps rate = speedFromPktps(rate_pkts);
    std::vector<Queue*> queues;
    std::vector<Pipe*> fwd, back;
    for (int l = 0; l < 3; l++) {
        queues.push_back(queue_type == "random"
            ? new RandomQueue(rate, memFromPkt(buffer_pkts), ev, NULL, memFromPkt(3))
            : new Queue(rate, memFromPkt(buffer_pkts), ev, NULL));
        fwd.push_back(new Pipe(timeFromMs(50), ev));
        back.push_back(new Pipe(timeFromMs(50), ev));
    }
    TcpRtxTimerScanner rtx(timeFromMs(10), ev);
    // sinks[2i] is connection i's one-hop subflow, sinks[2i + 1] its two-hop one.
    std::vector<TcpSink*> sinks;
    for (int i = 0; i < 3; i++) {
        MultipathTcpSrc* msrc = new MultipathTcpSrc(cc == "lia" ? COUPLED_INC : UNCOUPLED, ev, NULL);
        MultipathTcpSink* msnk = new MultipathTcpSink(ev);
        for (int hops = 1; hops <= 2; hops++) {
            TcpSrc* src = new TcpSrc(NULL, NULL, ev);
            TcpSink* sink = new TcpSink();
            rtx.registerTcp(*src);
            route_t* out = new route_t();
            route_t* ack = new route_t();
            if (hops == 1) {
                out->push_back(queues[i]);
                out->push_back(fwd[i]);
                ack->push_back(back[i]);
            } else {
                int a = (i + 1) % 3, b = (i + 2) % 3;
                out->push_back(queues[a]);
                out->push_back(fwd[a]);
                out->push_back(queues[b]);
                out->push_back(fwd[b]);
                ack->push_back(back[b]);
                ack->push_back(back[a]);
            }
            out->push_back(sink);
            ack->push_back(src);
            simtime_picosec start = timeFromMs(drand() * 1000.0);
            msrc->addSubflow(src);
            msnk->addSubflow(sink);
            src->connect(*out, *ack, *sink, start);
            sinks.push_back(sink);
        }
    }
    WindowStart window(ev, sinks, timeFromSec(150));
    while (ev.doNextEvent()) {
    }

    double all = 0, two_hop = 0;
    for (size_t k = 0; k < sinks.size(); k++) {
        double d = window.since(k);
        all += d;
        if (k % 2 == 1) two_hop += d;
    }
    double capacity = rate_pkts * Packet::data_packet_size() * 150.0;
    fprintf(stderr, "cc=%s queue=%s rate=%g buffer=%d seed=%u throughput_over_C=%.1f two_hop_part=%.1f\n",
            cc.c_str(), queue_type.c_str(), rate_pkts, buffer_pkts, seed, 100 * all / 3 / capacity,
            100 * two_hop / all);
    return 0;
}
