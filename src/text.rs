//! Text from the cluster made safe to show: control characters (an annotation holding
//! `ESC ] 0 ; … BEL` retitles the window, `ESC [ 2 J` clears it) are escaped in every text output,
//! commit message and view. Line breaks and tabs stay: they are the outputs' own layout. A
//! value (a field's text) is written on one line ([`one_line`]): a line break inside it must not
//! start a line of the report that is not the report's.
use std::borrow::Cow;

/// True for a character a terminal would act on instead of showing: C0 controls but line feed
/// and tab, DEL, C1 controls, and the Unicode bidi controls, which reorder what follows them on
/// the line (a value could make `3 → 5` read as `5 → 3`: "Trojan Source").
pub fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// The bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the marks
/// U+200E, U+200F and U+061C.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
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

/// A value's text as one line of a report: as it is when it holds no control character at
/// all; else in double quotes with JSON's escapes (`"first\nsecond"`, `"\u001b[31m"`), so a
/// line break, a carriage return or an escape sequence in a live value can neither start a
/// line of the report nor repaint the terminal, and the reader sees that the value holds one.
/// The one escaping of every value kdrift prints: the text and GitHub reports, the accept and
/// revert views, commit messages.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() || is_bidi_control(c)) {
        return Cow::Borrowed(text);
    }
    // JSON leaves DEL and the C1 controls raw: those are written visibly too.
    let quoted = serde_json::Value::String(text.to_owned()).to_string();
    Cow::Owned(printable(&quoted).into_owned())
}

/// Columns between tab stops, as a terminal sets them.
const TAB: usize = 8;

/// The bytes of one container log line as the log view keeps them: invalid UTF-8 replaced
/// (U+FFFD, as a lossy decode), a trailing carriage return dropped, tabs expanded to the next
/// stop (a cell holding a tab would be drawn as nothing), and every other control character
/// written visibly ([`printable`]): a log never drives the terminal.
pub fn log_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    let shown = printable(&text);
    if !shown.contains('\t') {
        return shown.into_owned();
    }
    let mut out = String::with_capacity(shown.len() + TAB);
    let mut column = 0;
    for c in shown.chars() {
        if c == '\t' {
            let next = (column / TAB + 1) * TAB;
            out.extend(std::iter::repeat_n(' ', next - column));
            column = next;
        } else {
            out.push(c);
            column += 1;
        }
    }
    out
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

    #[test]
    fn a_value_is_one_line_that_says_what_it_holds() {
        assert!(matches!(one_line("plain value: ✓"), Cow::Borrowed(_)));
        assert_eq!(one_line("red \u{1b}[31mALERT"), r#""red \u001b[31mALERT""#);
        assert_eq!(
            one_line("ok\nweb  spec.replicas  3 → 5"),
            r#""ok\nweb  spec.replicas  3 → 5""#
        );
        assert_eq!(one_line("over\rwrite\tx"), r#""over\rwrite\tx""#);
        assert_eq!(one_line("a\u{7f}b\u{9b}c"), r#""a^?b\u{9b}c""#);
        assert!(!one_line("x\u{1b}]0;t\u{7}\ny").contains(['\n', '\u{1b}', '\u{7}']));
        // Bidi controls reorder the rest of the line: written visibly, every one of them.
        assert_eq!(one_line("v\u{202e}5 → 3"), r#""v\u{202e}5 → 3""#);
        for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
            let shown = one_line(&format!("a{c}b")).into_owned();
            assert!(!shown.contains(c), "{:x}: {shown}", c as u32);
            assert!(!printable(&format!("a{c}b")).contains(c));
        }
    }

    #[test]
    fn a_log_line_is_decoded_lossily_and_shows_its_escapes() {
        assert_eq!(
            log_line(b"\x1b[31mERROR\x1b[0m disk \xff\xfe full\r"),
            "^[[31mERROR^[[0m disk \u{fffd}\u{fffd} full"
        );
        assert_eq!(log_line(b"\tat Main.main\x07"), "        at Main.main^G");
        assert_eq!(log_line(b"ab\tc"), "ab      c");
        assert_eq!(log_line("naïve ✓".as_bytes()), "naïve ✓");
    }
}
