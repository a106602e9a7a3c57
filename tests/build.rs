//! Marks the real-model tests ignored, with their reason, when `TALOS_REAL_MODEL` is not `1`:
//! libtest then lists them as "ignored, skipped: …" instead of a passing "ok" for a test that
//! did nothing.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(talos_real_model)");
    println!("cargo:rerun-if-env-changed=TALOS_REAL_MODEL");
    if std::env::var("TALOS_REAL_MODEL").is_ok_and(|v| v == "1") {
        println!("cargo:rustc-cfg=talos_real_model");
    }
}
