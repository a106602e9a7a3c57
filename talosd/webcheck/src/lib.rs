//! The static web verifier of Talos: after a turn changes a small website (HTML, CSS,
//! JavaScript), the runtime checks the result itself instead of trusting the model's account of
//! it.
//!
//! [`check`] receives the contents of every `.html`/`.htm`/`.css`/`.js` file of the workspace
//! and the facts of the person's request (a [`Request`], which the daemon takes from the task
//! contract), and reports broken links to stylesheets and scripts, duplicate ids, selectors and
//! lookups that match no element, element-type selectors that name a class or id of the markup
//! (a missing `.` or `#`), requested behaviour with no script or unwired controls, stray and
//! unterminated closing tags, placeholder text, and stylesheets or scripts that hold only
//! comments or a placeholder line. A stylesheet or script is judged only against the pages that
//! load it; one that no given page loads is reported as unused (`UNUSED_ASSET`), not as broken. An interaction named in the request ("clicking #a updates
//! #b") needs a headless browser, which this crate never runs: it reports whether the named
//! elements exist and which page a browser would load ([`InteractionStatus`]).
//!
//! Pure: values in, values out. No IO, no clock, no environment, no process; it depends on
//! `scraper` and `cssparser` only (tidy checks both). Decision records:
//! docs/decisions/0013-static-web-verifier.md, docs/decisions/0016-webcheck-crate.md.

mod assets;
mod css;
mod html;
mod js;
mod tags;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use html::PageFacts;
use js::ScriptFacts;

/// What the checks need to know about the person's request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// The request asks for behaviour (click, toggle, counter, interactive, submit, ...).
    pub asks_for_behaviour: bool,
    /// The request mentions "todo" (so a page's TODO is content, not a placeholder).
    pub mentions_todo: bool,
    /// The interaction the request names, if any.
    pub interaction: Option<Interaction>,
}

/// "Clicking #trigger changes #target", as named in the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interaction {
    /// The id of the element clicked.
    pub trigger: String,
    /// The id of the element that must change.
    pub target: String,
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Workspace-relative path of the file the problem is in.
    pub file: String,
    /// SCREAMING_SNAKE_CASE kind of problem, e.g. `DUPLICATE_ID`.
    pub code: &'static str,
    /// What is wrong, naming the file and the selector or id.
    pub message: String,
}

/// What the verifier checked and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Files examined.
    pub checked: Vec<String>,
    /// Problems found.
    pub findings: Vec<Finding>,
    /// What the files say about the interaction the request names.
    pub interaction: InteractionStatus,
}

/// What the files alone say about the interaction the request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InteractionStatus {
    /// The request names no interaction.
    NotRequested,
    /// A named element is in no page: why, e.g. "no element #b in any page".
    Failed(String),
    /// Every named element is in some page (or there is no page): only a browser can tell.
    NeedsBrowser(BrowserRun),
}

/// What a headless browser would have to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserRun {
    /// The id to click.
    pub trigger: String,
    /// The id that must change.
    pub target: String,
    /// The page to load: the first that holds both ids, else the first that holds the trigger;
    /// `None` when no page holds the trigger.
    pub page: Option<String>,
}

/// Check the web files of a workspace against the request.
///
/// `files`: workspace-relative path -> content of every .html/.htm/.css/.js file of the
/// workspace; `request`: what the person's request asks for.
pub fn check(files: &BTreeMap<String, String>, request: &Request) -> Report {
    let site = Site::read(files);
    let mut findings = Vec::new();
    for (path, page) in &site.pages {
        check_page(&site, path, page, request, &mut findings);
        check_raw_tags(path, files, &mut findings);
    }
    assets::check_assets(&site, &mut findings);
    check_stylesheets(&site, &mut findings);
    check_script_lookups(&site, &mut findings);
    let interaction = match &request.interaction {
        None => InteractionStatus::NotRequested,
        Some(named) => interaction_status(&site, named),
    };
    Report {
        checked: site.checked,
        findings,
        interaction,
    }
}

/// The workspace files a page loads (stylesheets, then scripts), as normalized
/// workspace-relative paths; absolute URLs and fragments left out. The daemon uses it to give
/// [`check`] a changed page's assets and the pages that load a changed asset.
pub fn page_links(page: &str, content: &str) -> Vec<String> {
    let facts = html::page_facts(content);
    facts
        .stylesheets
        .iter()
        .chain(&facts.scripts)
        .filter_map(|href| resolve(page, href))
        .collect()
}

/// Whether the named ids exist, and the page a browser would load.
fn interaction_status(site: &Site<'_>, named: &Interaction) -> InteractionStatus {
    let (trigger, target) = (&named.trigger, &named.target);
    let missing: Vec<String> = [trigger, target]
        .into_iter()
        .filter(|id| !site.pages.values().any(|p| p.ids.contains_key(*id)))
        .map(|id| format!("#{id}"))
        .collect();
    if !site.pages.is_empty() && !missing.is_empty() {
        return InteractionStatus::Failed(format!("no element {} in any page", missing.join(", ")));
    }
    let page = site
        .pages
        .iter()
        .find(|(_, p)| p.ids.contains_key(trigger) && p.ids.contains_key(target))
        .or_else(|| site.pages.iter().find(|(_, p)| p.ids.contains_key(trigger)))
        .map(|(page, _)| page.to_string());
    InteractionStatus::NeedsBrowser(BrowserRun {
        trigger: trigger.clone(),
        target: target.clone(),
        page,
    })
}

/// The web files, read once.
struct Site<'a> {
    checked: Vec<String>,
    /// Normalized path -> original key, for every file given.
    known: BTreeMap<String, &'a str>,
    pages: BTreeMap<&'a str, PageFacts>,
    sheets: BTreeMap<&'a str, &'a str>,
    scripts: BTreeMap<&'a str, ScriptFacts>,
    /// Every file given, as given.
    sources: &'a BTreeMap<String, String>,
}

impl<'a> Site<'a> {
    fn read(files: &'a BTreeMap<String, String>) -> Self {
        let mut site = Site {
            checked: Vec::new(),
            known: BTreeMap::new(),
            pages: BTreeMap::new(),
            sheets: BTreeMap::new(),
            scripts: BTreeMap::new(),
            sources: files,
        };
        for (path, content) in files {
            site.known.insert(normalize(path), path.as_str());
            let lower = path.to_ascii_lowercase();
            if lower.ends_with(".html") || lower.ends_with(".htm") {
                site.pages.insert(path, html::page_facts(content));
            } else if lower.ends_with(".css") {
                site.sheets.insert(path, content);
            } else if lower.ends_with(".js") || lower.ends_with(".mjs") {
                site.scripts.insert(path, js::script_facts(content));
            } else {
                continue;
            }
            site.checked.push(path.clone());
        }
        site
    }

    /// The given file a page's relative reference points to, if it is one of the files.
    fn target(&self, page: &str, href: &str) -> Option<&'a str> {
        resolve(page, href).and_then(|p| self.known.get(&p).copied())
    }

    /// Pages that link `file` (as a stylesheet or a script); none for an unused file.
    fn pages_using(&self, file: &str, sheet: bool) -> Vec<&PageFacts> {
        self.pages
            .iter()
            .filter(|(path, page)| {
                let refs = if sheet {
                    &page.stylesheets
                } else {
                    &page.scripts
                };
                refs.iter().any(|r| self.target(path, r) == Some(file))
            })
            .map(|(_, page)| page)
            .collect()
    }

    /// Facts of the scripts a page runs: linked files that exist and inline scripts.
    fn page_scripts(&self, path: &str, page: &PageFacts) -> Vec<ScriptFacts> {
        let mut out: Vec<ScriptFacts> = page
            .scripts
            .iter()
            .filter_map(|src| self.target(path, src))
            .filter_map(|file| self.scripts.get(file).cloned())
            .collect();
        out.extend(page.inline_scripts.iter().map(|s| js::script_facts(s)));
        out
    }
}

fn check_page(
    site: &Site<'_>,
    path: &str,
    page: &PageFacts,
    request: &Request,
    findings: &mut Vec<Finding>,
) {
    let mut push = |code, message| {
        findings.push(Finding {
            file: path.to_string(),
            code,
            message,
        })
    };
    let mut seen_sheets = BTreeSet::new();
    for href in &page.stylesheets {
        let Some(resolved) = resolve(path, href) else {
            continue;
        };
        if !site.known.contains_key(&resolved) {
            push(
                "MISSING_STYLESHEET",
                format!("{path} links stylesheet \"{href}\", but {resolved} does not exist"),
            );
        }
        if !seen_sheets.insert(resolved.clone()) {
            push(
                "DUPLICATE_STYLESHEET",
                format!("{path} links stylesheet {resolved} more than once"),
            );
        }
    }
    for src in &page.scripts {
        if let Some(resolved) = resolve(path, src)
            && !site.known.contains_key(&resolved)
        {
            push(
                "MISSING_SCRIPT",
                format!("{path} loads script \"{src}\", but {resolved} does not exist"),
            );
        }
    }
    for (id, count) in &page.ids {
        if *count > 1 {
            push(
                "DUPLICATE_ID",
                format!("{path} uses id \"{id}\" {count} times (#{id})"),
            );
        }
    }
    let wants_behaviour = request.asks_for_behaviour;
    let scripts = site.page_scripts(path, page);
    let has_script =
        !page.scripts.is_empty() || !page.inline_scripts.is_empty() || page.has_handler_attribute;
    if wants_behaviour && !has_script && (page.has_inputs || site.pages.len() == 1) {
        push(
            "NO_SCRIPT_FOR_BEHAVIOUR",
            format!(
                "the request asks for behaviour, but {path} loads no script and has no inline script"
            ),
        );
    }
    if wants_behaviour && has_script {
        let attaches = scripts.iter().any(|s| s.attaches_handlers);
        for control in page.controls.iter().filter(|c| !c.wired_by_markup) {
            let referenced = control
                .names
                .iter()
                .chain(std::iter::once(&control.tag))
                .any(|name| scripts.iter().any(|s| s.all_words.contains(name)));
            if !(attaches && referenced) {
                push(
                    "CONTROL_NOT_WIRED",
                    format!(
                        "{path}: {} has no inline handler and no script of the page looks it up to attach one",
                        control.label
                    ),
                );
            }
        }
    }
    if let Some(what) = placeholder_in(&page.visible_text, request.mentions_todo) {
        push(
            "PLACEHOLDER_CONTENT",
            format!("{path} shows placeholder text \"{what}\""),
        );
    } else if page.body_only_comments {
        push(
            "PLACEHOLDER_CONTENT",
            format!("{path}: the body holds only comments, no content"),
        );
    }
}

/// The first placeholder phrase in visible text, as it appears.
fn placeholder_in(text: &str, request_mentions_todo: bool) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    for phrase in [
        "lorem ipsum",
        "placeholder text",
        "your content here",
        "content goes here",
        "insert content here",
        "text goes here",
    ] {
        if let Some(at) = lower.find(phrase) {
            return Some(
                text.get(at..at + phrase.len())
                    .unwrap_or(phrase)
                    .to_string(),
            );
        }
    }
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    ["FIXME", "TODO", "TBD"]
        .into_iter()
        .filter(|w| !request_mentions_todo || *w != "TODO")
        .find(|w| words.contains(w))
        .map(str::to_string)
}

fn check_raw_tags(path: &str, files: &BTreeMap<String, String>, findings: &mut Vec<Finding>) {
    let Some(source) = files.get(path) else {
        return;
    };
    for (tag, open, close) in tags::unmatched_closing_tags(source) {
        findings.push(Finding {
            file: path.to_string(),
            code: "MALFORMED_CLOSING_TAG",
            message: format!(
                "{path} has {close} closing </{tag}> tag(s) but only {open} opening <{tag}> tag(s)"
            ),
        });
    }
    for (tag, line) in tags::unterminated_closing_tags(source) {
        findings.push(Finding {
            file: path.to_string(),
            code: "UNTERMINATED_CLOSING_TAG",
            message: format!(
                "{path} line {line}: the closing tag </{tag} is never terminated by `>`"
            ),
        });
    }
}

fn check_stylesheets(site: &Site<'_>, findings: &mut Vec<Finding>) {
    for (path, content) in &site.sheets {
        let pages = site.pages_using(path, true);
        if pages.is_empty() {
            continue;
        }
        let page_paths: Vec<&str> = site
            .pages
            .iter()
            .filter(|(_, p)| pages.iter().any(|q| std::ptr::eq(*q, *p)))
            .map(|(k, _)| *k)
            .collect();
        let words: BTreeSet<String> = site
            .pages
            .iter()
            .filter(|(k, _)| page_paths.contains(k))
            .flat_map(|(k, p)| site.page_scripts(k, p))
            .flat_map(|s| s.all_words)
            .collect();
        let mut reported = BTreeSet::new();
        for rule in css::stylesheet_rules(content) {
            for id in &rule.ids {
                let present = pages.iter().any(|p| p.ids.contains_key(id)) || words.contains(id);
                if !present && reported.insert(format!("#{id}")) {
                    findings.push(selector_finding(
                        path,
                        &rule.selector,
                        &format!("#{id}"),
                        &page_paths,
                    ));
                }
            }
            for class in &rule.classes {
                let present =
                    pages.iter().any(|p| p.classes.contains(class)) || words.contains(class);
                if !present && reported.insert(format!(".{class}")) {
                    findings.push(selector_finding(
                        path,
                        &rule.selector,
                        &format!(".{class}"),
                        &page_paths,
                    ));
                }
            }
            for name in &rule.types {
                if pages.iter().any(|p| p.tags.contains(name)) {
                    continue;
                }
                let as_class = pages.iter().any(|p| p.classes.contains(name));
                let as_id = pages.iter().any(|p| p.ids.contains_key(name));
                let meant = match (as_class, as_id) {
                    (true, _) => format!(".{name}"),
                    (false, true) => format!("#{name}"),
                    (false, false) => continue,
                };
                if reported.insert(format!("<{name}>")) {
                    findings.push(Finding {
                        file: path.to_string(),
                        code: "TYPE_SELECTOR_WITHOUT_ELEMENT",
                        message: format!(
                            "{path}: selector `{}` names the element <{name}>, which no element of {} is, but the markup uses {meant} (missing `{}`?)",
                            rule.selector,
                            page_paths.join(", "),
                            &meant[..1]
                        ),
                    });
                }
            }
        }
    }
}

fn selector_finding(file: &str, selector: &str, part: &str, pages: &[&str]) -> Finding {
    Finding {
        file: file.to_string(),
        code: "SELECTOR_WITHOUT_ELEMENT",
        message: format!(
            "{file}: selector `{selector}` names {part}, which no element of {} has",
            pages.join(", ")
        ),
    }
}

fn check_script_lookups(site: &Site<'_>, findings: &mut Vec<Finding>) {
    for (path, facts) in &site.scripts {
        let pages = site.pages_using(path, false);
        let page_paths: Vec<&str> = site
            .pages
            .iter()
            .filter(|(_, p)| pages.iter().any(|q| std::ptr::eq(*q, *p)))
            .map(|(k, _)| *k)
            .collect();
        let place = format!("{path}:");
        let made = made_by_scripts(site, &page_paths);
        lookup_findings(path, &place, facts, &pages, &page_paths, &made, findings);
    }
    for (path, page) in &site.pages {
        for inline in &page.inline_scripts {
            let facts = js::script_facts(inline);
            let place = format!("{path} (inline script):");
            let made = made_by_scripts(site, &[path]);
            lookup_findings(path, &place, &facts, &[page], &[path], &made, findings);
        }
    }
}

/// Names any script of these pages may give elements itself (see `ScriptFacts::dynamic_words`).
fn made_by_scripts(site: &Site<'_>, page_paths: &[&str]) -> BTreeSet<String> {
    site.pages
        .iter()
        .filter(|(k, _)| page_paths.contains(k))
        .flat_map(|(k, p)| site.page_scripts(k, p))
        .flat_map(|s| s.dynamic_words)
        .collect()
}

/// `SELECTOR_WITHOUT_ELEMENT` for each constant lookup of one script that names an id or class
/// no page running it has and the script does not mention elsewhere (it may create it).
fn lookup_findings(
    file: &str,
    place: &str,
    facts: &ScriptFacts,
    pages: &[&PageFacts],
    page_paths: &[&str],
    made: &BTreeSet<String>,
    findings: &mut Vec<Finding>,
) {
    if pages.is_empty() {
        return;
    }
    let mut reported = BTreeSet::new();
    for lookup in &facts.lookups {
        let missing_ids = lookup.ids.iter().filter(|id| {
            !pages.iter().any(|p| p.ids.contains_key(*id))
                && !facts.dynamic_words.contains(*id)
                && !made.contains(*id)
        });
        let missing_classes = lookup.classes.iter().filter(|c| {
            !pages.iter().any(|p| p.classes.contains(*c))
                && !facts.dynamic_words.contains(*c)
                && !made.contains(*c)
        });
        let parts: Vec<String> = missing_ids
            .map(|id| format!("#{id}"))
            .chain(missing_classes.map(|c| format!(".{c}")))
            .collect();
        for part in parts {
            if reported.insert(part.clone()) {
                findings.push(Finding {
                    file: file.to_string(),
                    code: "SELECTOR_WITHOUT_ELEMENT",
                    message: format!(
                        "{place} lookup \"{}\" names {part}, which no element of {} has",
                        lookup.arg,
                        page_paths.join(", ")
                    ),
                });
            }
        }
    }
}

/// A page-relative reference as a normalized workspace path; `None` for absolute URLs
/// (`http(s)://`, `//cdn`, `data:`, any scheme), fragments and empty references.
fn resolve(page: &str, href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() || href.starts_with("//") || href.starts_with('#') {
        return None;
    }
    if let Some(colon) = href.find(':') {
        let scheme = &href[..colon];
        if !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return None;
        }
    }
    let href = href.split(['?', '#']).next().unwrap_or(href);
    let mut base = if href.starts_with('/') {
        String::new()
    } else {
        page.rsplit_once('/')
            .map_or(String::new(), |(dir, _)| dir.to_string())
    };
    base.push('/');
    base.push_str(href);
    Some(normalize(&base))
}

/// `a/./b/../c` -> `a/c`; leading `/` and `./` dropped.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}
