// The measurement window shared by the cross-check drivers: the sinks' cumulative ACKs are
// taken at the window's start, and what each sink acknowledged since is its bytes in the
// window (htsim counts each subflow's own acknowledged bytes).
#pragma once
#include <cstdint>
#include <vector>
#include "eventlist.h"
#include "tcp.h"

struct WindowStart : public EventSource {
    std::vector<TcpSink*> sinks;
    std::vector<uint64_t> acked;
    WindowStart(EventList& ev, std::vector<TcpSink*> s, simtime_picosec at)
        : EventSource(ev, "window-start"), sinks(std::move(s)) {
        ev.sourceIsPending(*this, at);
    }
    void doNextEvent() override {
        for (auto* s : sinks) acked.push_back(s->_cumulative_ack);
    }
    // Bytes sink k acknowledged since the window's start.
    double since(size_t k) const { return (double)(sinks[k]->_cumulative_ack - acked[k]); }
};
