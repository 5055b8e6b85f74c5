//! Typing into the app in unit tests: a string of keys, `\n` Enter, `\x1b` Esc, `\x08`
//! Backspace.
use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Command, Message, update};

/// Every key of `keys` in turn; the commands they gave, in order.
pub(crate) fn press(app: &mut App, keys: &str) -> Vec<Command> {
    let mut out = Vec::new();
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            '\x08' => KeyCode::Backspace,
            c => KeyCode::Char(c),
        };
        out.extend(update(app, Message::Key(KeyEvent::from(code))));
    }
    out
}
