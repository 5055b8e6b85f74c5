//! The `:ns` and `:ctx` pickers: a list to choose a namespace (listed by the runtime, off the
//! loop) or a kubeconfig context (known already) from, filtered with `/`, and the switch asked
//! on `enter`.
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Command, Prompt, Screen};
use crate::cluster::client::NamespaceScope;

/// What is being picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    Namespace,
    Context,
}

/// One line of the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// "all namespaces" (`:ns all`).
    AllNamespaces,
    Name(String),
}

impl Choice {
    pub fn label(&self) -> &str {
        match self {
            Choice::AllNamespaces => "all namespaces",
            Choice::Name(n) => n,
        }
    }
}

/// Where the list stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choices {
    /// Asked of the API server; not answered yet.
    Listing,
    /// The server would not list them (the reason, as the runtime words it).
    Failed(String),
    Ready(Vec<Choice>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub kind: PickKind,
    pub choices: Choices,
    /// The one in use now (marked).
    pub current: Choice,
    /// Lines shown contain this (case-insensitive).
    pub filter: String,
    /// `/` was typed: keys go to the filter until enter or esc.
    pub typing: bool,
    /// Index into [`Picker::visible`].
    pub selected: usize,
    /// First visible line shown.
    pub offset: usize,
    /// In a view over several contexts: the contexts watched, each with its state in a word
    /// (`connected`, `unreachable`, …) and whether that state is bad; kept up to date by the
    /// fleet while the picker shows ([`super::fleet::show_states`]).
    pub watched: Vec<(String, &'static str, bool)>,
}

impl Picker {
    /// The namespace picker, waiting for the runtime's list.
    pub fn namespaces(scope: &NamespaceScope) -> Picker {
        let current = match scope {
            NamespaceScope::All => Choice::AllNamespaces,
            NamespaceScope::One(ns) => Choice::Name(ns.clone()),
        };
        Picker::new(PickKind::Namespace, Choices::Listing, current)
    }

    /// The context picker: the kubeconfig's contexts are known, nothing to wait for.
    pub fn contexts(contexts: &[String], current: &str) -> Picker {
        let choices = contexts.iter().cloned().map(Choice::Name).collect();
        let mut picker = Picker::new(
            PickKind::Context,
            Choices::Ready(choices),
            Choice::Name(current.to_string()),
        );
        picker.select_current();
        picker
    }

    fn new(kind: PickKind, choices: Choices, current: Choice) -> Picker {
        Picker {
            kind,
            choices,
            current,
            filter: String::new(),
            watched: Vec::new(),
            typing: false,
            selected: 0,
            offset: 0,
        }
    }

    /// The runtime's answer to `Command::ListNamespaces`.
    pub fn namespaces_listed(&mut self, answer: Result<Vec<String>, String>) {
        self.choices = match answer {
            Ok(names) => Choices::Ready(
                std::iter::once(Choice::AllNamespaces)
                    .chain(names.into_iter().map(Choice::Name))
                    .collect(),
            ),
            Err(reason) => Choices::Failed(reason),
        };
        self.select_current();
    }

    /// The choices that pass the filter, in order.
    pub fn visible(&self) -> Vec<&Choice> {
        let Choices::Ready(all) = &self.choices else {
            return Vec::new();
        };
        let needle = self.filter.to_lowercase();
        all.iter()
            .filter(|c| needle.is_empty() || c.label().to_lowercase().contains(&needle))
            .collect()
    }

    pub fn selected_choice(&self) -> Option<&Choice> {
        self.visible().get(self.selected).copied()
    }

    fn select_current(&mut self) {
        self.selected = self
            .visible()
            .iter()
            .position(|c| **c == self.current)
            .unwrap_or(0);
    }

    fn move_by(&mut self, delta: isize) {
        let last = self.visible().len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// Keep the selection within the `height` lines shown.
    pub fn scroll_into_view(&mut self, height: usize) {
        let height = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
    }

    fn filter_changed(&mut self) {
        self.selected = 0;
        self.offset = 0;
    }
}

impl App {
    /// `:ns` alone: open the namespace picker and ask the runtime for the list.
    pub fn open_namespace_picker(&mut self) -> Vec<Command> {
        let picker = Picker::namespaces(&self.scope);
        let mut commands = self.open_picker(picker);
        commands.push(Command::ListNamespaces);
        commands
    }

    /// `:ctx` alone: open the context picker.
    pub fn open_context_picker(&mut self) -> Vec<Command> {
        let mut picker = Picker::contexts(&self.contexts, &self.context);
        picker.scroll_into_view(self.picker_height());
        self.open_picker(picker)
    }

    /// Shows `picker` over the current view. A detail (its watchers kept), a diff or
    /// `:problems` is remembered and comes back when the picker closes without a switch; an
    /// accept or revert view is closed first, as a `:` command closes it.
    fn open_picker(&mut self, picker: Picker) -> Vec<Command> {
        let picker = Screen::Pick(Box::new(picker));
        match &self.screen {
            Screen::Detail { .. } | Screen::Diff(_) | Screen::Problems { .. } => {
                self.open_over(picker);
                Vec::new()
            }
            // Another picker in its place, going back where it would.
            Screen::Pick(_) => {
                self.screen = picker;
                Vec::new()
            }
            _ => {
                let commands = self.close_detail();
                self.back.clear();
                self.screen = picker;
                commands
            }
        }
    }

    /// Closes the picker: back to the view it was opened over, else the table.
    pub fn leave_picker(&mut self) {
        if let Screen::Pick(_) = &self.screen {
            self.go_back();
            self.dirty = true;
        }
    }

    /// The answer to `Command::ListNamespaces`; dropped if the picker was closed meanwhile.
    pub fn namespaces_listed(&mut self, answer: Result<Vec<String>, String>) {
        let height = self.picker_height();
        if let Screen::Pick(picker) = &mut self.screen
            && picker.kind == PickKind::Namespace
            && picker.choices == Choices::Listing
        {
            picker.namespaces_listed(answer);
            picker.scroll_into_view(height);
            self.dirty = true;
        }
    }

    /// Lines of choices that fit on screen (the table's body, less the picker's own header).
    pub fn picker_height(&self) -> usize {
        self.table_height().saturating_sub(1).max(1)
    }
}

/// Keys while a picker shows.
pub fn picker_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let page = app.picker_height();
    let Screen::Pick(picker) = &mut app.screen else {
        return Vec::new();
    };
    if picker.typing {
        match key.code {
            KeyCode::Char(c) => {
                picker.filter.push(c);
                picker.filter_changed();
            }
            KeyCode::Backspace => {
                picker.filter.pop();
                picker.filter_changed();
            }
            KeyCode::Enter => picker.typing = false,
            KeyCode::Esc => {
                picker.typing = false;
                picker.filter.clear();
                picker.filter_changed();
            }
            _ => {}
        }
        return Vec::new();
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let step = isize::try_from(page).unwrap_or(isize::MAX);
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => picker.move_by(1),
        KeyCode::Char('k') | KeyCode::Up => picker.move_by(-1),
        KeyCode::Char('g') | KeyCode::Home => picker.selected = 0,
        KeyCode::Char('G') | KeyCode::End => picker.move_by(isize::MAX),
        KeyCode::PageDown => picker.move_by(step),
        KeyCode::Char('f') if ctrl => picker.move_by(step),
        KeyCode::PageUp => picker.move_by(-step),
        KeyCode::Char('b') if ctrl => picker.move_by(-step),
        KeyCode::Char('/') => {
            picker.typing = true;
        }
        KeyCode::Char(':') => app.prompt = Some(Prompt::Command(String::new())),
        KeyCode::Char('?') => app.help = true,
        KeyCode::Char('q') => return vec![Command::Quit],
        KeyCode::Esc if !picker.filter.is_empty() => {
            picker.filter.clear();
            picker.filter_changed();
        }
        KeyCode::Esc => app.leave_picker(),
        KeyCode::Enter => return pick(app),
        _ => {}
    }
    if let Screen::Pick(picker) = &mut app.screen {
        picker.scroll_into_view(page);
    }
    Vec::new()
}

/// `enter`: switch to the selected choice (nothing to do if it is the one in use).
fn pick(app: &mut App) -> Vec<Command> {
    let Screen::Pick(picker) = &app.screen else {
        return Vec::new();
    };
    let Some(choice) = picker.selected_choice().cloned() else {
        return Vec::new();
    };
    let kind = picker.kind;
    let unchanged = choice == picker.current;
    app.leave_picker();
    if unchanged {
        return Vec::new();
    }
    // Another namespace or context: the view opened over belongs to the old one.
    let mut commands = app.close_detail();
    app.screen = Screen::Table;
    app.back.clear();
    let switch = match (kind, choice) {
        (PickKind::Namespace, Choice::AllNamespaces) => Command::Switch {
            context: None,
            scope: NamespaceScope::All,
        },
        (PickKind::Namespace, Choice::Name(ns)) => Command::Switch {
            context: None,
            scope: NamespaceScope::One(ns),
        },
        (PickKind::Context, Choice::Name(ctx)) => Command::Switch {
            context: Some(ctx),
            scope: app.scope.clone(),
        },
        (PickKind::Context, Choice::AllNamespaces) => return commands,
    };
    commands.push(switch);
    commands
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::app::test_keys::press;
    use crate::app::{Message, update};
    use jiff::Timestamp;

    fn app(scope: NamespaceScope) -> App {
        App::new(
            "kind-dev",
            vec!["kind-dev".into(), "prod".into(), "staging".into()],
            scope,
            Timestamp::UNIX_EPOCH,
        )
    }

    fn picker(app: &App) -> &Picker {
        match &app.screen {
            Screen::Pick(p) => p,
            other => panic!("no picker: {other:?}"),
        }
    }

    fn labels(app: &App) -> Vec<String> {
        picker(app)
            .visible()
            .iter()
            .map(|c| c.label().to_string())
            .collect()
    }

    fn selected(app: &App) -> String {
        picker(app).selected_choice().unwrap().label().to_string()
    }

    fn listed(app: &mut App, names: &[&str]) {
        let names = names.iter().map(|n| n.to_string()).collect();
        update(app, Message::Namespaces(Ok(names)));
    }

    #[test]
    fn ns_opens_the_picker_listing_then_shows_every_namespace_current_selected() {
        let mut a = app(NamespaceScope::One("shop".into()));
        assert_eq!(press(&mut a, ":ns\n"), [Command::ListNamespaces]);
        assert_eq!(picker(&a).choices, Choices::Listing);
        listed(&mut a, &["default", "payments", "shop"]);
        assert_eq!(
            labels(&a),
            ["all namespaces", "default", "payments", "shop"]
        );
        assert_eq!(selected(&a), "shop");
        assert_eq!(picker(&a).current, Choice::Name("shop".into()));
    }

    #[test]
    fn moving_then_enter_switches_to_that_namespace() {
        let mut a = app(NamespaceScope::All);
        press(&mut a, ":ns\n");
        listed(&mut a, &["default", "payments", "shop"]);
        assert_eq!(selected(&a), "all namespaces");
        press(&mut a, "jj");
        assert_eq!(selected(&a), "payments");
        press(&mut a, "k");
        assert_eq!(selected(&a), "default");
        press(&mut a, "G");
        assert_eq!(selected(&a), "shop");
        press(&mut a, "j");
        assert_eq!(selected(&a), "shop", "stops at the last");
        press(&mut a, "g");
        assert_eq!(selected(&a), "all namespaces");
        let page = KeyEvent::from(KeyCode::PageDown);
        update(&mut a, Message::Key(page));
        assert_eq!(selected(&a), "shop");
        press(&mut a, "k");
        assert_eq!(
            press(&mut a, "\n"),
            [Command::Switch {
                context: None,
                scope: NamespaceScope::One("payments".into())
            }]
        );
        assert_eq!(a.screen, Screen::Table);
    }

    #[test]
    fn all_namespaces_is_picked_like_ns_all() {
        let mut a = app(NamespaceScope::One("shop".into()));
        press(&mut a, ":ns\n");
        listed(&mut a, &["shop"]);
        assert_eq!(
            press(&mut a, "g\n"),
            [Command::Switch {
                context: None,
                scope: NamespaceScope::All
            }]
        );
    }

    #[test]
    fn picking_the_namespace_in_use_closes_without_a_relist() {
        let mut a = app(NamespaceScope::One("shop".into()));
        press(&mut a, ":ns\n");
        listed(&mut a, &["default", "shop"]);
        assert!(press(&mut a, "\n").is_empty());
        assert_eq!(a.screen, Screen::Table);
    }

    #[test]
    fn slash_filters_as_typed_enter_keeps_it_esc_clears_it() {
        let mut a = app(NamespaceScope::All);
        press(&mut a, ":ns\n");
        listed(&mut a, &["default", "payments", "payroll", "shop"]);
        // j and k are text while filtering, not moves.
        press(&mut a, "/PAYR");
        assert_eq!(labels(&a), ["payroll"]);
        press(&mut a, "\x08");
        assert_eq!(labels(&a), ["payments", "payroll"]);
        assert_eq!(selected(&a), "payments");
        press(&mut a, "\nj");
        assert_eq!(selected(&a), "payroll");
        press(&mut a, "/zzz");
        assert!(labels(&a).is_empty());
        assert!(press(&mut a, "\n\n").is_empty(), "nothing to pick");
        press(&mut a, "\x1b");
        assert_eq!(labels(&a).len(), 5, "esc cleared the filter, picker open");
        press(&mut a, "/sh\n");
        press(&mut a, "\x1b");
        assert_eq!(labels(&a).len(), 5, "esc clears a kept filter first");
        press(&mut a, "\x1b");
        assert_eq!(a.screen, Screen::Table);
    }

    #[test]
    fn while_filtering_j_k_and_q_are_text() {
        let mut a = app(NamespaceScope::All);
        press(&mut a, ":ns\n");
        listed(&mut a, &["jq-tools", "kube-system"]);
        assert!(press(&mut a, "/jq").is_empty(), "q did not quit");
        assert_eq!(picker(&a).filter, "jq");
        assert_eq!(labels(&a), ["jq-tools"]);
    }

    #[test]
    fn esc_cancels_and_a_late_answer_is_dropped() {
        let mut a = app(NamespaceScope::All);
        press(&mut a, ":ns\n");
        assert!(press(&mut a, "\x1b").is_empty());
        assert_eq!(a.screen, Screen::Table);
        listed(&mut a, &["default", "shop"]);
        assert_eq!(a.screen, Screen::Table);
        assert_eq!(a.flash, None);
    }

    #[test]
    fn a_refused_list_says_so_and_ns_name_still_works_from_the_picker() {
        let mut a = app(NamespaceScope::All);
        press(&mut a, ":ns\n");
        let reason = "the server refuses (403 Forbidden): namespaces is forbidden".to_string();
        update(&mut a, Message::Namespaces(Err(reason.clone())));
        assert_eq!(picker(&a).choices, Choices::Failed(reason));
        assert!(press(&mut a, "j\n").is_empty());
        assert_eq!(
            press(&mut a, ":ns shop\n"),
            [Command::Switch {
                context: None,
                scope: NamespaceScope::One("shop".into())
            }]
        );
        assert_eq!(a.screen, Screen::Table);
    }

    #[test]
    fn ctx_lists_the_kubeconfig_contexts_without_asking_the_runtime() {
        let mut a = app(NamespaceScope::One("shop".into()));
        a.context = "prod".into();
        assert!(press(&mut a, ":ctx\n").is_empty());
        assert_eq!(labels(&a), ["kind-dev", "prod", "staging"]);
        assert_eq!(selected(&a), "prod");
        assert_eq!(
            press(&mut a, "j\n"),
            [Command::Switch {
                context: Some("staging".into()),
                scope: NamespaceScope::One("shop".into())
            }]
        );
        // A namespace list answering late does not touch a context picker.
        press(&mut a, ":ctx\n");
        listed(&mut a, &["default"]);
        assert_eq!(labels(&a), ["kind-dev", "prod", "staging"]);
    }

    #[test]
    fn the_selection_stays_on_screen_in_a_long_list() {
        let mut a = app(NamespaceScope::All);
        a.height = 12;
        press(&mut a, ":ns\n");
        let names: Vec<String> = (0..500).map(|i| format!("ns-{i:03}")).collect();
        update(&mut a, Message::Namespaces(Ok(names)));
        let height = a.picker_height();
        press(&mut a, "G");
        let p = picker(&a);
        assert_eq!(selected(&a), "ns-499");
        assert!(p.offset <= p.selected && p.selected < p.offset + height);
        press(&mut a, "g");
        assert_eq!(picker(&a).offset, 0);
    }

    #[test]
    fn a_picker_opened_over_a_detail_returns_to_it_unless_the_scope_changes() {
        let mut a = app(NamespaceScope::One("shop".into()));
        let web = crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web");
        a.open_detail(web.clone());
        a.screen = Screen::Detail {
            key: web.clone(),
            scroll: 3,
        };
        let detail = a.screen.clone();

        // esc: the same detail, scrolled as it was, its watchers never stopped.
        let opened = press(&mut a, ":ns\n");
        assert_eq!(opened, vec![Command::ListNamespaces]);
        assert!(press(&mut a, "\x1b").is_empty());
        assert_eq!(a.screen, detail);

        // The namespace in use picked: nothing changes, back to the detail.
        press(&mut a, ":ns\n");
        listed(&mut a, &["default", "shop"]);
        assert!(press(&mut a, "\n").is_empty());
        assert_eq!(a.screen, detail);

        // A `:` command typed in the picker runs from the detail: `:deploy` closes it.
        press(&mut a, ":ctx\n");
        assert_eq!(press(&mut a, ":deploy\n"), vec![Command::StopDetail]);
        assert_eq!(a.screen, Screen::Table);

        // Another namespace: the detail's watchers stop, then the switch.
        a.open_detail(web);
        press(&mut a, ":ns\n");
        listed(&mut a, &["default", "shop"]);
        let switched = press(&mut a, "gj\n");
        assert_eq!(switched.first(), Some(&Command::StopDetail), "{switched:?}");
        assert!(matches!(switched.get(1), Some(Command::Switch { .. })));
        assert_eq!(a.screen, Screen::Table);
    }
}
