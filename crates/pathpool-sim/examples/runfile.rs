//! Runs a scenario file and prints the summary (a development aid; the CLI does more).
fn main() {
    let path = std::env::args().nth(1).expect("usage: runfile SCENARIO");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let loaded = pathpool_sim::LoadedScenario::from_toml(&text, &path, &[]).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let mut sim = loaded.compile(None).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let t = std::time::Instant::now();
    sim.run();
    let wall = t.elapsed().as_secs_f64();
    let r = sim.results();
    println!(
        "{}",
        serde_json::to_string_pretty(&r.summary(wall)).unwrap()
    );
    println!("pkts/s {:.0}", r.stats.data_packets_delivered as f64 / wall);
    for f in &r.flows {
        println!(
            "{} tput {:?} retx {} to {} fr {}",
            f.id, f.throughput_bps, f.retransmissions, f.timeouts, f.fast_recoveries
        );
    }
}
