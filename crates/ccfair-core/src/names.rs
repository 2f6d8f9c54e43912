//! Names a user writes (a congestion control, a queue discipline, a parameter, a scenario key) and what an
//! error says of one that is not known: the names allowed and, when one of them is close, the one probably
//! meant ("did you mean").
//!
//! Close means equal once case, `-` and spaces are set aside (`Cubic`, `fq-codel`), or within a small edit
//! distance of it: the optimal-string-alignment distance (insertions, deletions, substitutions and swaps of
//! two neighbours, each 1), at most a third of the written name's length and at least 1 (`bbrv2` -> `bbr2`,
//! `betta` -> `beta`, `hystrat` -> `hystart`). A third keeps a short name from matching an unrelated one
//! (`vegas` is 4 edits from `reno`). Ties go to the name listed first.

/// The allowed name closest to `written`, if one is close (see the module docs).
pub fn closest<'a>(written: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let w = normalized(written);
    if let Some(exact) = allowed.iter().find(|a| normalized(a) == w) {
        return Some(exact);
    }
    let limit = (w.chars().count() / 3).max(1);
    allowed
        .iter()
        .map(|a| (osa_distance(&w, &normalized(a)), *a))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// `; did you mean "name"?` for the closest allowed name (quoted as Rust's `Debug` quotes a string), or
/// nothing.
pub fn did_you_mean(written: &str, allowed: &[&str]) -> String {
    closest(written, allowed)
        .map(|a| format!("; did you mean {a:?}?"))
        .unwrap_or_default()
}

/// The message for an unknown parameter `key` of an algorithm or a queue discipline, one wording for
/// both: `unknown parameter "betta"; allowed: beta, c, ...; did you mean "beta"?`, and where nothing is
/// allowed `unknown parameter "x"; allowed: none (reno has no parameters)`, `none` saying why. `meant` is
/// the suggestion, usually [`closest`] of the allowed names.
pub fn unknown_parameter(key: &str, allowed: &[&str], meant: Option<&str>, none: &str) -> String {
    if allowed.is_empty() {
        return format!("unknown parameter {key:?}; allowed: none ({none})");
    }
    let hint = meant
        .map(|m| format!("; did you mean {m:?}?"))
        .unwrap_or_default();
    format!("unknown parameter {key:?}; allowed: {}{hint}", allowed.join(", "))
}

/// The allowed names as an error lists them, each in single quotes: `'fixed', 'uniform'`.
pub fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn normalized(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The optimal-string-alignment distance between `a` and `b`, by characters.
fn osa_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const CCS: &[&str] = &["reno", "cubic", "dctcp", "prague", "bbr", "bbr2", "bbr3"];

    #[test]
    fn case_dashes_and_small_edits_find_the_name() {
        assert_eq!(closest("Cubic", CCS), Some("cubic"));
        assert_eq!(closest("bbrv2", CCS), Some("bbr2"));
        assert_eq!(closest("BBRv3", CCS), Some("bbr3"));
        assert_eq!(closest("fq-codel", &["codel", "fq_codel"]), Some("fq_codel"));
        assert_eq!(closest("betta", &["beta", "c"]), Some("beta"));
        assert_eq!(
            closest("hystrat", &["hystart", "hystart_detect"]),
            Some("hystart")
        );
    }

    #[test]
    fn far_names_get_no_suggestion() {
        assert_eq!(closest("vegas", CCS), None);
        assert_eq!(closest("x", &["beta"]), None);
        assert_eq!(closest("", CCS), None);
        assert_eq!(did_you_mean("vegas", CCS), "");
    }

    #[test]
    fn the_distance_counts_a_swap_as_one_edit() {
        assert_eq!(osa_distance("ab", "ba"), 1);
        assert_eq!(osa_distance("kitten", "sitting"), 3);
        assert_eq!(osa_distance("", "abc"), 3);
        assert_eq!(osa_distance("same", "same"), 0);
    }

    #[test]
    fn one_wording_for_unknown_parameters() {
        assert_eq!(
            unknown_parameter("betta", &["beta", "c"], Some("beta"), "cubic has no parameters"),
            "unknown parameter \"betta\"; allowed: beta, c; did you mean \"beta\"?"
        );
        assert_eq!(
            unknown_parameter("x", &[], None, "reno has no parameters"),
            "unknown parameter \"x\"; allowed: none (reno has no parameters)"
        );
    }
}
