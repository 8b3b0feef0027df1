//! Issue 17, acceptance 2: NMCC's friendly slow start no longer floods an idle access link
//! (scenarios/validation/nmcc-slow-start.toml, seeds 1-6). Before D125 one cumulative ACK
//! after a timeout raised a subflow's cwnd from 2 segments to about 160, the window left at
//! line rate and the 100 Mb/s access link, which nothing else uses, dropped 1,359, 3,736, 409
//! and 363 packets on seeds 1, 2, 3 and 5.

use pathpool_sim::LoadedScenario;

const SCENARIO: &str = include_str!("../../../../scenarios/validation/nmcc-slow-start.toml");

#[test]
fn nmcc_never_overflows_its_idle_access_link() {
    for seed in 1..=6u64 {
        let loaded = LoadedScenario::from_toml(SCENARIO, "nmcc-slow-start.toml", &[])
            .unwrap_or_else(|e| panic!("{e}"));
        let mut sim = loaded.compile(Some(seed)).unwrap_or_else(|e| panic!("{e}"));
        sim.run();
        let r = sim.results();
        let access = r
            .links
            .iter()
            .find(|l| l.from == "s" && l.to == "a")
            .expect("the access link s -> a");
        let mp = r.flow("mp").unwrap();
        eprintln!(
            "seed {seed}: access drops {}, mp {:.2} Mb/s, {} retransmissions, {} timeouts",
            access.drops,
            mp.throughput_bps.unwrap_or(0.0) / 1e6,
            mp.retransmissions,
            mp.timeouts
        );
        assert_eq!(access.drops, 0, "seed {seed}: the idle access link dropped");
    }
}
