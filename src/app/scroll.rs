//! The scrolling keys every text view shares (`j`/`k`, `g`/`G`, page down/up): a module of
//! its own, below the views, so that the views do not import the key dispatch that imports them.
use crossterm::event::KeyCode;

/// The scrolling keys of a text view whose lines go from 0 to `last`: `j`/`k`, `g`/`G`, page
/// down/up by `page`. False when `code` is not one of them.
pub fn scroll_key(code: KeyCode, scroll: &mut usize, last: usize, page: usize) -> bool {
    *scroll = match code {
        KeyCode::Char('j') | KeyCode::Down => (*scroll + 1).min(last),
        KeyCode::Char('k') | KeyCode::Up => scroll.saturating_sub(1),
        KeyCode::Char('g') | KeyCode::Home => 0,
        KeyCode::Char('G') | KeyCode::End => last,
        KeyCode::PageDown => (*scroll + page).min(last),
        KeyCode::PageUp => scroll.saturating_sub(page),
        _ => return false,
    };
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_keys_stay_between_the_first_and_the_last_line() {
        let cases = [
            (KeyCode::Char('j'), 5, 6),
            (KeyCode::Down, 9, 9),
            (KeyCode::Char('k'), 0, 0),
            (KeyCode::Up, 5, 4),
            (KeyCode::Char('g'), 5, 0),
            (KeyCode::Char('G'), 2, 9),
            (KeyCode::End, 2, 9),
            (KeyCode::PageDown, 2, 6),
            (KeyCode::PageDown, 7, 9),
            (KeyCode::PageUp, 7, 3),
            (KeyCode::PageUp, 3, 0),
        ];
        for (code, from, want) in cases {
            let mut scroll = from;
            assert!(scroll_key(code, &mut scroll, 9, 4), "{code:?}");
            assert_eq!(scroll, want, "{code:?} from {from}");
        }
        let mut scroll = 5;
        assert!(!scroll_key(KeyCode::Char('x'), &mut scroll, 9, 4));
        assert_eq!(scroll, 5);
    }
}
