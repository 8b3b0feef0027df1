// Pieces of a path shared by the cross-check drivers that are not htsim's own.
#pragma once
#include <string>
#include <vector>
#include "config.h"
#include "network.h"
#include "tcp.h"

// Independent random loss after the queue: each packet leaving the queue is lost with
// probability `p`. This is where pathpool's link `loss` acts (at the far end of the link, after
// serialisation: crates/pathpool-sim/src/link.rs, `Link::on_event`), so a lost packet has held
// its place in the queue and its time on the link. htsim's own RandomQueue drops on arrival
// instead, before the packet takes either (used by `convergence`).
struct RandomLoss : public PacketSink {
    double p;
    std::string name;
    explicit RandomLoss(double loss) : p(loss), name("random-loss") {}
    void receivePacket(Packet& pkt) override {
        if (p > 0 && drand() < p) {
            pkt.free();
            return;
        }
        pkt.sendOn();
    }
    const std::string& nodename() override { return name; }
};

// Connects `src` to `sink` over the hops `out` (the sink appended) with ACKs over `back` (the
// source appended), starting at `start`.
inline void connect_tcp(TcpSrc* src, TcpSink* sink, const std::vector<PacketSink*>& out,
                        const std::vector<PacketSink*>& back, simtime_picosec start) {
    route_t* fwd = new route_t();
    for (auto* hop : out) fwd->push_back(hop);
    fwd->push_back(sink);
    route_t* rev = new route_t();
    for (auto* hop : back) rev->push_back(hop);
    rev->push_back(src);
    src->connect(*fwd, *rev, *sink, start);
}
