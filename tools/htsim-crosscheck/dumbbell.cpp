// htsim dumbbell benchmark driver: 100 NewReno TcpSrc/TcpSink over one drop-tail Queue.
// 1 Gb/s bottleneck, buffer = 1 BDP (12.5 MB), 50 ms Pipe each way (ACKs: 50 ms pipe, no queue),
// 1500-byte packets (htsim mss = 1500), starts uniform in [0,10) ms, 20 s simulated.
// Usage: dumbbell [ssthresh_pkts (0 = "infinite", default)] [seed]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "config.h"
#include "network.h"
#include "eventlist.h"
#include "queue.h"
#include "pipe.h"
#include "tcp.h"

int main(int argc, char** argv) {
    const int NFLOWS = 100;
    const double RATE_BPS = 1e9;
    const double SIM_S = 20.0;
    long ssthresh_pkts = argc > 1 ? atol(argv[1]) : 0;
    unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    srand(seed);

    EventList eventlist;
    eventlist.setEndtime(timeFromSec(SIM_S));

    const int mss = Packet::data_packet_size();  // 1500
    mem_b bdp = (mem_b)(RATE_BPS * 0.1 / 8);      // 12,500,000 bytes
    Queue queue((linkspeed_bps)RATE_BPS, bdp, eventlist, NULL);
    queue.setName("bottleneck");
    Pipe pipe_fwd(timeFromMs(50), eventlist);
    Pipe pipe_back(timeFromMs(50), eventlist);

    TcpRtxTimerScanner rtx(timeFromMs(10), eventlist);

    std::vector<TcpSrc*> srcs;
    std::vector<TcpSink*> sinks;
    for (int i = 0; i < NFLOWS; i++) {
        TcpSrc* src = new TcpSrc(NULL, NULL, eventlist);
        TcpSink* snk = new TcpSink();
        src->_ssthresh = ssthresh_pkts > 0 ? (uint32_t)(ssthresh_pkts * mss) : 0xffffffffu;
        rtx.registerTcp(*src);
        route_t* out = new route_t();
        out->push_back(&queue);
        out->push_back(&pipe_fwd);
        out->push_back(snk);
        route_t* back = new route_t();
        back->push_back(&pipe_back);
        back->push_back(src);
        src->connect(*out, *back, *snk, timeFromMs(drand() * 10.0));
        srcs.push_back(src);
        sinks.push_back(snk);
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
    double util = (double)rcvd_bytes * 8 / (RATE_BPS * SIM_S);
    printf("case=htsim-dumbbell-n100 ssthresh=%s delivered_pkts=%llu unique_pkts=%llu drops=%d events=%llu "
           "wall_s=%.4f pkts_per_s=%.0f util=%.4f\n",
           ssthresh_pkts > 0 ? std::to_string(ssthresh_pkts).c_str() : "inf",
           (unsigned long long)pkts, (unsigned long long)uniq_pkts, queue.num_drops(),
           (unsigned long long)events, wall, pkts / wall, util);
    return 0;
}
