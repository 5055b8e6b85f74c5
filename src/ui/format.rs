//! Small text helpers: ages the way kubectl prints them, the rollout gauge.
use jiff::Timestamp;

/// kubectl-style age: `45s`, `12m`, `3h`, `5d`; `-` when unknown; `0s` for times ahead of `now`.
pub fn age(since: Option<Timestamp>, now: Timestamp) -> String {
    let Some(since) = since else {
        return "-".into();
    };
    let secs = now.as_second().saturating_sub(since.as_second()).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 2 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// Seconds until `age(since, now)` shows another text (so the runtime wakes only then).
pub fn age_changes_in(since: Timestamp, now: Timestamp) -> i64 {
    let secs = now.as_second().saturating_sub(since.as_second()).max(0);
    let step = match secs {
        s if s < 120 => 1,
        s if s < 2 * 3600 => 60,
        s if s < 2 * 86400 => 3600,
        _ => 86400,
    };
    step - secs % step
}

/// Seconds until the screen should be drawn again for `age(since, now)`: when the text changes
/// while it counts seconds; for ages in minutes, hours or days, at the next multiple of a sixth
/// of that unit on the clock (10 s, 10 min, 4 h) at or after the change. Rows whose minute turns
/// over at different seconds then share one frame instead of one each: an age in minutes is
/// drawn at most 10 s late, and a quiet table of objects a few minutes old wakes at most six
/// times a minute for its ages, not once a second.
pub fn age_redraw_in(since: Timestamp, now: Timestamp) -> i64 {
    let wait = age_changes_in(since, now);
    let secs = now.as_second().saturating_sub(since.as_second()).max(0);
    let grid = match secs {
        s if s < 120 => return wait,
        s if s < 2 * 3600 => 10,
        s if s < 2 * 86400 => 600,
        _ => 4 * 3600,
    };
    let due = now.as_second().saturating_add(wait);
    let aligned = due
        .div_euclid(grid)
        .saturating_add(i64::from(due.rem_euclid(grid) != 0))
        * grid;
    aligned - now.as_second()
}

/// A bar of `width` cells, filled in eighths: `ratio` 0.5, width 4 → `██  `.
pub fn gauge(ratio: f64, width: usize) -> (String, String) {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (ratio.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    let full = eighths / 8;
    let mut filled: String = "█".repeat(full);
    let rest = eighths % 8;
    let mut used = full;
    if rest > 0 && used < width {
        filled.push(PARTS[rest]);
        used += 1;
    }
    (filled, "·".repeat(width.saturating_sub(used)))
}

/// `deployment shop/web`, `namespace shop`: an object as a view's title names it.
pub fn object_title(key: &crate::manifest::ObjectKey) -> String {
    let kind = key.kind.to_ascii_lowercase();
    if key.namespace.is_empty() {
        format!("{kind} {}", key.name)
    } else {
        format!("{kind} {}/{}", key.namespace, key.name)
    }
}

/// Cut `text` to `width` characters, ending with `…` when cut.
pub fn fit(text: &str, width: usize) -> String {
    fitted(text, width).into_owned()
}

/// [`fit`], borrowing `text` when it fits (no copy made).
pub fn fitted(text: &str, width: usize) -> std::borrow::Cow<'_, str> {
    if text.chars().count() <= width {
        return text.into();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out.into()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    #[test]
    fn ages_read_like_kubectl() {
        let now = t(1_000_000);
        assert_eq!(age(Some(t(1_000_000 - 45)), now), "45s");
        assert_eq!(age(Some(t(1_000_000 - 12 * 60)), now), "12m");
        assert_eq!(age(Some(t(1_000_000 - 5 * 3600)), now), "5h");
        assert_eq!(age(Some(t(1_000_000 - 3 * 86400)), now), "3d");
        assert_eq!(age(Some(t(1_000_010)), now), "0s");
        assert_eq!(age(None, now), "-");
    }

    #[test]
    fn age_change_time_matches_the_next_text_change() {
        let now = t(10_000);
        for since in [t(10_000 - 30), t(10_000 - 600), t(10_000 - 9_000), t(0)] {
            let wait = age_changes_in(since, now);
            let later = Timestamp::from_second(now.as_second() + wait).unwrap();
            let just_before = Timestamp::from_second(now.as_second() + wait - 1).unwrap();
            assert_eq!(age(Some(since), just_before), age(Some(since), now));
            assert_ne!(age(Some(since), later), age(Some(since), now));
        }
    }

    #[test]
    fn ages_in_minutes_are_redrawn_together_and_never_early() {
        let now = t(100_000);
        // Rows made 3 min ago, a few seconds apart: their minutes turn over at different
        // seconds, and one frame on the 10 s grid draws them all.
        let waits: Vec<i64> = (0..8)
            .map(|apart| age_redraw_in(t(100_000 - 180 - apart), now))
            .collect();
        assert!(waits.iter().all(|w| *w == waits[0]), "{waits:?}");
        for apart in 0..60 {
            let since = t(100_000 - 180 - apart);
            let change = age_changes_in(since, now);
            let redraw = age_redraw_in(since, now);
            assert!(
                redraw >= change,
                "drawn before its text changes: {redraw} < {change}"
            );
            assert!(
                redraw - change < 10,
                "drawn {redraw} s for a change in {change} s"
            );
            assert_eq!((now.as_second() + redraw) % 10, 0);
        }
        // Seconds still tick each second, up to the 2 min boundary (1m59s → 2m, on time).
        assert_eq!(age_redraw_in(t(100_000 - 30), now), 1);
        assert_eq!(age_redraw_in(t(100_000 - 119), now), 1);
        // Hours: at most 10 min late.
        let since = t(100_000 - 5 * 3600 - 17);
        let (change, redraw) = (age_changes_in(since, now), age_redraw_in(since, now));
        assert!(
            redraw >= change && redraw - change < 600,
            "{redraw} for {change}"
        );
        assert_eq!((now.as_second() + redraw) % 600, 0);
    }

    #[test]
    fn gauge_fills_in_proportion() {
        assert_eq!(gauge(0.0, 4), (String::new(), "····".into()));
        assert_eq!(gauge(0.5, 4), ("██".into(), "··".into()));
        assert_eq!(gauge(1.0, 4), ("████".into(), String::new()));
        assert_eq!(gauge(0.25 + 1.0 / 16.0, 2).0.chars().count(), 1);
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("deployment", 6), "deplo…");
        assert_eq!(fit("web", 6), "web");
    }
}
