// htsim driver for the validation suite (docs/validation.md, validate.py): one two-subflow
// multipath connection (LIA or uncoupled) and NewReno flows over either one shared bottleneck
// (both subflows and every competitor cross it) or two disjoint paths (one subflow on each,
// competitors per path). Each path is a drop-tail queue, i.i.d. loss after the queue (as
// pathpool's link `loss`, paths.h) and a pipe of the one-way delay; ACKs return over a pipe of
// the same delay, with no queue and no loss (pathpool's twin: an infinite-rate reverse link).
// Every source starts at a uniformly random time in the first second, optionally behind its own
// feeder queue (pathpool's access link), and uses htsim's TcpSrc unchanged; timers are checked
// by htsim's TcpRtxTimerScanner every 10 ms.
//
// Usage: suite [--subflow-ssthresh-floor=PKTS] [--alpha-after-loss] [--alpha-per-ack]
//              [--rtt-new-acks-only] CC SEED shared|disjoint DURATION_S WINDOW_START_S FEEDER_MBPS
//              PATH [PATH]
//   CC      lia (htsim's COUPLED_INC) or uncoupled
//   PATH    RATE_MBPS,DELAY_MS,BUFFER_PKTS,LOSS,COMPETITORS (DELAY one way, LOSS a probability,
//           COMPETITORS the NewReno flows on the path); one PATH for shared, two for disjoint
//   FEEDER  rate of each source's feeder queue (2000 packets) in Mb/s; 0 for none (a source
//           puts its packets straight into the path's queue)
//   --subflow-ssthresh-floor  a variant of htsim: a subflow's ssthresh after a loss is at least
//           PKTS segments (htsim's MultipathTcpSrc::deflate_window floors it at 1; its TcpSrc and
//           pathpool at 2 for every flow), to test that difference
//   --alpha-after-loss  a variant: LIA recomputes alpha after every loss of a subflow, as
//           pathpool does (htsim: after a timeout only, and when a window crosses a segment)
//   --alpha-per-ack  a variant: LIA recomputes alpha on every ACK before the window grows, as
//           pathpool's default `tcp.lia.alpha_update = "per-ack"`
//   --rtt-new-acks-only  a variant for every source: a duplicate ACK leaves the RTT estimate and
//           the RTO as they were (htsim samples every ACK; pathpool only ACKs of new data, D58)
// Prints one line on standard error: over the window, the connection's share of all throughput
// and per path (p1, p2) the connection's and the competitors' Mb/s (1500-byte packets); over
// the whole run, as pathpool's sender counters, their timeouts and fast recoveries. htsim
// itself prints a line per timeout on standard output.
#include <cstdio>
#include <cstdlib>
#include <map>
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

struct PathSpec {
    double rate_mbps, delay_ms, loss;
    int buffer_pkts, competitors;
};

// Timeouts and fast recoveries of each source over the whole run (pathpool's `timeouts` and
// `fast_recoveries` count from the start too, docs/metrics.md).
struct EventCounter : public TcpLogger {
    std::map<TcpSrc*, unsigned> timeouts, recoveries;
    void logTcp(TcpSrc& s, TcpEvent e) override {
        if (e == TCP_TIMEOUT) timeouts[&s]++;
        if (e == TCP_RCV_DUP_FASTXMIT) recoveries[&s]++;
    }
};

// htsim's TcpSrc with the variants' changes to what a loss does.
struct VariantTcpSrc : public TcpSrc {
    uint32_t floor_pkts;
    bool alpha_after_loss, alpha_per_ack, rtt_new_acks_only;
    VariantTcpSrc(TcpLogger* logger, EventList& ev, uint32_t floor, bool after_loss, bool per_ack, bool new_only)
        : TcpSrc(logger, NULL, ev), floor_pkts(floor), alpha_after_loss(after_loss), alpha_per_ack(per_ack),
          rtt_new_acks_only(new_only) {}
    void receivePacket(Packet& pkt) override {
        // TcpSrc::receivePacket takes a sample from every ACK; undo it for a duplicate.
        bool dup = rtt_new_acks_only && ((TcpAck*)&pkt)->ackno() <= _last_acked;
        simtime_picosec rtt = _rtt, mdev = _mdev, rto = _rto, base = _base_rtt;
        TcpSrc::receivePacket(pkt);
        if (dup) {
            _rtt = rtt;
            _mdev = mdev;
            _rto = rto;
            _base_rtt = base;
        }
    }
    void inflate_window() override {
        // MultipathTcpSrc's `a` is what COUPLED_INC's increase uses; refreshing it here makes
        // every ACK's increase use the current windows and smoothed RTTs.
        if (alpha_per_ack && _mSrc) _mSrc->a = _mSrc->compute_a_scaled();
        TcpSrc::inflate_window();
    }
    void deflate_window() override {
        TcpSrc::deflate_window();
        if (_ssthresh < floor_pkts * _mss) _ssthresh = floor_pkts * _mss;
        if (alpha_after_loss && _mSrc) _mSrc->window_changed();
    }
};

int main(int argc, char** argv) {
    uint32_t subflow_floor_pkts = 0;
    bool alpha_after_loss = false, alpha_per_ack = false, rtt_new_acks_only = false;
    const std::string floor_opt = "--subflow-ssthresh-floor=";
    while (argc > 1 && std::string(argv[1]).compare(0, 2, "--") == 0) {
        std::string opt = argv[1];
        if (opt.compare(0, floor_opt.size(), floor_opt) == 0)
            subflow_floor_pkts = (uint32_t)atoi(argv[1] + floor_opt.size());
        else if (opt == "--alpha-after-loss")
            alpha_after_loss = true;
        else if (opt == "--alpha-per-ack")
            alpha_per_ack = true;
        else if (opt == "--rtt-new-acks-only")
            rtt_new_acks_only = true;
        else {
            fprintf(stderr, "unknown option %s\n", argv[1]);
            return 2;
        }
        argv++;
        argc--;
    }
    if (argc < 8) {
        fprintf(stderr,
                "usage: %s [--subflow-ssthresh-floor=PKTS] [--alpha-after-loss] [--alpha-per-ack] [--rtt-new-acks-only] lia|uncoupled SEED shared|disjoint DURATION_S WINDOW_START_S FEEDER_MBPS "
                "RATE_MBPS,DELAY_MS,BUFFER_PKTS,LOSS,COMPETITORS [...]\n",
                argv[0]);
        return 2;
    }
    std::string cc = argv[1], topology = argv[3];
    unsigned seed = (unsigned)atoi(argv[2]);
    double duration_s = atof(argv[4]), window_s = atof(argv[5]), feeder_mbps = atof(argv[6]);
    std::vector<PathSpec> specs;
    for (int a = 7; a < argc; a++) {
        PathSpec s;
        if (sscanf(argv[a], "%lf,%lf,%d,%lf,%d", &s.rate_mbps, &s.delay_ms, &s.buffer_pkts, &s.loss,
                   &s.competitors) != 5) {
            fprintf(stderr, "bad PATH '%s': want RATE_MBPS,DELAY_MS,BUFFER_PKTS,LOSS,COMPETITORS\n", argv[a]);
            return 2;
        }
        specs.push_back(s);
    }
    size_t want = topology == "shared" ? 1 : topology == "disjoint" ? 2 : 0;
    if ((cc != "lia" && cc != "uncoupled") || want == 0 || specs.size() != want) {
        fprintf(stderr, "want lia|uncoupled, and one PATH for shared or two for disjoint\n");
        return 2;
    }
    srand(seed);
    srandom(seed);

    EventList ev;
    ev.setEndtime(timeFromSec(duration_s));
    EventCounter counter;
    TcpRtxTimerScanner rtx(timeFromMs(10), ev);
    struct Path {
        Queue* queue;
        RandomLoss* loss;
        Pipe *fwd, *back;
    };
    std::vector<Path> paths;
    for (auto& s : specs)
        paths.push_back({new Queue(speedFromMbps(s.rate_mbps), memFromPkt(s.buffer_pkts), ev, NULL),
                         new RandomLoss(s.loss), new Pipe(timeFromUs(s.delay_ms * 1000), ev),
                         new Pipe(timeFromUs(s.delay_ms * 1000), ev)});

    // Sources and sinks by path; `is_mp` marks the connection's subflows.
    std::vector<TcpSrc*> srcs;
    std::vector<TcpSink*> sinks;
    std::vector<size_t> path_of;
    std::vector<bool> is_mp;
    auto add = [&](TcpSrc* src, TcpSink* sink, size_t p, bool mp) {
        rtx.registerTcp(*src);
        std::vector<PacketSink*> out;
        if (feeder_mbps > 0) out.push_back(new Queue(speedFromMbps(feeder_mbps), memFromPkt(2000), ev, NULL));
        out.push_back(paths[p].queue);
        out.push_back(paths[p].loss);
        out.push_back(paths[p].fwd);
        connect_tcp(src, sink, out, {paths[p].back}, timeFromUs(1e6 * drand()));
        srcs.push_back(src);
        sinks.push_back(sink);
        path_of.push_back(p);
        is_mp.push_back(mp);
    };
    MultipathTcpSrc* msrc = new MultipathTcpSrc(cc == "lia" ? COUPLED_INC : UNCOUPLED, ev, NULL);
    MultipathTcpSink* msnk = new MultipathTcpSink(ev);
    for (size_t k = 0; k < 2; k++) {
        TcpSrc* src = subflow_floor_pkts || alpha_after_loss || alpha_per_ack || rtt_new_acks_only
                          ? new VariantTcpSrc(&counter, ev, subflow_floor_pkts, alpha_after_loss, alpha_per_ack,
                                              rtt_new_acks_only)
                          : new TcpSrc(&counter, NULL, ev);
        TcpSink* sink = new TcpSink();
        src->setName("mp" + std::to_string(k));
        msrc->addSubflow(src);
        msnk->addSubflow(sink);
        add(src, sink, specs.size() == 1 ? 0 : k, true);
    }
    for (size_t p = 0; p < specs.size(); p++)
        for (int k = 0; k < specs[p].competitors; k++) {
            TcpSrc* src = rtt_new_acks_only ? new VariantTcpSrc(&counter, ev, 0, false, false, true)
                                            : new TcpSrc(&counter, NULL, ev);
            src->setName("tcp" + std::to_string(p + 1) + "." + std::to_string(k));
            add(src, new TcpSink(), p, false);
        }
    WindowStart window(ev, sinks, timeFromSec(window_s));
    while (ev.doNextEvent()) {
    }

    double span = duration_s - window_s;
    std::vector<double> mbps(2 * specs.size(), 0.0);
    std::vector<unsigned> rtos(2 * specs.size(), 0), frs(2 * specs.size(), 0);
    double mp = 0, all = 0;
    for (size_t k = 0; k < srcs.size(); k++) {
        double bits = window.since(k) * 8;
        size_t slot = 2 * path_of[k] + (is_mp[k] ? 0 : 1);
        mbps[slot] += bits / span / 1e6;
        rtos[slot] += counter.timeouts[srcs[k]];
        frs[slot] += counter.recoveries[srcs[k]];
        all += bits;
        if (is_mp[k]) mp += bits;
    }
    fprintf(stderr, "cc=%s seed=%u share=%.5f", cc.c_str(), seed, mp / all);
    for (size_t p = 0; p < specs.size(); p++)
        fprintf(stderr, " p%zu_mp=%.4f p%zu_tcp=%.4f p%zu_mp_rto=%u p%zu_tcp_rto=%u p%zu_mp_fr=%u p%zu_tcp_fr=%u",
                p + 1, mbps[2 * p], p + 1, mbps[2 * p + 1], p + 1, rtos[2 * p], p + 1, rtos[2 * p + 1],
                p + 1, frs[2 * p], p + 1, frs[2 * p + 1]);
    fprintf(stderr, "\n");
    return 0;
}
