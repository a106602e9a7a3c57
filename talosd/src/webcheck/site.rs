//! Which web files the verifier reads: the files the turn changed (or a diagnosis read) and
//! what they link to, not the whole tree. A changed page brings the stylesheets and scripts it
//! loads; a changed stylesheet or script brings the pages that load it (found by a walk that
//! parses only pages naming the file), and their assets; an asset no page loads brings a few
//! pages of its folder, so the verifier can say it is unused. With no focus (a diagnosis of a
//! whole site), every web file of the workspace is read, bounded. Also here: the workspace's
//! names that the core reconciles the conventional default targets with ([`reconciled`]).
//! Reads go through the workspace handle.

use std::collections::BTreeMap;

use talos_core::contract::{TaskContract, has_default_web_targets, reconcile_default_web_targets};
use talos_core::turn::web::is_web_file;

use crate::workspace::Workspace;
use talos_core::retrieval::SKIP_DIRS;

/// At most this many files are given to the verifier.
pub const MAX_FILES: usize = 200;
/// Larger files are not read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Pages of an unused asset's folder given with it.
const NEIGHBOUR_PAGES: usize = 3;

/// The files the verifier checks for `focus` (workspace-relative paths; empty: the whole site).
pub fn site_files(workspace: &Workspace, focus: &[String]) -> BTreeMap<String, String> {
    if focus.is_empty() {
        return whole_site(workspace);
    }
    let mut out = BTreeMap::new();
    let focus: Vec<String> = focus
        .iter()
        .map(|f| f.trim_start_matches("./").to_string())
        .filter(|f| is_web_file(f))
        .collect();
    let mut pages: Vec<String> = Vec::new();
    let mut assets: Vec<String> = Vec::new();
    for file in &focus {
        if read_into(workspace, file, &mut out) {
            if is_page(file) {
                pages.push(file.clone());
            } else {
                assets.push(file.clone());
            }
        }
    }
    if !assets.is_empty() {
        for page in loading_pages(workspace, &assets) {
            if read_into(workspace, &page, &mut out) && !pages.contains(&page) {
                pages.push(page);
            }
        }
    }
    for page in &pages {
        let Some(content) = out.get(page) else {
            continue;
        };
        for linked in talos_webcheck::page_links(page, content) {
            if out.len() >= MAX_FILES {
                break;
            }
            if !out.contains_key(&linked) {
                read_into(workspace, &linked, &mut out);
            }
        }
    }
    out
}

/// The contract with its default web targets (`style.css`, `script.js`) renamed to what the
/// workspace uses (the core decides; see `reconcile_default_web_targets`): the names at the
/// workspace's root and what its `index.html` links. Reads nothing when there is no default.
pub fn reconciled(workspace: &Workspace, contract: TaskContract) -> TaskContract {
    if !has_default_web_targets(&contract) {
        return contract;
    }
    let existing: Vec<String> = workspace
        .read_dir(".")
        .map(|entries| entries.into_iter().map(|e| e.name).collect())
        .unwrap_or_default();
    let mut page = BTreeMap::new();
    let linked = if read_into(workspace, "index.html", &mut page) {
        page.get("index.html")
            .map(|content| talos_webcheck::page_links("index.html", content))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    reconcile_default_web_targets(contract, &existing, &linked)
}

/// Pages that load one of `assets`; for an asset none loads, a few pages of its folder.
fn loading_pages(workspace: &Workspace, assets: &[String]) -> Vec<String> {
    let all_pages = workspace.files(".", SKIP_DIRS, usize::MAX, &mut |p| is_page(p));
    let mut found: Vec<String> = Vec::new();
    let mut loaded = vec![false; assets.len()];
    for page in &all_pages {
        if found.len() >= MAX_FILES {
            break;
        }
        let Ok(Some(bytes)) = workspace.read_limited(page, page, MAX_FILE_BYTES) else {
            continue;
        };
        let content = String::from_utf8_lossy(&bytes);
        let named: Vec<usize> = (0..assets.len())
            .filter(|&i| content.contains(file_name(&assets[i])))
            .collect();
        if named.is_empty() {
            continue;
        }
        let links = talos_webcheck::page_links(page, &content);
        let mut loads = false;
        for i in named {
            if links.contains(&assets[i]) {
                loaded[i] = true;
                loads = true;
            }
        }
        if loads {
            found.push(page.clone());
        }
    }
    for (asset, _) in assets.iter().zip(&loaded).filter(|(_, l)| !**l) {
        let home = folder(asset);
        let neighbours = all_pages
            .iter()
            .filter(|p| folder(p) == home)
            .take(NEIGHBOUR_PAGES);
        for page in neighbours {
            if !found.contains(page) {
                found.push(page.clone());
            }
        }
    }
    found
}

/// Every web file of the workspace, bounded: the subject of a whole-site diagnosis.
fn whole_site(workspace: &Workspace) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for rel in workspace.files(".", SKIP_DIRS, usize::MAX, &mut |p| is_web_file(p)) {
        read_into(workspace, &rel, &mut out);
        if out.len() >= MAX_FILES {
            break;
        }
    }
    out
}

/// Reads `path` into `out` (once, within the bounds); whether it is there now.
fn read_into(workspace: &Workspace, path: &str, out: &mut BTreeMap<String, String>) -> bool {
    if out.contains_key(path) {
        return true;
    }
    if out.len() >= MAX_FILES {
        return false;
    }
    match workspace.read_limited(path, path, MAX_FILE_BYTES) {
        Ok(Some(bytes)) => {
            out.insert(
                path.to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            );
            true
        }
        Ok(None) | Err(_) => false,
    }
}

fn is_page(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".html") || lower.ends_with(".htm")
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}
