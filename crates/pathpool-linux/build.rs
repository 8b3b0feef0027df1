//! Compiles the BPF programs (bpf/pp_cc.bpf.c) with the system clang, and the coupled
//! arithmetic's header for the host (bpf/host.c), which the tests compare with pathpool-cc.
//!
//! Without clang the crate still builds: the programs are then empty and `pathpool linux
//! load` says why (the `pathpool_linux_no_bpf` cfg).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for f in [
        "pp_cc.bpf.c",
        "pp_coupled.h",
        "pp_fixed.h",
        "pp_maps.h",
        "pp_vmlinux.h",
        "host.c",
    ] {
        println!("cargo:rerun-if-changed=bpf/{f}");
    }
    println!("cargo:rerun-if-env-changed=CLANG");
    println!("cargo::rustc-check-cfg=cfg(pathpool_linux_no_bpf)");

    cc::Build::new()
        .file("bpf/host.c")
        .flag_if_supported("-Wall")
        .compile("pp_host");

    let object = out.join("pp_cc.bpf.o");
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".to_owned());
    let include = env::var("DEP_BPF_INCLUDE").expect("libbpf-sys exports its include directory");
    let arch = match env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86",
        Ok("aarch64") => "arm64",
        Ok("riscv64") => "riscv",
        Ok("s390x") => "s390",
        Ok("powerpc64") => "powerpc",
        _ => "x86",
    };
    let status = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-mcpu=v3", "-Wall"])
        .arg(format!("-D__TARGET_ARCH_{arch}"))
        .arg(format!("-I{include}"))
        .arg("-c")
        .arg("bpf/pp_cc.bpf.c")
        .arg("-o")
        .arg(&object)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("{clang} failed to compile bpf/pp_cc.bpf.c ({s})"),
        Err(e) => {
            println!(
                "cargo:warning=pathpool-linux: {clang} not found ({e}); building without the BPF programs"
            );
            println!("cargo:rustc-cfg=pathpool_linux_no_bpf");
            std::fs::write(&object, []).expect("write an empty object");
        }
    }
}
