//! What each key does, per mode (k9s conventions, docs/ARCHITECTURE.md "Look and keys").
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::table::SortBy;
use super::{App, Command, Flash, Prompt, Screen};
use crate::cluster::client::NamespaceScope;
use crate::cluster::rows::WorkloadKind;

/// One line of the help overlay: keys and what they do. Every key handled below is listed.
pub const HELP: &[(&str, &str)] = &[
    ("j / ↓", "next row"),
    ("k / ↑", "previous row"),
    ("g / home", "first row"),
    ("G / end", "last row"),
    ("pgdn / ctrl-f", "page down"),
    ("pgup / ctrl-b", "page up"),
    ("enter", "open the workload's detail"),
    ("l", "detail: the selected pod's log (j/k select)"),
    ("p", "log: the previous run's log (a crash) or back"),
    ("c", "log: the next container"),
    ("w", "log: wrap long lines"),
    ("/  n  N", "log: search, next / previous match"),
    ("g  G", "log: oldest line / newest, following"),
    ("d", "diff: manifest against live, who changed what"),
    ("n / ]  N / [", "diff: next / previous drifted field"),
    ("ctrl-r", "diff: fetch the live object again"),
    ("r", "revert to the manifest: dry run, then y/enter"),
    ("a", "accept into git: space toggles, enter commits"),
    ("u", "detail: roll back to the previous revision"),
    ("esc", "back / clear the filter"),
    ("/", "filter by name, namespace or phase"),
    ("N  P  A", "sort by name, phase (stuck first), age"),
    (
        ":ns [NAME]",
        "pick a namespace (/ filters) or watch NAME/all",
    ),
    (
        ":ctx [NAME]",
        "pick a kubeconfig context or watch NAME alone",
    ),
    (":ctx +/-NAME", "watch context NAME too / stop watching it"),
    ("c", "compare the row across the contexts"),
    (":workloads", "every workload kind in one table"),
    (":deploy/sts/ds", "the workloads of one kind"),
    (":drift", "drifted or missing objects of every kind"),
    (":changes", "what changed, newest first (live)"),
    ("K  M", "changes: next kind / manager filter"),
    (":problems", "what could not be read in the manifests"),
    (":q", "quit"),
    ("?", "this help"),
    ("ctrl-z", "suspend to the shell"),
    ("q / ctrl-c", "quit"),
];

/// Keys that change the cluster or the manifests: not handled, not shown, when read-only.
/// The help overlay's width at most.
pub const HELP_WIDTH: u16 = 64;

pub const WRITE_KEYS: &[&str] = &["a", "r", "u"];

/// What `c` says with one context watched.
pub const COMPARE_NEEDS: &str =
    "compare needs two contexts or more: :ctx +NAME watches another beside this one";

/// The help lines to show: without the write keys when read-only.
pub fn help(readonly: bool) -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    HELP.iter()
        .filter(move |(keys, _)| !(readonly && WRITE_KEYS.contains(keys)))
}

/// How many keys the help overlay shows in a popup `width`×`height` (its frame and the footer
/// take three rows, or two when the frame is bare).
pub fn help_rows(width: u16, height: u16) -> usize {
    let frame = if super::bare_frame(width, height) {
        1
    } else {
        2
    };
    usize::from(height.saturating_sub(frame + 1)).max(1)
}

pub fn handle_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == KeyCode::Char('c') {
        return vec![Command::Quit];
    }
    if ctrl && key.code == KeyCode::Char('z') {
        return vec![Command::Suspend];
    }
    if app.prompt.is_some() {
        return prompt_key(app, key);
    }
    if app.help {
        match key.code {
            KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') => {
                app.help = false;
                app.help_scroll = 0;
            }
            // A help taller than the screen scrolls (the drawing keeps the last page in view).
            KeyCode::Char('j') | KeyCode::Down => {
                // The body is the screen less the status bar and the hints line.
                let room = help_rows(app.width.min(HELP_WIDTH), app.height.saturating_sub(2));
                let last = help(app.readonly).count().saturating_sub(room);
                app.help_scroll = (app.help_scroll + 1).min(last);
            }
            KeyCode::Char('k') | KeyCode::Up => app.help_scroll = app.help_scroll.saturating_sub(1),
            _ => {}
        }
        return Vec::new();
    }
    app.flash = None;
    if matches!(app.screen, Screen::Revert(_)) {
        return super::revert::revert_key(app, key);
    }
    if matches!(app.screen, Screen::Rollback(_)) {
        return super::rollback::rollback_key(app, key);
    }
    if matches!(app.screen, Screen::Pick(_)) {
        return super::picker::picker_key(app, key);
    }
    if matches!(app.screen, Screen::DriftList(_))
        && !matches!(key.code, KeyCode::Char(':' | '?' | 'q'))
    {
        return super::drift_list::drift_list_key(app, key);
    }
    if matches!(app.screen, Screen::Changes(_))
        && !matches!(key.code, KeyCode::Char(':' | '?' | 'q' | '/'))
    {
        return super::changes::changes_key(app, key);
    }
    if let Screen::Log(view) = &app.screen
        && (view.typing.is_some() || !matches!(key.code, KeyCode::Char(':' | '?' | 'q')))
    {
        return super::logs::log_key(app, key);
    }
    if key.code == KeyCode::Char('r') && !ctrl {
        return match revert_target(app) {
            Some(key) => app.open_revert(key),
            None => Vec::new(),
        };
    }
    match key.code {
        KeyCode::Char('q') => return vec![Command::Quit],
        KeyCode::Char('?') => app.help = true,
        KeyCode::Char('/') => {
            // A new search, as `/` starts one in less or vim: typing `/frontend` after an
            // earlier `/checkout` must not look for "checkoutfrontend".
            app.prompt = Some(Prompt::Filter(String::new()));
            if let Screen::Changes(view) = &mut app.screen {
                // The timeline's own filter: the table's stays.
                view.text.clear();
                return Vec::new();
            }
            app.table.filter.clear();
            app.table.mark_stale();
            return app.close_detail();
        }
        KeyCode::Char(':') => app.prompt = Some(Prompt::Command(String::new())),
        KeyCode::Esc if matches!(app.screen, Screen::Detail { .. }) => return app.close_detail(),
        KeyCode::Char('a')
            if !app.readonly
                && matches!(
                    app.screen,
                    Screen::Table | Screen::Diff(_) | Screen::Detail { .. }
                ) =>
        {
            let from_diff = matches!(app.screen, Screen::Diff(_));
            if let Some(object) = revert_target(app) {
                // From the detail view, its watchers stop when the accept view opens (a row
                // with nothing to accept only gets a message and the detail stays).
                let mut commands = Vec::new();
                if matches!(app.screen, Screen::Detail { .. })
                    && matches!(app.drift_of_object(&object), super::DriftSummary::Fields(_))
                {
                    commands = app.close_detail();
                }
                commands.extend(app.open_accept(object, from_diff));
                return commands;
            }
        }
        _ => match &mut app.screen {
            Screen::Table => return table_key(app, key),
            Screen::Diff(_) => return super::diff::diff_key(app, key),
            Screen::Accept(_) => return super::accept::accept_key(app, key),
            Screen::Problems { scroll } => match key.code {
                KeyCode::Esc => app.go_back(),
                KeyCode::Char('j') | KeyCode::Down => *scroll = scroll.saturating_add(1),
                KeyCode::Char('k') | KeyCode::Up => *scroll = scroll.saturating_sub(1),
                KeyCode::Char('g') | KeyCode::Home => *scroll = 0,
                _ => {}
            },
            Screen::Revert(_)
            | Screen::Rollback(_)
            | Screen::Pick(_)
            | Screen::DriftList(_)
            | Screen::Changes(_)
            | Screen::Log(_) => {}
            Screen::Detail { .. } => return detail_key(app, key),
        },
    }
    Vec::new()
}

/// The object `a` accepts and `r` reverts: the selected row's Deployment, or the object the
/// diff or detail view shows.
fn revert_target(app: &mut App) -> Option<crate::manifest::ObjectKey> {
    match &app.screen {
        Screen::Table => {
            app.table.refresh(&app.cache, app.table_height());
            app.table.selected_key().cloned()
        }
        Screen::Detail { key, .. } => Some(key.clone()),
        Screen::Diff(view) => Some(view.key.clone()),
        Screen::Problems { .. }
        | Screen::Revert(_)
        | Screen::Rollback(_)
        | Screen::Accept(_)
        | Screen::Pick(_)
        | Screen::DriftList(_)
        | Screen::Changes(_)
        | Screen::Log(_) => None,
    }
}

/// The detail view: `j`/`k` select a pod (the view keeps it in sight), paging scrolls, `l` opens
/// the selected pod's log.
fn detail_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    if key.code == KeyCode::Char('l') {
        return app.open_log();
    }
    if key.code == KeyCode::Char('u')
        && let Screen::Detail { key: shown, .. } = &app.screen
    {
        let object = shown.clone();
        return app.open_rollback(object);
    }
    let Screen::Detail { key: shown, .. } = &app.screen else {
        return Vec::new();
    };
    let names: Vec<crate::manifest::SharedStr> = super::detail::detail(&app.cache, shown)
        .map(|d| d.pods.iter().map(|p| p.key.name.clone()).collect())
        .unwrap_or_default();
    let pods = names.len();
    let cursor = &mut app.pod_cursor;
    let at = cursor.position(names.iter().map(|n| n.as_ref()));
    let from = cursor.shown.get();
    let Screen::Detail { scroll, .. } = &mut app.screen else {
        return Vec::new();
    };
    match key.code {
        KeyCode::Char('j') | KeyCode::Down if pods > 0 => {
            cursor.select((at + 1).min(pods - 1), names.iter().map(|n| n.as_ref()));
            *scroll = from;
        }
        KeyCode::Char('k') | KeyCode::Up if pods > 0 => {
            cursor.select(at.saturating_sub(1), names.iter().map(|n| n.as_ref()));
            *scroll = from;
        }
        // Without pods there is nothing to select: the keys scroll.
        KeyCode::Char('j') | KeyCode::Down => *scroll = from.saturating_add(1),
        KeyCode::Char('k') | KeyCode::Up => *scroll = from.saturating_sub(1),
        KeyCode::Char('g') | KeyCode::Home => {
            *scroll = 0;
            cursor.pinned = false;
        }
        KeyCode::PageDown => {
            *scroll = from.saturating_add(10);
            cursor.pinned = false;
        }
        KeyCode::PageUp => {
            *scroll = from.saturating_sub(10);
            cursor.pinned = false;
        }
        _ => {}
    }
    Vec::new()
}

fn table_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let page = app.table_height() as isize;
    // Keys may arrive in a burst between frames: act on the rows as they are now.
    app.table.refresh(&app.cache, app.table_height());
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let t = &mut app.table;
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => t.move_by(1),
        KeyCode::Char('k') | KeyCode::Up => t.move_by(-1),
        KeyCode::Char('g') | KeyCode::Home => t.select_first(),
        KeyCode::Char('G') | KeyCode::End => t.select_last(),
        KeyCode::PageDown => t.move_by(page),
        KeyCode::Char('f') if ctrl => t.move_by(page),
        KeyCode::PageUp => t.move_by(-page),
        KeyCode::Char('b') if ctrl => t.move_by(-page),
        KeyCode::Char('N') => set_sort(app, SortBy::Name),
        KeyCode::Char('P') => set_sort(app, SortBy::Phase),
        KeyCode::Char('A') => set_sort(app, SortBy::Age),
        KeyCode::Esc if !t.filter.is_empty() => {
            t.filter.clear();
            t.mark_stale();
        }
        KeyCode::Enter => {
            if let Some(key) = t.selected_key().cloned() {
                return app.open_detail(key);
            }
        }
        KeyCode::Char('d') => {
            if let Some(key) = t.selected_key().cloned() {
                return app.open_diff(key);
            }
        }
        // The fleet's table takes `c` when several contexts are watched (`app::fleet`).
        KeyCode::Char('c') => {
            app.flash = Some(Flash {
                text: COMPARE_NEEDS.to_owned(),
                error: false,
            });
        }
        _ => {}
    }
    Vec::new()
}

fn set_sort(app: &mut App, sort: SortBy) {
    app.table.sort = sort;
    app.table.mark_stale();
}

fn prompt_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let Some(prompt) = &mut app.prompt else {
        return Vec::new();
    };
    let (Prompt::Filter(text) | Prompt::Command(text)) = prompt;
    match key.code {
        KeyCode::Char(c) => text.push(c),
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Esc => {
            if matches!(prompt, Prompt::Filter(_)) {
                if let Screen::Changes(view) = &mut app.screen {
                    view.text.clear();
                } else {
                    app.table.filter.clear();
                    app.table.mark_stale();
                }
            }
            app.prompt = None;
            return Vec::new();
        }
        KeyCode::Enter => {
            let prompt = app.prompt.take();
            if let Some(Prompt::Command(line)) = prompt {
                return run_command(app, &line);
            }
            return Vec::new();
        }
        _ => {}
    }
    // The filter applies as it is typed.
    if let Some(Prompt::Filter(text)) = &app.prompt {
        if let Screen::Changes(view) = &mut app.screen {
            view.text = text.clone();
            view.cursor = 0;
            view.scroll = 0;
        } else {
            app.table.filter = text.clone();
            app.table.mark_stale();
        }
    }
    Vec::new()
}

/// `:` commands.
fn run_command(app: &mut App, line: &str) -> Vec<Command> {
    let mut words = line.split_whitespace();
    let verb = words.next().unwrap_or("");
    let arg = words.next();
    // A command typed in a picker leaves it, for the view it was opened over (which the command
    // may then close, with its watchers).
    app.leave_picker();
    match (verb, arg) {
        ("q" | "q!" | "quit", _) => vec![Command::Quit],
        ("workloads" | "workload" | "wl" | "all", _) => app.show_table(None),
        ("dp", _) => app.show_table(Some(WorkloadKind::Deployment)),
        (word, _) if WorkloadKind::parse(word).is_some() => {
            app.show_table(WorkloadKind::parse(word))
        }
        ("drift" | "drifted", _) => app.open_drift_list(),
        ("changes" | "change" | "timeline", _) => app.open_changes(),
        ("problems" | "problem", _) => {
            let commands = app.close_detail();
            app.back.clear();
            app.screen = Screen::Problems { scroll: 0 };
            commands
        }
        ("ns" | "namespace", None) => app.open_namespace_picker(),
        ("ns" | "namespace", Some("all" | "-A")) => vec![Command::Switch {
            context: None,
            scope: NamespaceScope::All,
        }],
        ("ns" | "namespace", Some(ns)) if !is_namespace_name(ns) => {
            // The API server would answer 404 forever: say it now.
            app.flash = Some(Flash {
                text: format!(
                    "\"{ns}\" is not a namespace name: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63"
                ),
                error: true,
            });
            Vec::new()
        }
        ("ns" | "namespace", Some(ns)) => vec![Command::Switch {
            context: None,
            scope: NamespaceScope::One(ns.to_string()),
        }],
        ("ctx" | "context", None) => app.open_context_picker(),
        ("ctx" | "context", Some(change)) if change.starts_with(['+', '-']) => {
            let name = &change[1..];
            if !app.contexts.iter().any(|c| c == name) {
                app.flash = Some(Flash {
                    text: format!("no context \"{name}\" in the kubeconfig"),
                    error: true,
                });
                return Vec::new();
            }
            let change = if change.starts_with('+') {
                super::message::ContextChange::Add(name.to_owned())
            } else {
                super::message::ContextChange::Remove(name.to_owned())
            };
            vec![Command::Contexts(change)]
        }
        ("ctx" | "context", Some(ctx)) => {
            if app.contexts.iter().any(|c| c == ctx) {
                vec![Command::Switch {
                    context: Some(ctx.to_string()),
                    scope: app.scope.clone(),
                }]
            } else {
                app.flash = Some(Flash {
                    text: format!("no context \"{ctx}\" in the kubeconfig"),
                    error: true,
                });
                Vec::new()
            }
        }
        ("", _) => Vec::new(),
        (other, _) => {
            app.flash = Some(Flash {
                text: format!("unknown command \":{other}\" (? lists the keys)"),
                error: true,
            });
            Vec::new()
        }
    }
}

/// An RFC 1123 label, as namespace names must be.
fn is_namespace_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::app::test_keys::press;
    use crate::app::{Message, update};
    use jiff::Timestamp;

    fn app() -> App {
        App::new(
            "kind-dev",
            vec!["kind-dev".into(), "prod".into()],
            NamespaceScope::All,
            Timestamp::UNIX_EPOCH,
        )
    }

    #[test]
    fn q_and_ctrl_c_quit() {
        assert_eq!(press(&mut app(), "q"), [Command::Quit]);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        let mut a = app();
        press(&mut a, "/we");
        assert_eq!(update(&mut a, Message::Key(ctrl_c)), [Command::Quit]);
    }

    #[test]
    fn c_with_one_context_says_compare_needs_another() {
        let mut a = app();
        assert!(press(&mut a, "c").is_empty());
        assert_eq!(a.flash.map(|f| f.text).as_deref(), Some(COMPARE_NEEDS));
    }

    #[test]
    fn q_typed_in_the_filter_is_text_not_quit() {
        let mut a = app();
        assert!(press(&mut a, "/q").is_empty());
        assert_eq!(a.table.filter, "q");
    }

    #[test]
    fn esc_in_filter_clears_it_enter_keeps_it() {
        let mut a = app();
        press(&mut a, "/web\n");
        assert_eq!((a.table.filter.as_str(), a.prompt.is_none()), ("web", true));
        press(&mut a, "\x1b");
        assert_eq!(a.table.filter, "");
        press(&mut a, "/cart\x1b");
        assert_eq!(a.table.filter, "");
    }

    #[test]
    fn a_namespace_name_kubernetes_refuses_is_said_at_once_not_switched_to() {
        let mut a = app();
        for bad in ["Shop", "shop_1", "-shop", "x".repeat(64).as_str()] {
            assert!(press(&mut a, &format!(":ns {bad}\n")).is_empty(), "{bad}");
            let flash = a.flash.take().map(|f| (f.text, f.error));
            assert!(
                flash.as_ref().is_some_and(|(text, error)| *error
                    && text.contains(&format!("\"{bad}\" is not a namespace name"))),
                "{bad}: {flash:?}"
            );
        }
    }

    #[test]
    fn ns_and_ctx_commands_ask_for_a_switch() {
        let mut a = app();
        assert_eq!(
            press(&mut a, ":ns shop\n"),
            [Command::Switch {
                context: None,
                scope: NamespaceScope::One("shop".into())
            }]
        );
        assert_eq!(press(&mut a, ":ns\n"), [Command::ListNamespaces]);
        press(&mut a, "\x1b");
        assert_eq!(
            press(&mut a, ":ns all\n"),
            [Command::Switch {
                context: None,
                scope: NamespaceScope::All
            }]
        );
        assert_eq!(
            press(&mut a, ":ctx prod\n"),
            [Command::Switch {
                context: Some("prod".into()),
                scope: NamespaceScope::All
            }]
        );
        assert!(press(&mut a, ":ctx nope\n").is_empty());
        assert!(a.flash.as_ref().unwrap().text.contains("\"nope\""));
        assert!(press(&mut a, ":bogus\n").is_empty());
        assert!(a.flash.as_ref().unwrap().error);
        assert_eq!(press(&mut a, ":q\n"), [Command::Quit]);
    }

    #[test]
    fn help_opens_and_closes_and_swallows_other_keys() {
        let mut a = app();
        press(&mut a, "?");
        assert!(a.help);
        assert!(press(&mut a, "j").is_empty());
        press(&mut a, "\x1b");
        assert!(!a.help);
    }

    #[test]
    fn ctrl_z_suspends() {
        let mut a = app();
        let key = KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL);
        assert_eq!(update(&mut a, Message::Key(key)), [Command::Suspend]);
    }

    #[test]
    fn sort_keys_change_the_order() {
        let mut a = app();
        press(&mut a, "P");
        assert_eq!(a.table.sort, SortBy::Phase);
        press(&mut a, "A");
        assert_eq!(a.table.sort, SortBy::Age);
        press(&mut a, "N");
        assert_eq!(a.table.sort, SortBy::Name);
    }

    #[test]
    fn enter_watches_the_namespace_and_esc_stops_it_dropping_late_rows() {
        use crate::cluster::rows::PodRow;
        use crate::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
        use crate::manifest::ObjectKey;
        let mut a = app();
        let row = crate::cluster::rows::WorkloadRow {
            key: crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
            generation: 1,
            observed_generation: 1,
            desired: 1,
            replicas: 1,
            updated: 1,
            ready: 1,
            available: 1,
            paused: false,
            owners: Vec::new(),
            facts: Default::default(),
            conditions: vec![],
            revision: Some(1),
            images: vec![],
            created: None,
            last_change: None,
        };
        let msg = |epoch, event| Message::Cluster(ClusterMessage { epoch, event });
        update(
            &mut a,
            msg(
                0,
                ClusterEvent::Workloads(
                    crate::cluster::rows::WorkloadKind::Deployment,
                    vec![WatchUpdate::Apply(row)],
                ),
            ),
        );
        let cmds = press(&mut a, "\n");
        let [Command::WatchDetail { namespace, epoch }] = cmds.as_slice() else {
            panic!("{cmds:?}");
        };
        assert_eq!(namespace, "shop");
        let pod = PodRow {
            key: ObjectKey::new("", "Pod", "shop", "web-1"),
            owner_kind: None,
            owner: None,
            revision_hash: None,
            phase: "Running".into(),
            ready_containers: 1,
            containers: 1,
            reason: None,
            restarts: 0,
            created: None,
            deleting: false,
            node: None,
            why: None,
            last_exit: None,
        };
        update(
            &mut a,
            msg(
                *epoch,
                ClusterEvent::Pods(vec![WatchUpdate::Apply(pod.clone())]),
            ),
        );
        assert_eq!(a.cache.pods.len(), 1);
        assert_eq!(press(&mut a, "\x1b"), [Command::StopDetail]);
        assert_eq!(a.screen, Screen::Table);
        assert!(a.cache.pods.is_empty());
        // A batch still in flight from the stopped watcher is dropped.
        update(
            &mut a,
            msg(*epoch, ClusterEvent::Pods(vec![WatchUpdate::Apply(pod)])),
        );
        assert!(a.cache.pods.is_empty());
    }
}
