//! HTML side of the static-web verifier: what one page holds (ids, classes, linked
//! stylesheets and scripts, inline scripts, controls, visible text), read with `scraper`
//! (html5ever). The raw-text count of opening and closing tags is in `tags.rs`.

use std::collections::{BTreeMap, BTreeSet};

use scraper::{Html, Node};

/// A `<button>` or `<form>` of a page and what could wire it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Control {
    /// `button` or `form`.
    pub tag: String,
    /// How to name it in a message: `button#id`, `form.cls` or `button "Text"`.
    pub label: String,
    /// The element's id and classes, and those of its ancestors (event delegation).
    pub names: BTreeSet<String>,
    /// Wired by markup alone: an `on*` attribute, a form `action`, a submit/reset button inside a
    /// form, `popovertarget`/`commandfor`/`formaction`.
    pub wired_by_markup: bool,
}

/// What the checks need from one page.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageFacts {
    /// Each id and how often it is used.
    pub ids: BTreeMap<String, usize>,
    /// Every class used.
    pub classes: BTreeSet<String>,
    /// Every element name used (lowercase), the parser's implied `html`/`head`/`body` included.
    pub tags: BTreeSet<String>,
    /// `href`s of `<link rel="stylesheet">`, in order.
    pub stylesheets: Vec<String>,
    /// `src`s of `<script src>`, in order.
    pub scripts: Vec<String>,
    /// Bodies of inline `<script>` elements (non-blank).
    pub inline_scripts: Vec<String>,
    /// Some element has an `on*` handler attribute.
    pub has_handler_attribute: bool,
    /// The page's buttons and forms.
    pub controls: Vec<Control>,
    /// Some input-ish element exists (button, form, input, select, textarea).
    pub has_inputs: bool,
    /// Text a reader sees: text nodes outside script/style/template/noscript, joined by `\n`.
    pub visible_text: String,
    /// The body holds comments and nothing else that shows.
    pub body_only_comments: bool,
}

const HIDDEN_TEXT_PARENTS: &[&str] = &["script", "style", "template", "noscript", "head", "title"];

/// Read one page.
pub(crate) fn page_facts(source: &str) -> PageFacts {
    let doc = Html::parse_document(source);
    let mut facts = PageFacts::default();
    let mut texts = Vec::new();
    for node in doc.tree.nodes() {
        match node.value() {
            Node::Element(el) => {
                let name = el.name();
                facts.tags.insert(name.to_ascii_lowercase());
                if let Some(id) = el.attr("id").filter(|id| !id.is_empty()) {
                    *facts.ids.entry(id.to_string()).or_default() += 1;
                }
                facts.classes.extend(el.classes().map(str::to_string));
                if el.attrs().any(|(a, _)| a.starts_with("on")) {
                    facts.has_handler_attribute = true;
                }
                match name {
                    "link" => {
                        let is_sheet = el.attr("rel").is_some_and(|rel| {
                            rel.split_whitespace()
                                .any(|r| r.eq_ignore_ascii_case("stylesheet"))
                        });
                        if let (true, Some(href)) = (is_sheet, el.attr("href")) {
                            facts.stylesheets.push(href.trim().to_string());
                        }
                    }
                    "script" => {
                        if let Some(src) = el.attr("src") {
                            facts.scripts.push(src.trim().to_string());
                        } else {
                            let body: String = node
                                .children()
                                .filter_map(|c| c.value().as_text().map(|t| t.to_string()))
                                .collect();
                            if !body.trim().is_empty() {
                                facts.inline_scripts.push(body);
                            }
                        }
                    }
                    "button" | "form" | "input" | "select" | "textarea" => {
                        facts.has_inputs = true;
                    }
                    _ => {}
                }
                if name == "button" || name == "form" {
                    let mut control = Control {
                        tag: name.to_string(),
                        ..Control::default()
                    };
                    let mut in_form = false;
                    let own = std::iter::once(node).chain(node.ancestors());
                    for n in own {
                        if let Node::Element(e) = n.value() {
                            if n != node && e.name() == "form" {
                                in_form = true;
                            }
                            control.names.extend(e.attr("id").map(str::to_string));
                            control.names.extend(e.classes().map(str::to_string));
                        }
                    }
                    let kind = el.attr("type").unwrap_or("submit").to_ascii_lowercase();
                    control.wired_by_markup = el.attrs().any(|(a, v)| {
                        (a.starts_with("on") && !v.trim().is_empty())
                            || matches!(a, "popovertarget" | "commandfor" | "formaction")
                    }) || (name == "form"
                        && (el.attr("action").is_some_and(|a| !a.trim().is_empty())
                            || el
                                .attr("method")
                                .is_some_and(|m| m.eq_ignore_ascii_case("dialog"))))
                        || (name == "button" && in_form && (kind == "submit" || kind == "reset"));
                    let text: String = node
                        .descendants()
                        .filter_map(|d| d.value().as_text().map(|t| t.to_string()))
                        .collect::<String>();
                    control.label = if let Some(id) = el.attr("id") {
                        format!("{name}#{id}")
                    } else if let Some(class) = el.classes().next() {
                        format!("{name}.{class}")
                    } else if !text.trim().is_empty() {
                        format!(
                            "{name} \"{}\"",
                            text.split_whitespace().collect::<Vec<_>>().join(" ")
                        )
                    } else {
                        name.to_string()
                    };
                    facts.controls.push(control);
                }
            }
            Node::Text(text) => {
                let hidden = node.ancestors().any(|a| {
                    a.value()
                        .as_element()
                        .is_some_and(|e| HIDDEN_TEXT_PARENTS.contains(&e.name()))
                });
                if !hidden && !text.trim().is_empty() {
                    texts.push(text.trim().to_string());
                }
            }
            _ => {}
        }
    }
    facts.visible_text = texts.join("\n");
    facts.body_only_comments = doc
        .tree
        .nodes()
        .find(|n| n.value().as_element().is_some_and(|e| e.name() == "body"))
        .is_some_and(|body| {
            let mut comments = 0;
            let mut other = 0;
            for child in body.children() {
                match child.value() {
                    Node::Comment(_) => comments += 1,
                    Node::Text(t) if t.trim().is_empty() => {}
                    _ => other += 1,
                }
            }
            comments > 0 && other == 0
        });
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_facts_collects_links_ids_and_controls() {
        let p = page_facts(
            r#"<!doctype html><html><head><link rel="stylesheet" href="a.css">
            <script src="b.js"></script></head><body><div id="x" class="c d">Hi</div>
            <form action="/s"><button>Go</button></form><button id="y" onclick="f()">Y</button>
            <script>let z = 1;</script></body></html>"#,
        );
        assert_eq!(p.stylesheets, vec!["a.css"]);
        assert_eq!(p.scripts, vec!["b.js"]);
        assert_eq!(p.inline_scripts.len(), 1);
        assert_eq!(p.ids.get("x"), Some(&1));
        assert!(p.classes.contains("d"));
        assert_eq!(p.controls.len(), 3);
        assert!(p.controls.iter().all(|c| c.wired_by_markup));
        assert_eq!(p.visible_text, "Hi\nGo\nY");
    }
}
