//! Themes: TOML files of named styles. The default is embedded; a user theme (by name or path) is
//! laid over it; a bad theme is reported and the defaults are kept; `NO_COLOR` picks monochrome.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The themes shipped in `themes/`, embedded so `--theme light` works from any directory.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../themes/default.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("colorblind", include_str!("../../themes/colorblind.toml")),
    ("monochrome", include_str!("../../themes/monochrome.toml")),
];

macro_rules! theme_styles {
    ($($name:ident),* $(,)?) => {
        /// Every style the screen uses, by role.
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct Theme {
            $(pub $name: Style,)*
        }

        impl Theme {
            /// The style keys a theme file may set.
            pub const KEYS: &[&str] = &[$(stringify!($name)),*];

            fn slot(&mut self, key: &str) -> Option<&mut Style> {
                match key {
                    $(stringify!($name) => Some(&mut self.$name),)*
                    _ => None,
                }
            }
        }
    };
}

theme_styles!(
    text,
    muted,
    border,
    title,
    header,
    selected,
    status_bar,
    status_key,
    complete,
    progressing,
    scaling,
    stuck,
    paused,
    gauge_empty,
    drifted,
    in_sync,
    warning,
    error,
    stale,
    unmanaged,
    diff_added,
    diff_removed,
    diff_hunk,
    diff_note,
);

#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("theme {origin}: {source}")]
    Read {
        origin: String,
        #[source]
        source: std::io::Error,
    },
    #[error("theme {origin}: {message}")]
    Parse { origin: String, message: String },
    #[error("theme {origin}: unknown style key \"{key}\" (known: {})", Theme::KEYS.join(", "))]
    UnknownKey { origin: String, key: String },
    #[error("theme {origin}: style \"{key}\" = \"{value}\": {reason}")]
    BadStyle {
        origin: String,
        key: String,
        value: String,
        reason: String,
    },
    #[error(
        "no theme named \"{0}\" (built in: default, light, colorblind, monochrome; or give a path to a .toml file)"
    )]
    UnknownName(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    #[serde(default)]
    styles: BTreeMap<String, String>,
}

impl Theme {
    /// A list's row: bold in the selected style under the cursor, plain elsewhere.
    pub fn list_row(&self, under_cursor: bool) -> Style {
        if under_cursor {
            self.selected.add_modifier(ratatui::style::Modifier::BOLD)
        } else {
            Style::default()
        }
    }

    /// The embedded default theme.
    pub fn default_theme() -> Theme {
        let mut theme = Theme::default();
        // The embedded file is checked by a test; were it broken, unstyled text is still usable.
        let _ = theme.lay_over(BUILTIN[0].1, "default");
        theme
    }

    /// Parse `text` and lay its styles over `self`; on error `self` is unchanged.
    pub fn lay_over(&mut self, text: &str, origin: &str) -> Result<(), ThemeError> {
        let file: ThemeFile = toml::from_str(text).map_err(|e| ThemeError::Parse {
            origin: origin.to_string(),
            message: e
                .to_string()
                .replace('\n', " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        })?;
        let mut next = self.clone();
        for (key, value) in &file.styles {
            let style = parse_style(value).map_err(|reason| ThemeError::BadStyle {
                origin: origin.to_string(),
                key: key.clone(),
                value: value.clone(),
                reason,
            })?;
            let slot = next.slot(key).ok_or_else(|| ThemeError::UnknownKey {
                origin: origin.to_string(),
                key: key.clone(),
            })?;
            *slot = style;
        }
        *self = next;
        Ok(())
    }

    /// The theme to use: `--theme` (a built-in name, a name in the user's theme folder, or a
    /// path), else monochrome under `NO_COLOR`, else the default. A bad choice gives the default
    /// theme and the error to show.
    pub fn load(choice: Option<&str>, no_color: bool) -> (Theme, Option<ThemeError>) {
        let mut theme = Theme::default_theme();
        let choice = match choice {
            Some(c) => c,
            None if no_color => "monochrome",
            None => return (theme, None),
        };
        let result = read_choice(choice).and_then(|(text, origin)| theme.lay_over(&text, &origin));
        match result {
            Ok(()) => (theme, None),
            Err(e) => (Theme::default_theme(), Some(e)),
        }
    }
}

/// `NO_COLOR` is honoured when set to anything non-empty (no-color.org).
pub fn no_color_from_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Where user themes live: `$XDG_CONFIG_HOME/kdrift/themes/NAME.toml`.
pub fn user_theme_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("kdrift").join("themes"))
}

fn read_choice(choice: &str) -> Result<(String, String), ThemeError> {
    let looks_like_path = choice.contains('/') || choice.ends_with(".toml");
    if !looks_like_path {
        if let Some((_, text)) = BUILTIN.iter().find(|(name, _)| *name == choice) {
            return Ok((text.to_string(), format!("\"{choice}\"")));
        }
        if let Some(path) = user_theme_dir().map(|d| d.join(format!("{choice}.toml")))
            && path.exists()
        {
            return read_file(&path);
        }
        return Err(ThemeError::UnknownName(choice.to_string()));
    }
    read_file(Path::new(choice))
}

fn read_file(path: &Path) -> Result<(String, String), ThemeError> {
    let origin = format!("\"{}\"", path.display());
    std::fs::read_to_string(path)
        .map(|text| (text, origin.clone()))
        .map_err(|source| ThemeError::Read { origin, source })
}

/// `"white on blue bold"`: a foreground, optionally `on` a background, then modifiers.
pub fn parse_style(text: &str) -> Result<Style, String> {
    let mut style = Style::default();
    let mut words = text.split_whitespace().peekable();
    let mut fg_set = false;
    while let Some(word) = words.next() {
        let modifier = match word.to_ascii_lowercase().as_str() {
            "bold" => Some(Modifier::BOLD),
            "dim" => Some(Modifier::DIM),
            "italic" => Some(Modifier::ITALIC),
            "underlined" | "underline" => Some(Modifier::UNDERLINED),
            "reversed" | "reverse" => Some(Modifier::REVERSED),
            "on" => {
                let bg = words
                    .next()
                    .ok_or("\"on\" needs a background colour after it")?;
                style = style.bg(color(bg)?);
                continue;
            }
            _ => None,
        };
        match modifier {
            Some(m) => style = style.add_modifier(m),
            None if !fg_set => {
                style = style.fg(color(word)?);
                fg_set = true;
            }
            None => return Err(format!("unexpected word \"{word}\"")),
        }
    }
    Ok(style)
}

fn color(word: &str) -> Result<Color, String> {
    Color::from_str(word).map_err(|_| format!("unknown colour \"{word}\""))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_themes_loads_without_error() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("themes");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let mut theme = Theme::default_theme();
                theme.lay_over(&text, &path.display().to_string()).unwrap();
                let name = path.file_stem().unwrap().to_str().unwrap();
                assert!(
                    BUILTIN.iter().any(|(n, _)| *n == name),
                    "{name} is not embedded"
                );
                seen += 1;
            }
        }
        assert_eq!(seen, BUILTIN.len());
    }

    #[test]
    fn default_sets_every_key() {
        let file: ThemeFile = toml::from_str(BUILTIN[0].1).unwrap();
        for key in Theme::KEYS {
            assert!(file.styles.contains_key(*key), "default theme lacks {key}");
        }
    }

    #[test]
    fn user_theme_is_laid_over_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "[styles]\nstuck = \"#ff00ff\"\n").unwrap();
        let (theme, err) = Theme::load(Some(path.to_str().unwrap()), false);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(theme.stuck.fg, Some(Color::Rgb(255, 0, 255)));
        assert_eq!(theme.complete, Theme::default_theme().complete);
    }

    #[test]
    fn bad_theme_is_reported_and_defaults_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[styles]\nstuck = \"rde bold\"\n").unwrap();
        let (theme, err) = Theme::load(Some(path.to_str().unwrap()), false);
        let text = err.unwrap().to_string();
        assert!(
            text.contains("bad.toml") && text.contains("\"rde\"") && text.contains("stuck"),
            "{text}"
        );
        assert_eq!(theme, Theme::default_theme());

        std::fs::write(&path, "[styles]\nstuk = \"red\"\n").unwrap();
        let (_, err) = Theme::load(Some(path.to_str().unwrap()), false);
        assert!(err.unwrap().to_string().contains("\"stuk\""));

        std::fs::write(&path, "[styles\n").unwrap();
        let (_, err) = Theme::load(Some(path.to_str().unwrap()), false);
        assert!(err.unwrap().to_string().contains("line 1"));

        let (_, err) = Theme::load(Some("nosuchtheme"), false);
        assert!(err.unwrap().to_string().contains("\"nosuchtheme\""));
    }

    #[test]
    fn no_color_picks_monochrome_unless_a_theme_is_given() {
        let (mono, _) = Theme::load(None, true);
        assert_eq!(mono.stuck.fg, Some(Color::Reset));
        assert!(mono.stuck.add_modifier.contains(Modifier::BOLD));
        let (light, _) = Theme::load(Some("light"), true);
        assert_ne!(light.stuck.fg, Some(Color::Reset));
    }

    #[test]
    fn style_words_parse() {
        let s = parse_style("white on blue bold").unwrap();
        assert_eq!((s.fg, s.bg), (Some(Color::White), Some(Color::Blue)));
        assert!(s.add_modifier.contains(Modifier::BOLD));
        assert!(parse_style("red green").is_err());
        assert!(parse_style("red on").is_err());
    }
}
