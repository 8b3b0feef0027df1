// htsim driver for the cross-check of `pathpool reproduce wischik-nsdi11`, case (a): Wischik
// et al. NSDI'11 "fairness at shared bottlenecks" (thesis E6a) with pathpool's parameters
// (scenarios/reproductions/wischik-friendliness.toml): one bottleneck of RATE packets/s,
// a 50 ms pipe each way, a two-subflow MultipathTcpSrc and one TcpSrc, every source
// starting uniformly in [0, 1) s, 300 s simulated, shares over 150-300 s.
//
// Usage: friendliness CC QUEUE RATE_PKTS BUFFER_PKTS SEED [log]
//   CC      lia (htsim's COUPLED_INC) or uncoupled
//   QUEUE   random (RandomQueue, 3-packet band) or droptail (Queue)
//   log     print every fast recovery and timeout after 150 s with the time since the
//           source's last new ACK (the mechanism of docs/decisions.md D121)
// Prints one line: the connection's share of the link's capacity, the utilisation, the fast
// recoveries of each source and the timeouts (counted from htsim's own "RTO" lines, which
// go to standard output; the summary goes to standard error).
#include <cstdio>
#include <cstdlib>
#include <map>
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

// Records, per source, the last new ACK, and reports how long before each fast retransmit
// and timeout it came.
struct GapLogger : public TcpLogger {
    EventList& ev;
    bool print;
    std::map<TcpSrc*, simtime_picosec> last_new;
    explicit GapLogger(EventList& e, bool p) : ev(e), print(p) {}
    void logTcp(TcpSrc& s, TcpEvent e) override {
        simtime_picosec now = ev.now();
        if (e == TCP_RCV) last_new[&s] = now;
        if (!print || now < timeFromSec(150)) return;
        if (e == TCP_RCV_DUP_FASTXMIT || e == TCP_TIMEOUT)
            fprintf(stderr, "%s %s t=%.3f s, %.1f ms after the last new ACK\n",
                    e == TCP_TIMEOUT ? "timeout" : "fast-retransmit", s.str().c_str(),
                    timeAsSec(now), timeAsMs(now - last_new[&s]));
    }
};

int main(int argc, char** argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s lia|uncoupled random|droptail RATE_PKTS BUFFER_PKTS SEED [log]\n", argv[0]);
        return 2;
    }
    std::string cc = argv[1], queue_type = argv[2];
    double rate_pkts = atof(argv[3]);
    int buffer_pkts = atoi(argv[4]);
    unsigned seed = (unsigned)atoi(argv[5]);
    bool log = argc > 6 && std::string(argv[6]) == "log";
    srand(seed);
    srandom(seed);

    EventList ev;
    ev.setEndtime(timeFromSec(300.001));
    linkspeed_bps rate = speedFromPktps(rate_pkts);
    Queue* q = queue_type == "random"
        ? new RandomQueue(rate, memFromPkt(buffer_pkts), ev, NULL, memFromPkt(3))
        : new Queue(rate, memFromPkt(buffer_pkts), ev, NULL);
    Pipe fwd(timeFromMs(50), ev), back(timeFromMs(50), ev);
    GapLogger logger(ev, log);
    TcpRtxTimerScanner rtx(timeFromMs(10), ev);
    MultipathTcpSrc* msrc = new MultipathTcpSrc(cc == "lia" ? COUPLED_INC : UNCOUPLED, ev, NULL);
    MultipathTcpSink* msnk = new MultipathTcpSink(ev);
    std::vector<TcpSrc*> srcs;
    std::vector<TcpSink*> sinks;
    for (int k = 0; k < 3; k++) {
        TcpSrc* src = new TcpSrc(&logger, NULL, ev);
        TcpSink* sink = new TcpSink();
        src->setName(k < 2 ? "subflow" + std::to_string(k) : "tcp");
        rtx.registerTcp(*src);
        route_t* out = new route_t();
        out->push_back(q);
        out->push_back(&fwd);
        out->push_back(sink);
        route_t* ack = new route_t();
        ack->push_back(&back);
        ack->push_back(src);
        simtime_picosec start = timeFromMs(drand() * 1000.0);
        if (k < 2) {
            msrc->addSubflow(src);
            msnk->addSubflow(sink);
        }
        src->connect(*out, *ack, *sink, start);
        srcs.push_back(src);
        sinks.push_back(sink);
    }
    WindowStart window(ev, sinks, timeFromSec(150));
    while (ev.doNextEvent()) {
    }

    double delivered[3];
    for (int k = 0; k < 3; k++) delivered[k] = window.since(k);
    double mp = delivered[0] + delivered[1], all = mp + delivered[2];
    double capacity = rate_pkts * Packet::data_packet_size() * 150.0;
    fprintf(stderr,
            "cc=%s queue=%s rate=%g buffer=%d seed=%u mp_share=%.1f utilisation=%.1f "
            "fast_recoveries=%u/%u/%u\n",
            cc.c_str(), queue_type.c_str(), rate_pkts, buffer_pkts, seed, 100 * mp / capacity,
            100 * all / capacity, srcs[0]->_drops, srcs[1]->_drops, srcs[2]->_drops);
    return 0;
}
