//! Retention: which of the home's records to remove, given what is stored, the age and size
//! limits and the time now. The daemon lists what is on disk (turns: a trace and its turn log;
//! checkpoints: a manifest and the content-addressed objects it names), passes it in, and
//! removes exactly what the [`Plan`] names.
//!
//! The rules, in order: an object no item references is removed (when the caller may touch
//! objects at all); an item older than the age limit is removed; then, while the total is over
//! the size limit, the oldest remaining item is removed (ties: the order given), and each object
//! whose last reference went with it. An item the caller marks `keep` (a running turn's trace,
//! a checkpoint while turns run) is never removed, so the plan may end over the limit; it says
//! so in [`Plan::bytes_after`].

use std::collections::BTreeMap;

/// The limits a home is kept under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Items older than this many milliseconds are removed.
    pub max_age_ms: u64,
    /// The most bytes items and objects may take together.
    pub max_bytes: u64,
}

/// One removable unit: a turn's trace with its turn log, or a checkpoint's manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// When it was written, in milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// Its own bytes (objects are counted once, apart).
    pub bytes: u64,
    /// The objects it references (content addresses).
    pub objects: Vec<String>,
    /// Never remove it.
    pub keep: bool,
}

/// Why something is removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Why {
    /// Older than the age limit.
    Age,
    /// Removed, oldest first, to bring the total under the size limit.
    Size,
    /// An object no remaining item references.
    Unreferenced,
}

/// What to remove.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Indexes into the items given, in the order decided.
    pub items: Vec<(usize, Why)>,
    /// Objects to remove, by content address, in the order decided.
    pub objects: Vec<(String, Why)>,
    /// The bytes that remain once the plan is carried out.
    pub bytes_after: u64,
}

/// Decides what to remove. `objects` maps each stored object to its size; `sweep_objects` false
/// leaves every object in place (the caller could not exclude writers meanwhile).
pub fn plan(
    items: &[Item],
    objects: &BTreeMap<String, u64>,
    limits: Limits,
    now_ms: u64,
    sweep_objects: bool,
) -> Plan {
    let mut references: BTreeMap<&str, usize> = objects.keys().map(|k| (k.as_str(), 0)).collect();
    for item in items {
        for object in &item.objects {
            if let Some(count) = references.get_mut(object.as_str()) {
                *count += 1;
            }
        }
    }
    let mut plan = Plan::default();
    let mut total: u64 = items
        .iter()
        .map(|item| item.bytes)
        .chain(objects.values().copied())
        .fold(0, u64::saturating_add);
    let release = |object: &str, why: Why, total: &mut u64, plan: &mut Plan| {
        if !sweep_objects {
            return;
        }
        plan.objects.push((object.to_string(), why));
        *total = total.saturating_sub(objects.get(object).copied().unwrap_or(0));
    };
    for (object, count) in &references {
        if *count == 0 {
            release(object, Why::Unreferenced, &mut total, &mut plan);
        }
    }
    let cutoff = now_ms.saturating_sub(limits.max_age_ms);
    let mut remove = |index: usize, why: Why, total: &mut u64, plan: &mut Plan| {
        plan.items.push((index, why));
        *total = total.saturating_sub(items[index].bytes);
        for object in &items[index].objects {
            if let Some(count) = references.get_mut(object.as_str()) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    release(object, Why::Unreferenced, total, plan);
                }
            }
        }
    };
    for (index, item) in items.iter().enumerate() {
        if !item.keep && item.time_ms < cutoff {
            remove(index, Why::Age, &mut total, &mut plan);
        }
    }
    let mut by_age: Vec<usize> = (0..items.len())
        .filter(|index| !items[*index].keep && !plan.items.iter().any(|(i, _)| i == index))
        .collect();
    by_age.sort_by_key(|index| (items[*index].time_ms, *index));
    for index in by_age {
        if total <= limits.max_bytes {
            break;
        }
        remove(index, Why::Size, &mut total, &mut plan);
    }
    plan.bytes_after = total;
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400_000;
    const NOW: u64 = 100 * DAY;

    fn item(age_days: u64, bytes: u64, objects: &[&str], keep: bool) -> Item {
        Item {
            time_ms: NOW - age_days * DAY,
            bytes,
            objects: objects.iter().map(|o| o.to_string()).collect(),
            keep,
        }
    }

    fn check(
        items: &[Item],
        objects: &[(&str, u64)],
        (max_age_days, max_bytes): (u64, u64),
        sweep_objects: bool,
        expected: (&[(usize, Why)], &[(&str, Why)], u64),
    ) {
        let objects: BTreeMap<String, u64> =
            objects.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let limits = Limits {
            max_age_ms: max_age_days * DAY,
            max_bytes,
        };
        let got = plan(items, &objects, limits, NOW, sweep_objects);
        let want = Plan {
            items: expected.0.to_vec(),
            objects: expected
                .1
                .iter()
                .map(|(k, why)| (k.to_string(), *why))
                .collect(),
            bytes_after: expected.2,
        };
        assert_eq!(got, want);
    }

    #[test]
    fn nothing_is_removed_under_both_limits() {
        check(
            &[item(1, 10, &["a"], false), item(2, 10, &[], false)],
            &[("a", 5)],
            (30, 100),
            true,
            (&[], &[], 25),
        );
    }

    #[test]
    fn items_past_the_age_limit_go_and_their_last_references_with_them() {
        check(
            &[
                item(31, 10, &["a", "b"], false),
                item(29, 10, &["b"], false),
                item(40, 1, &[], false),
            ],
            &[("a", 5), ("b", 7)],
            (30, 1_000),
            true,
            (
                &[(0, Why::Age), (2, Why::Age)],
                &[("a", Why::Unreferenced)],
                17,
            ),
        );
    }

    #[test]
    fn over_the_size_limit_the_oldest_go_first_until_it_fits() {
        check(
            &[
                item(3, 40, &[], false),
                item(5, 40, &[], false),
                item(1, 40, &[], false),
                item(4, 40, &[], false),
            ],
            &[],
            (30, 100),
            true,
            (&[(1, Why::Size), (3, Why::Size)], &[], 80),
        );
    }

    #[test]
    fn an_object_shared_by_two_items_stays_until_both_are_gone() {
        check(
            &[item(5, 1, &["s"], false), item(4, 1, &["s"], false)],
            &[("s", 100)],
            (30, 50),
            true,
            (
                &[(0, Why::Size), (1, Why::Size)],
                &[("s", Why::Unreferenced)],
                0,
            ),
        );
    }

    #[test]
    fn unreferenced_objects_go_first_and_may_be_enough() {
        check(
            &[item(5, 10, &["a"], false)],
            &[("a", 10), ("orphan", 90)],
            (30, 50),
            true,
            (&[], &[("orphan", Why::Unreferenced)], 20),
        );
    }

    #[test]
    fn kept_items_are_never_removed_even_over_the_limits() {
        check(
            &[item(90, 60, &["a"], true), item(80, 60, &[], false)],
            &[("a", 10)],
            (30, 50),
            true,
            (&[(1, Why::Age)], &[], 70),
        );
    }

    #[test]
    fn without_the_object_sweep_objects_stay_and_still_count() {
        check(
            &[item(40, 10, &["a"], false), item(1, 10, &[], false)],
            &[("a", 10), ("orphan", 10)],
            (30, 15),
            false,
            (&[(0, Why::Age), (1, Why::Size)], &[], 20),
        );
    }

    #[test]
    fn equal_times_go_in_the_order_given_and_future_times_are_young() {
        let future = Item {
            time_ms: NOW + DAY,
            bytes: 10,
            objects: Vec::new(),
            keep: false,
        };
        check(
            &[item(2, 10, &[], false), item(2, 10, &[], false), future],
            &[],
            (30, 15),
            true,
            (&[(0, Why::Size), (1, Why::Size)], &[], 10),
        );
    }

    #[test]
    fn a_reference_to_a_missing_object_changes_nothing() {
        check(
            &[item(1, 10, &["gone"], false)],
            &[],
            (30, 100),
            true,
            (&[], &[], 10),
        );
    }
}
