//! A program in a pseudo-terminal, as an operator runs kdrift: started at a size, typed at, and
//! what it writes read from a channel (a thread reads the terminal so a test can wait with a
//! timeout).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, channel};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

pub struct Pty {
    pub child: Box<dyn Child + Send + Sync>,
    /// What the program writes, in the pieces read.
    pub output: Receiver<Vec<u8>>,
    writer: Box<dyn Write + Send>,
    // Kept open until the test ends: the program's terminal hangs up without it.
    _master: Box<dyn MasterPty + Send>,
}

impl Pty {
    /// Starts `cmd` on a new `rows`×`cols` terminal.
    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Pty {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let writer = pty.master.take_writer().unwrap();
        let (tx, output) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Pty {
            child,
            output,
            writer,
            _master: pty.master,
        }
    }

    /// Types `bytes` on the terminal.
    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }
}
