//! What the person's request says about web work: whether it is static web work at all,
//! whether it asks for behaviour, and which interaction ("clicking #a updates #b") it names.

use std::sync::LazyLock;

use regex::Regex;

static WEB_WORDS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(web\s*sites?|web\s*pages?|landing\s+pages?|index\.html?|style\s*sheets?|buttons?|click(s|ing|ed)?|[\w-]+\.html?)\b",
    )
    .ok()
});

static BEHAVIOUR_WORDS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(click(s|ing|ed)?|toggl(e|es|ed|ing)|counters?|interactive|submit(s|ted|ting)?|onclick|events?|when\s+the\s+button)\b",
    )
    .ok()
});

static TRIGGER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:click|clicks|clicking|clicked|tap|tapping|press|pressing)\s+(?:on\s+)?(?:the\s+)?(?:\w+\s+)?`?#([A-Za-z][\w-]*)").ok()
});

static EFFECT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:update|updates|updating|change|changes|changing|show|shows|showing|reveal|reveals|toggle|toggles|fill|fills|set|sets)\s+(?:the\s+)?(?:text\s+(?:of|in)\s+)?(?:\w+\s+)?`?#([A-Za-z][\w-]*)").ok()
});

/// Whether a request/targets look like static web work: an `.html`/`.htm`/`.css` target, or
/// words like website, web page, landing page, index.html, stylesheet, button, click.
pub fn is_static_web(request: &str, targets: &[String]) -> bool {
    let web_target = targets.iter().any(|t| {
        let t = t.to_ascii_lowercase();
        t.ends_with(".html") || t.ends_with(".htm") || t.ends_with(".css")
    });
    web_target || WEB_WORDS.as_ref().is_some_and(|re| re.is_match(request))
}

/// Whether the request asks for behaviour (click, toggle, counter, interactive, submit, ...).
pub(crate) fn asks_for_behaviour(request: &str) -> bool {
    BEHAVIOUR_WORDS
        .as_ref()
        .is_some_and(|re| re.is_match(request))
}

/// The interaction a request names, as (trigger id, target id): an element id after
/// click/clicking and another id after updates/changes/shows, e.g. "clicking #teaser-button
/// updates #teaser-status" -> ("teaser-button", "teaser-status").
pub fn requested_interaction(request: &str) -> Option<(String, String)> {
    let trigger = TRIGGER.as_ref()?.captures(request)?;
    let after = trigger.get(0)?.end();
    let effect = EFFECT.as_ref()?.captures(&request[after..])?;
    let trigger_id = trigger.get(1)?.as_str().to_string();
    let target_id = effect.get(1)?.as_str().to_string();
    (trigger_id != target_id).then_some((trigger_id, target_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_static_web_table() {
        let rows: &[(&str, &[&str], bool)] = &[
            ("Build a landing page for my bakery", &[], true),
            ("make a small website", &[], true),
            ("Fix the stylesheet colours", &[], true),
            ("add a button that counts clicks", &[], true),
            ("edit index.html to add a footer", &[], true),
            ("update about.htm", &[], true),
            ("change the title", &["site/index.html"], true),
            ("tweak it", &["styles.css"], true),
            ("fix the parser bug in src/lib.rs", &["src/lib.rs"], false),
            ("add a CLI flag --verbose", &[], false),
        ];
        for (req, targets, want) in rows {
            let targets: Vec<String> = targets.iter().map(|s| s.to_string()).collect();
            assert_eq!(is_static_web(req, &targets), *want, "request: {req}");
        }
    }

    #[test]
    fn behaviour_table() {
        let rows = [
            ("clicking the button shows a message", true),
            ("a counter that goes up", true),
            ("make it interactive", true),
            ("toggle dark mode", true),
            ("when the button is pressed", true),
            ("a static page about cats", false),
            ("make the heading blue", false),
        ];
        for (req, want) in rows {
            assert_eq!(asks_for_behaviour(req), want, "request: {req}");
        }
    }

    #[test]
    fn interaction_table() {
        let rows: &[(&str, Option<(&str, &str)>)] = &[
            (
                "Make it so clicking #teaser-button updates #teaser-status",
                Some(("teaser-button", "teaser-status")),
            ),
            (
                "When I click #go it changes #out to say hi",
                Some(("go", "out")),
            ),
            (
                "click the button #b1 and it shows #msg",
                Some(("b1", "msg")),
            ),
            ("clicking `#a` updates `#b`", Some(("a", "b"))),
            ("add a button that shows a message", None),
            ("clicking #a does nothing", None),
            ("make #x blue", None),
        ];
        for (req, want) in rows {
            let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
            assert_eq!(requested_interaction(req), want, "request: {req}");
        }
    }
}
