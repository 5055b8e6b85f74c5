//! Text from the cluster made safe to show: control characters (an annotation holding
//! `ESC ] 0 ; … BEL` retitles the window, `ESC [ 2 J` clears it) are escaped in every text output,
//! commit message and view. Line breaks and tabs stay: they are the outputs' own layout.
use std::borrow::Cow;

/// True for a character a terminal would act on instead of showing: C0 controls but line feed
/// and tab, DEL, and C1 controls.
pub fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` with each control character written visibly: `^[` for ESC (caret notation, as
/// `cat -v`), `^?` for DEL, `\u{9b}` for a C1 control. Borrowed when there is none.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !is_control(c) => out.push(c),
            '\u{7f}' => out.push_str("^?"),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_not_obeyed_and_layout_stays() {
        assert_eq!(
            printable("note: \u{1b}]0;pwned\u{7}\u{1b}[2J done"),
            "note: ^[]0;pwned^G^[[2J done"
        );
        assert_eq!(printable("a\u{7f}b\u{9b}c"), "a^?b\\u{9b}c");
        assert!(matches!(
            printable("two\nlines\tand a tab"),
            Cow::Borrowed(_)
        ));
        assert_eq!(printable("héllo → ✓"), "héllo → ✓");
    }
}
