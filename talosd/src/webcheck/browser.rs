//! The interaction check in a real headless browser (Debian's chromium), when one is installed.
//!
//! The site's web files are copied to a private temporary directory (never the workspace), a
//! probe script is appended to the page that holds the trigger, and chromium loads it with
//! `--dump-dom`. The probe clicks the trigger and reports whether the target element changed.
//! Host names do not resolve in the browser (`--host-resolver-rules`), so the page cannot reach
//! the network by name; this is a narrowing, not a sandbox. The run is bounded in time and the
//! browser's whole process group is killed at the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use talos_core::turn::web::Interaction;

/// The longest a browser run may take.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(30);

/// Run "clicking #trigger changes #target" in `browser` against `page` of `files`.
pub fn run(
    browser: &Path,
    files: &BTreeMap<String, String>,
    page: &str,
    trigger: &str,
    target: &str,
) -> Interaction {
    let dir = match ScratchDir::new() {
        Ok(dir) => dir,
        Err(e) => {
            return Interaction::NotRun(format!(
                "cannot create a private directory for the browser in {}: {e}",
                std::env::temp_dir().display()
            ));
        }
    };
    for (path, content) in files {
        let dest = dir.0.join(path);
        if !dest.starts_with(&dir.0) || path.split(['/', '\\']).any(|c| c == "..") {
            continue;
        }
        let written = dest
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                let body = if path == page {
                    with_probe(content, trigger, target)
                } else {
                    content.clone()
                };
                std::fs::write(&dest, body)
            });
        if written.is_err() {
            return Interaction::NotRun("cannot copy the site for the browser".into());
        }
    }
    let mut args: Vec<String> = Vec::new();
    if rustix::process::geteuid().is_root() {
        // Chromium refuses to start its own sandbox as root.
        args.push("--no-sandbox".into());
    }
    args.extend(
        [
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--allow-file-access-from-files",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ]
        .map(str::to_string),
    );
    args.push(format!(
        "--user-data-dir={}",
        dir.0.join(".profile").display()
    ));
    args.push(format!("file://{}", dir.0.join(page).display()));
    let Ok(crate::runner::BoundedRun {
        finished,
        stdout: dom,
    }) = crate::runner::run_bounded_blocking(browser, &args, BROWSER_TIMEOUT, 8 * 1024 * 1024)
    else {
        return Interaction::NotRun(format!("cannot start {}", browser.display()));
    };
    if !finished {
        return Interaction::NotRun(format!(
            "the headless browser did not finish within {} s",
            BROWSER_TIMEOUT.as_secs()
        ));
    }
    verdict(&dom, trigger, target)
}

/// The probe's report in the dumped DOM.
fn verdict(dom: &str, trigger: &str, target: &str) -> Interaction {
    let marker = "TALOS-PROBE:";
    let Some(at) = dom.find(marker) else {
        return Interaction::NotRun(
            "the headless browser did not report on the page (it may not have loaded)".into(),
        );
    };
    let word: String = dom[at + marker.len()..]
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    match word.as_str() {
        "changed" => Interaction::Passed,
        "unchanged" => Interaction::Failed(format!(
            "clicking #{trigger} did not change #{target} in a headless browser"
        )),
        "missing" => Interaction::Failed(format!(
            "#{trigger} or #{target} is not in the page the browser loaded"
        )),
        _ => Interaction::NotRun("the headless browser gave no clear result".into()),
    }
}

/// The page with a probe script appended. The marker is assembled at run time, so the probe's
/// own source never matches it in the dumped DOM.
fn with_probe(page: &str, trigger: &str, target: &str) -> String {
    let js = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let probe = format!(
        r#"<script>
window.addEventListener("load", function () {{
  setTimeout(function () {{
    var say = function (w) {{ var p = document.createElement("pre"); p.textContent = "TALOS" + "-PROBE:" + w; document.documentElement.appendChild(p); }};
    var t = document.getElementById({trigger}), s = document.getElementById({target});
    if (!t || !s) {{ say("missing"); return; }}
    var before = s.outerHTML;
    t.click();
    setTimeout(function () {{
      var after = document.getElementById({target});
      say(after && after.outerHTML !== before ? "changed" : "unchanged");
    }}, 500);
  }}, 100);
}});
</script>"#,
        trigger = js(trigger),
        target = js(target),
    );
    let lower = page.to_ascii_lowercase();
    match lower.rfind("</body>") {
        Some(at) => format!("{}{probe}{}", &page[..at], &page[at..]),
        None => format!("{page}{probe}"),
    }
}

/// A private temporary directory, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new 0700 directory under the temp dir. The name carries the pid, a per-process
    /// counter and the time, and a name already taken is retried: two checks in one daemon
    /// may start within one tick of a coarse clock.
    fn new() -> Result<Self, std::io::Error> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut last = None;
        for _ in 0..16 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir()
                .join(format!("talos-webcheck-{}-{n}-{nanos}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(ScratchDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_dirs_made_at_once_are_all_distinct_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let dirs: Vec<ScratchDir> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|_| s.spawn(ScratchDir::new)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap().unwrap())
                .collect()
        });
        let names: std::collections::BTreeSet<_> = dirs.iter().map(|d| d.0.clone()).collect();
        assert_eq!(names.len(), 8);
        for d in &dirs {
            let mode = std::fs::metadata(&d.0).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", d.0.display());
        }
    }

    #[test]
    fn the_probe_goes_before_the_body_end_and_never_matches_its_own_marker() {
        let page = with_probe("<html><body><p>x</p></BODY></html>", "go", "out");
        assert!(page.contains("</script></BODY>"), "{page}");
        assert!(!page.contains("TALOS-PROBE:"));
        assert_eq!(
            verdict(&page, "go", "out"),
            Interaction::NotRun(
                "the headless browser did not report on the page (it may not have loaded)".into()
            )
        );
    }

    #[test]
    fn verdicts_are_read_from_the_dom() {
        assert_eq!(
            verdict("<pre>TALOS-PROBE:changed</pre>", "a", "b"),
            Interaction::Passed
        );
        assert!(matches!(
            verdict("<pre>TALOS-PROBE:unchanged</pre>", "a", "b"),
            Interaction::Failed(_)
        ));
    }
}
