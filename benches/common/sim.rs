//! An empty demo cluster in the bench's own process (no seed, no scenario, fast controllers),
//! with a kubeconfig for it and a home folder for the programs the bench runs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kdrift::sim::server::{Scenario, SimConfig, SimServer, Timings};

pub struct InProcess {
    pub server: SimServer,
    /// Holds `kubeconfig` and `home`; the bench's files may go in it too.
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    pub home: PathBuf,
    // Declared last: dropped after the server, whose tasks run on it.
    pub runtime: tokio::runtime::Runtime,
}

impl InProcess {
    pub fn start() -> InProcess {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime
            .block_on(SimServer::start(SimConfig {
                port: 0,
                scenario: Scenario::None,
                seed: false,
                timings: Timings::fast(),
                ..SimConfig::default()
            }))
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, server.kubeconfig_yaml()).unwrap();
        InProcess {
            server,
            dir,
            kubeconfig,
            home,
            runtime,
        }
    }

    /// Stops the server (its watches end) before the runtime goes.
    pub fn shutdown(self) {
        let InProcess {
            server, runtime, ..
        } = self;
        runtime.block_on(server.shutdown());
    }

    /// `KUBECONFIG` and `HOME` for a program run against the cluster.
    pub fn env(&self) -> [(&'static str, &Path); 2] {
        [
            ("KUBECONFIG", self.kubeconfig.as_path()),
            ("HOME", self.home.as_path()),
        ]
    }
}
