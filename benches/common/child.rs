//! What the benches' cluster processes share: a runtime of their own, the `URL …` line the parent
//! waits for, and their commands, read one per line from stdin on a thread of their own, so that
//! the cluster keeps serving while none comes.

#![allow(dead_code)]

use std::io::{BufRead, Write};

/// The cluster process's runtime: two workers, as kdrift's.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Says `URL <url>` to the parent, then hands over the lines of stdin as they come (the
/// channel closes with stdin).
pub fn serving(url: &str) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    println!("URL {url}");
    std::io::stdout().flush().unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
