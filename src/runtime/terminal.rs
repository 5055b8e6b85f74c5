//! The terminal: enter (raw mode, alternate screen, a panic hook that restores), leave (and show
//! the cursor again), suspend on ctrl-z and come back on resume.
use std::io::{Write, stdout};

use crossterm::cursor::Show;
use crossterm::execute;
use crossterm::terminal::{Clear, ClearType, EnterAlternateScreen, enable_raw_mode};
use ratatui::DefaultTerminal;

/// Enter the UI. The panic hook restores the terminal, shows the cursor, then chains to the
/// previous hook (which prints the panic), so a panic never leaves the shell unusable.
pub fn enter() -> std::io::Result<DefaultTerminal> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(stdout(), Show);
        previous(info);
    }));
    // ratatui's hook wraps ours: restore, then show the cursor, then the default report.
    ratatui::try_init()
}

/// Leave the UI: raw mode off, main screen back, cursor shown.
pub fn leave() {
    let _ = ratatui::try_restore();
    let mut out = stdout();
    let _ = execute!(out, Show);
    let _ = out.flush();
}

/// ctrl-z: give the shell its terminal back and stop; on `fg`, take it again and redraw all.
pub fn suspend(terminal: &mut DefaultTerminal) -> std::io::Result<()> {
    leave();
    // SAFETY: raising a signal on our own process has no memory-safety preconditions.
    unsafe {
        libc::raise(libc::SIGTSTP);
    }
    // Execution resumes here after SIGCONT.
    enable_raw_mode()?;
    execute!(stdout(), EnterAlternateScreen, Clear(ClearType::All))?;
    // Blank both of ratatui's buffers so the next frame redraws everything. Not
    // `Terminal::clear`: it asks the terminal for the cursor position and gives up (kdrift
    // would exit) when no answer comes within 2 s.
    terminal.swap_buffers();
    Ok(())
}
