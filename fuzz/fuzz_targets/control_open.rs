#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pathpool_wire_fuzz::control_open(data));
