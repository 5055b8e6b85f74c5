//! The user config file, `$XDG_CONFIG_HOME/kdrift/config.toml` (or the file `$KDRIFT_CONFIG`
//! names): `readonly = true` and `theme = "NAME"` (the `--theme` default). Read once, right after
//! the command line is parsed, and folded into the common flags (`cli::CommonArgs`). A bad file is reported with its
//! line; its theme is not used, and kdrift runs read-only until it is fixed: a file that cannot be
//! read may be the one that says `readonly = true`, and an on-call tool fails closed.
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Names a config file to use instead of the default one (tests, or several setups).
pub const CONFIG_ENV: &str = "KDRIFT_CONFIG";

/// What the file may set.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// Remove the accept and revert actions, as `--readonly` does.
    #[serde(default)]
    pub readonly: bool,
    /// The theme when `--theme` is not given.
    pub theme: Option<String>,
}

/// Why the file was not used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config \"{path}\": {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("config \"{path}\", line {line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
}

/// Where read-only came from, so a refusal can say how to lift it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnlyFrom {
    /// `--readonly` was given.
    pub flag: bool,
    /// The config file that says `readonly = true`.
    pub file: Option<PathBuf>,
    /// The config file that could not be read (read-only until it is fixed).
    pub bad_file: Option<PathBuf>,
}

impl fmt::Display for ReadOnlyFrom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(bad) = &self.bad_file {
            return write!(f, "the config \"{}\" could not be read", bad.display());
        }
        match (&self.file, self.flag) {
            (None, _) => write!(f, "--readonly"),
            (Some(file), false) => write!(f, "readonly = true in \"{}\"", file.display()),
            (Some(file), true) => {
                write!(
                    f,
                    "--readonly, and readonly = true in \"{}\"",
                    file.display()
                )
            }
        }
    }
}

impl ReadOnlyFrom {
    /// What the operator does to get the action back.
    pub fn how_to_lift(&self) -> String {
        if let Some(bad) = &self.bad_file {
            let fix = format!("fix \"{}\"", bad.display());
            return if self.flag {
                format!("{fix} and run without --readonly")
            } else {
                fix
            };
        }
        match (&self.file, self.flag) {
            (None, _) => "run without --readonly".to_owned(),
            (Some(file), false) => format!("set readonly = false in \"{}\"", file.display()),
            (Some(file), true) => format!(
                "run without --readonly and set readonly = false in \"{}\"",
                file.display()
            ),
        }
    }

    /// The refusal of a subcommand: `revert is disabled: kdrift runs read-only (--readonly); run
    /// without --readonly to revert`.
    pub fn refusal(&self, action: &str) -> String {
        format!(
            "{action} is disabled: kdrift runs read-only ({self}); {} to {action}",
            self.how_to_lift()
        )
    }
}

/// The config file in use: `$KDRIFT_CONFIG`, else `config.toml` in the user's config folder.
pub fn path() -> Option<PathBuf> {
    match std::env::var_os(CONFIG_ENV).filter(|v| !v.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None => default_path(),
    }
}

/// `$XDG_CONFIG_HOME/kdrift/config.toml` (the folder of the user themes' `themes/`).
pub fn default_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("kdrift").join("config.toml"))
}

/// Parse the text of a config file; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<UserConfig, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.display().to_string(),
        line: e.span().map_or(1, |span| line_of(text, span.start)),
        message: e.message().trim().replace('\n', " "),
    })
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).unwrap_or(text).matches('\n').count() + 1
}

/// Read the config file at `path`. A missing file is no config, unless it was named by
/// `$KDRIFT_CONFIG` (`required`).
pub fn load(path: &Path, required: bool) -> Result<UserConfig, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            Ok(UserConfig::default())
        }
        Err(source) => Err(ConfigError::Read {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// The text under `--help`: where the log and the config file are.
pub fn after_help() -> String {
    let config = default_path().map_or_else(
        || "$XDG_CONFIG_HOME/kdrift/config.toml".to_owned(),
        |p| p.display().to_string(),
    );
    let key = crate::state::digest_key_path().map_or_else(
        || format!("$XDG_STATE_HOME/kdrift/{}", crate::state::DIGEST_KEY_FILE),
        |p| p.display().to_string(),
    );
    format!(
        "{}\nConfig: {config} (readonly = true, theme = \"NAME\"; {CONFIG_ENV}=FILE names another)\nSecrets: values are shown as keyed digests (hmac-sha256:…), HMAC-SHA256 with the key in {key} (made on first use, mode 0600): equal values read alike, and no table of known values reverses them",
        crate::logging::after_help()
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_file_names_its_line() {
        let path = Path::new("/cfg/config.toml");
        let err = parse("theme = \"light\"\nreadonli = true\n", path).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("config \"/cfg/config.toml\", line 2: unknown field `readonli`"),
            "{text}"
        );
        let err = parse("readonly = \"yes\"\n", path).unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        let err = parse("\n\ntheme = [\n", path).unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn a_missing_default_file_is_no_config_but_a_named_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("config.toml");
        assert_eq!(load(&missing, false).unwrap(), UserConfig::default());
        let err = load(&missing, true).unwrap_err().to_string();
        assert!(err.contains("config.toml"), "{err}");
    }
}
