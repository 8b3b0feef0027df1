// htsim multipath benchmark driver: 4 parallel paths, each a drop-tail Queue of 250 Mb/s with a
// 1-BDP buffer (3.125 MB) and a 50 ms Pipe each way (ACKs: 50 ms pipe, no queue).
// 100 MultipathTcpSrc connections, COUPLED_INC (LIA), 4 TcpSrc subflows each, subflow k on path k.
// Connections start uniform in [0,10) ms (all subflows of a connection start together), 20 s simulated.
// Usage: multipath [ssthresh_pkts (0 = "infinite", default)] [seed]
#include <chrono>
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

int main(int argc, char** argv) {
    const int NCONN = 100;
    const int NPATHS = 4;
    const double RATE_BPS = 250e6;
    const double SIM_S = 20.0;
    long ssthresh_pkts = argc > 1 ? atol(argv[1]) : 0;
    unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    srand(seed);

    EventList eventlist;
    eventlist.setEndtime(timeFromSec(SIM_S));

    const int mss = Packet::data_packet_size();  // 1500
    mem_b bdp = (mem_b)(RATE_BPS * 0.1 / 8);      // 3,125,000 bytes
    std::vector<Queue*> queues;
    std::vector<Pipe*> fwd, back;
    for (int k = 0; k < NPATHS; k++) {
        Queue* q = new Queue((linkspeed_bps)RATE_BPS, bdp, eventlist, NULL);
        q->setName("bottleneck" + std::to_string(k));
        queues.push_back(q);
        fwd.push_back(new Pipe(timeFromMs(50), eventlist));
        back.push_back(new Pipe(timeFromMs(50), eventlist));
    }

    TcpRtxTimerScanner rtx(timeFromMs(10), eventlist);

    std::vector<TcpSink*> sinks;
    for (int i = 0; i < NCONN; i++) {
        MultipathTcpSrc* msrc = new MultipathTcpSrc(COUPLED_INC, eventlist, NULL);
        MultipathTcpSink* msnk = new MultipathTcpSink(eventlist);
        simtime_picosec start = timeFromMs(drand() * 10.0);
        for (int k = 0; k < NPATHS; k++) {
            TcpSrc* src = new TcpSrc(NULL, NULL, eventlist);
            TcpSink* snk = new TcpSink();
            src->_ssthresh = ssthresh_pkts > 0 ? (uint32_t)(ssthresh_pkts * mss) : 0xffffffffu;
            rtx.registerTcp(*src);
            route_t* out = new route_t();
            out->push_back(queues[k]);
            out->push_back(fwd[k]);
            out->push_back(snk);
            route_t* bk = new route_t();
            bk->push_back(back[k]);
            bk->push_back(src);
            msrc->addSubflow(src);
            msnk->addSubflow(snk);
            src->connect(*out, *bk, *snk, start);
            sinks.push_back(snk);
        }
    }

    uint64_t events = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (eventlist.doNextEvent()) events++;
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();

    uint64_t uniq_bytes = 0, rcvd_bytes = 0;
    for (auto* s : sinks) {
        // unique data bytes at the sink: cumulative ack (minus the 1-byte SYN) + segments held above holes
        if (s->_cumulative_ack > 1) uniq_bytes += s->_cumulative_ack - 1;
        uniq_bytes += (uint64_t)s->_received.size() * mss;
        // every data packet that reached the sink, retransmissions/duplicates included (SYNs are 1 byte)
        rcvd_bytes += s->_packets;
    }
    uint64_t uniq_pkts = uniq_bytes / mss;
    uint64_t pkts = rcvd_bytes / mss;  // the figure compared with pathpool (counts retransmissions too)
    double util = (double)rcvd_bytes * 8 / (RATE_BPS * NPATHS * SIM_S);
    int drops = 0;
    for (auto* q : queues) drops += q->num_drops();
    printf("case=htsim-multipath-n100x4 ssthresh=%s delivered_pkts=%llu unique_pkts=%llu drops=%d events=%llu "
           "wall_s=%.4f pkts_per_s=%.0f util=%.4f\n",
           ssthresh_pkts > 0 ? std::to_string(ssthresh_pkts).c_str() : "inf",
           (unsigned long long)pkts, (unsigned long long)uniq_pkts, drops,
           (unsigned long long)events, wall, pkts / wall, util);
    return 0;
}
