// htsim driver for the cross-check of `pathpool reproduce convergence` (thesis E8, done in
// simulation): scenarios/reproductions/mptcp-convergence.toml. Two disjoint paths of RATE bit/s
// with a 50 ms pipe each way and a drop-tail buffer of BUFFER bytes (random loss LOSS on
// arrival at the queue, 0 for none); four two-subflow MultipathTcpSrc connections (one
// subflow on each path) and four TcpSrc flows (two on each path); every source starts
// uniformly in [0, 1) s. The final share is the multipath connections' part of the bytes
// delivered in the last fifth of DURATION seconds.
//
// Usage: convergence CC RATE_BPS BUFFER_BYTES LOSS SEED [DURATION_S]
//   CC   lia (htsim's COUPLED_INC) or uncoupled
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "config.h"
#include "network.h"
#include "eventlist.h"
#include "randomqueue.h"
#include "pipe.h"
#include "tcp.h"
#include "mtcp.h"
#include "window.h"

int main(int argc, char** argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s lia|uncoupled RATE_BPS BUFFER_BYTES LOSS SEED [DURATION_S]\n", argv[0]);
        return 2;
    }
    std::string cc = argv[1];
    double rate_bps = atof(argv[2]);
    mem_b buffer = (mem_b)atol(argv[3]);
    double loss = atof(argv[4]);
    unsigned seed = (unsigned)atoi(argv[5]);
    double duration = argc > 6 ? atof(argv[6]) : 1800.0;
    srand(seed);
    srandom(seed);

    EventList ev;
    ev.setEndtime(timeFromSec(duration + 0.001));
    std::vector<RandomQueue*> queues;
    std::vector<Pipe*> fwd, back;
    for (int p = 0; p < 2; p++) {
        // A band of 0 bytes: drop-tail, plus htsim's random loss on arrival.
        RandomQueue* q = new RandomQueue((linkspeed_bps)rate_bps, buffer, ev, NULL, 0);
        q->set_packet_loss_rate(loss);
        queues.push_back(q);
        fwd.push_back(new Pipe(timeFromMs(50), ev));
        back.push_back(new Pipe(timeFromMs(50), ev));
    }
    TcpRtxTimerScanner rtx(timeFromMs(10), ev);
    std::vector<TcpSink*> mp_sinks, sp_sinks;
    auto add = [&](TcpSrc* src, TcpSink* sink, int p) {
        rtx.registerTcp(*src);
        route_t* out = new route_t();
        out->push_back(queues[p]);
        out->push_back(fwd[p]);
        out->push_back(sink);
        route_t* ack = new route_t();
        ack->push_back(back[p]);
        ack->push_back(src);
        src->connect(*out, *ack, *sink, timeFromMs(drand() * 1000.0));
    };
    for (int c = 0; c < 4; c++) {
        MultipathTcpSrc* msrc = new MultipathTcpSrc(cc == "lia" ? COUPLED_INC : UNCOUPLED, ev, NULL);
        MultipathTcpSink* msnk = new MultipathTcpSink(ev);
        for (int p = 0; p < 2; p++) {
            TcpSrc* src = new TcpSrc(NULL, NULL, ev);
            TcpSink* sink = new TcpSink();
            msrc->addSubflow(src);
            msnk->addSubflow(sink);
            add(src, sink, p);
            mp_sinks.push_back(sink);
        }
    }
    for (int f = 0; f < 4; f++) {
        TcpSrc* src = new TcpSrc(NULL, NULL, ev);
        TcpSink* sink = new TcpSink();
        add(src, sink, f % 2);
        sp_sinks.push_back(sink);
    }
    std::vector<TcpSink*> all_sinks = mp_sinks;
    all_sinks.insert(all_sinks.end(), sp_sinks.begin(), sp_sinks.end());
    WindowStart window(ev, all_sinks, timeFromSec(duration * 0.8));
    while (ev.doNextEvent()) {
    }

    double mp = 0, all = 0;
    for (size_t k = 0; k < all_sinks.size(); k++) {
        double d = window.since(k);
        all += d;
        if (k < mp_sinks.size()) mp += d;
    }
    double capacity = 2 * rate_bps / 8 * duration * 0.2;
    fprintf(stderr, "cc=%s rate=%g buffer=%lld loss=%g seed=%u final_share=%.1f utilisation=%.1f\n",
            cc.c_str(), rate_bps, (long long)buffer, loss, seed, 100 * mp / all, 100 * all / capacity);
    return 0;
}
