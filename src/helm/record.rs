//! One Helm release record decoded: the `data.release` of a Secret (type `helm.sh/release.v1`)
//! or of a ConfigMap (Helm's ConfigMap driver), as helm's `pkg/storage/driver` writes it: base64
//! of (gzip of, when the bytes start `1f 8b 08`) the release's JSON. A Secret's data is base64
//! once more on the wire; the kube client has undone that before the bytes get here.
use std::io::Read as _;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

/// The most base64 text read of one record. A Secret holds at most 1 MiB; the ConfigMap driver
/// the same. Past this the record is refused before any decoding.
pub const MAX_ENCODED: usize = 4 << 20;

/// The most JSON one record may decompress to (a chart's templates and files are in it). A gzip
/// stream that expands past this is refused rather than held.
pub const MAX_DECODED: u64 = 64 << 20;

/// The first bytes of a gzip stream (magic and the deflate method), as helm's `decodeRelease`
/// checks them.
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Why a release record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("its data.release is {size} bytes, over the {max} kdrift reads")]
    TooLarge { size: usize, max: usize },
    #[error("its data.release is not base64: {0}")]
    Base64(#[source] base64::DecodeError),
    #[error("its gzip stream is broken: {0}")]
    Gzip(#[source] std::io::Error),
    #[error("it decompresses to more than {} MiB", MAX_DECODED >> 20)]
    Expands,
    #[error("its JSON is not a Helm release: {0}")]
    Json(#[source] serde_json::Error),
    #[error("it has no data.release")]
    NoData,
}

/// What stores a release's records: helm's default Secret driver, or its ConfigMap driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Storage {
    Secret,
    ConfigMap,
}

impl Storage {
    /// `secret`, `configmap`: as kubectl names the kinds.
    pub fn resource(self) -> &'static str {
        match self {
            Storage::Secret => "secret",
            Storage::ConfigMap => "configmap",
        }
    }
}

/// A release's status, in helm's words (`pkg/release/status.go`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Deployed,
    Superseded,
    Failed,
    PendingInstall,
    PendingUpgrade,
    PendingRollback,
    Uninstalling,
    Uninstalled,
    Unknown(String),
}

impl Status {
    pub fn parse(text: &str) -> Status {
        match text {
            "deployed" => Status::Deployed,
            "superseded" => Status::Superseded,
            "failed" => Status::Failed,
            "pending-install" => Status::PendingInstall,
            "pending-upgrade" => Status::PendingUpgrade,
            "pending-rollback" => Status::PendingRollback,
            "uninstalling" => Status::Uninstalling,
            "uninstalled" => Status::Uninstalled,
            other => Status::Unknown(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Status::Deployed => "deployed",
            Status::Superseded => "superseded",
            Status::Failed => "failed",
            Status::PendingInstall => "pending-install",
            Status::PendingUpgrade => "pending-upgrade",
            Status::PendingRollback => "pending-rollback",
            Status::Uninstalling => "uninstalling",
            Status::Uninstalled => "uninstalled",
            Status::Unknown(other) => other,
        }
    }

    /// An install, upgrade or rollback still in progress (or one whose helm was killed).
    pub fn is_pending(&self) -> bool {
        matches!(
            self,
            Status::PendingInstall | Status::PendingUpgrade | Status::PendingRollback
        )
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The chart a release was made from, as its `Chart.yaml` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChartMeta {
    pub name: String,
    pub version: String,
    pub app_version: Option<String>,
}

/// A hook of the release: a template helm runs at an event (install, upgrade, test…) rather
/// than keeping it as part of the release; never desired state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub name: String,
    pub kind: String,
    /// `CHART/templates/x.yaml`.
    pub path: String,
    pub events: Vec<String>,
}

/// One revision of a release, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub name: String,
    pub namespace: String,
    /// Helm's revision number (`version` in the record).
    pub revision: u64,
    pub status: Status,
    pub description: String,
    pub last_deployed: Option<String>,
    pub chart: ChartMeta,
    /// The values the user gave (`helm get values`): `{}` when none.
    pub config: Value,
    /// The rendered templates helm applied (`helm get manifest`), hooks left out.
    pub manifest: String,
    pub hooks: Vec<Hook>,
    /// `ssa` when helm 4 applied it server-side; absent (helm 3) for a three-way merge patch.
    pub apply_method: Option<String>,
    /// A revision newer than this one that is not deployed (failed, pending), from the labels
    /// of the release's records: `(revision, status)`.
    pub newer: Option<(u64, Status)>,
    /// That newer revision when helm is at work on it (`pending-upgrade`, `pending-rollback`):
    /// what helm is applying now, beside the deployed revision that is the desired state.
    pub pending: Option<std::sync::Arc<Release>>,
}

impl Release {
    /// True when helm applied the release server-side (helm 4's default).
    pub fn server_side(&self) -> bool {
        self.apply_method.as_deref() == Some("ssa")
    }
}

#[derive(Deserialize)]
struct WireRelease {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    version: u64,
    #[serde(default)]
    info: Option<WireInfo>,
    #[serde(default)]
    chart: Option<WireChart>,
    #[serde(default)]
    config: Option<Value>,
    #[serde(default)]
    manifest: String,
    #[serde(default)]
    hooks: Option<Vec<WireHook>>,
    #[serde(default)]
    apply_method: Option<String>,
}

#[derive(Deserialize)]
struct WireInfo {
    #[serde(default)]
    status: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    last_deployed: Option<String>,
}

#[derive(Deserialize)]
struct WireChart {
    #[serde(default)]
    metadata: Option<WireChartMeta>,
}

#[derive(Deserialize)]
struct WireChartMeta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: String,
    #[serde(default, rename = "appVersion")]
    app_version: Option<String>,
}

#[derive(Deserialize)]
struct WireHook {
    #[serde(default)]
    name: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    events: Vec<String>,
}

/// Decodes a record's `data.release` (the base64 text helm stored: a ConfigMap's value as it is,
/// a Secret's after the API's own base64 is undone).
pub fn decode(encoded: &[u8]) -> Result<Release, RecordError> {
    if encoded.len() > MAX_ENCODED {
        return Err(RecordError::TooLarge {
            size: encoded.len(),
            max: MAX_ENCODED,
        });
    }
    let trimmed = encoded.trim_ascii();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(trimmed)
        .map_err(RecordError::Base64)?;
    let json = if bytes.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::with_capacity(bytes.len() * 4);
        flate2::read::GzDecoder::new(bytes.as_slice())
            .take(MAX_DECODED + 1)
            .read_to_end(&mut out)
            .map_err(RecordError::Gzip)?;
        if out.len() as u64 > MAX_DECODED {
            return Err(RecordError::Expands);
        }
        out
    } else {
        bytes
    };
    let wire: WireRelease = serde_json::from_slice(&json).map_err(RecordError::Json)?;
    Ok(from_wire(wire))
}

fn from_wire(wire: WireRelease) -> Release {
    let info = wire.info.unwrap_or(WireInfo {
        status: String::new(),
        description: String::new(),
        last_deployed: None,
    });
    let meta = wire.chart.and_then(|c| c.metadata);
    Release {
        name: wire.name,
        namespace: wire.namespace,
        revision: wire.version,
        status: Status::parse(&info.status),
        description: info.description,
        last_deployed: info.last_deployed,
        chart: meta
            .map(|m| ChartMeta {
                name: m.name,
                version: m.version,
                app_version: m.app_version.filter(|v| !v.is_empty()),
            })
            .unwrap_or_default(),
        config: match wire.config {
            Some(Value::Object(map)) => Value::Object(map),
            _ => Value::Object(Default::default()),
        },
        manifest: wire.manifest,
        hooks: wire
            .hooks
            .unwrap_or_default()
            .into_iter()
            .map(|h| Hook {
                name: h.name,
                kind: h.kind,
                path: h.path,
                events: h.events,
            })
            .collect(),
        apply_method: wire.apply_method.filter(|m| !m.is_empty()),
        newer: None,
        pending: None,
    }
}

/// The record as helm writes it (gzip, then base64): for tests, benches and the demo cluster's
/// fixtures, never for the cluster (the demo cluster installs its release with it).
pub use crate::sim::scenario::helm::encode;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The `data.release` of each Secret of a captured `kubectl get secret -o json`, with the
    /// API's base64 undone as the kube client does.
    fn captured(file: &str) -> Vec<(String, Vec<u8>)> {
        let path = format!("{}/testdata/helm/{file}", env!("CARGO_MANIFEST_DIR"));
        let list: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                let wire = item["data"]["release"].as_str().unwrap();
                let once = base64::engine::general_purpose::STANDARD
                    .decode(wire)
                    .unwrap();
                (item["metadata"]["name"].as_str().unwrap().to_owned(), once)
            })
            .collect()
    }

    #[test]
    fn helm4_records_decode_to_their_revision_chart_values_and_manifest() {
        let records = captured("helm4-release-secrets.json");
        let v2 = &records
            .iter()
            .find(|(name, _)| name == "sh.helm.release.v1.web4.v2")
            .unwrap()
            .1;
        let release = decode(v2).unwrap();
        assert_eq!(release.name, "web4");
        assert_eq!(release.namespace, "helmcap");
        assert_eq!(release.revision, 2);
        assert_eq!(release.status, Status::Deployed);
        assert_eq!(release.chart.name, "podinfo");
        assert_eq!(release.chart.version, "6.14.1");
        assert_eq!(release.chart.app_version.as_deref(), Some("6.14.1"));
        assert_eq!(release.config, serde_json::json!({"replicaCount": 2}));
        assert!(release.server_side());
        // What `helm get manifest` printed for the same revision.
        let printed = std::fs::read_to_string(format!(
            "{}/testdata/helm/helm4-get-manifest.yaml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert_eq!(release.manifest.trim(), printed.trim());
        assert_eq!(release.hooks.len(), 3);
        assert!(release.hooks.iter().all(|h| h.events == ["test"]));
    }

    #[test]
    fn helm3_records_have_no_apply_method_and_their_values_are_get_values() {
        let records = captured("helm3-release-secrets.json");
        let (_, v1) = records
            .iter()
            .find(|(name, _)| name == "sh.helm.release.v1.web3.v1")
            .unwrap();
        let first = decode(v1).unwrap();
        assert_eq!((first.revision, &first.status), (1, &Status::Superseded));
        assert_eq!(first.config, serde_json::json!({}));
        let (_, v2) = records
            .iter()
            .find(|(name, _)| name == "sh.helm.release.v1.web3.v2")
            .unwrap();
        let release = decode(v2).unwrap();
        assert!(!release.server_side());
        let values: Value = serde_json::from_str(
            &std::fs::read_to_string(format!(
                "{}/testdata/helm/helm3-get-values.json",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(release.config, values);
    }

    #[test]
    fn a_record_without_gzip_is_read_too_and_encode_round_trips() {
        let json = serde_json::json!({"name": "a", "namespace": "n", "version": 3,
            "info": {"status": "failed"}, "chart": {"metadata": {"name": "c", "version": "1.0.0"}},
            "manifest": "---\n"});
        let plain = base64::engine::general_purpose::STANDARD.encode(json.to_string());
        let release = decode(plain.as_bytes()).unwrap();
        assert_eq!((release.revision, release.status), (3, Status::Failed));
        let gzipped = encode(&json).unwrap();
        assert_eq!(decode(gzipped.as_bytes()).unwrap().chart.name, "c");
    }

    #[test]
    fn bad_records_say_what_is_wrong() {
        let not_base64 = decode(b"%%%").unwrap_err();
        assert!(
            not_base64.to_string().contains("not base64"),
            "{not_base64}"
        );
        let broken_gzip =
            base64::engine::general_purpose::STANDARD.encode([0x1f, 0x8b, 0x08, 0, 1, 2, 3]);
        let error = decode(broken_gzip.as_bytes()).unwrap_err();
        assert!(error.to_string().contains("gzip"), "{error}");
        let not_json = base64::engine::general_purpose::STANDARD.encode("[1, 2]");
        let error = decode(not_json.as_bytes()).unwrap_err();
        assert!(error.to_string().contains("not a Helm release"), "{error}");
        let huge = vec![b'A'; MAX_ENCODED + 4];
        assert!(matches!(
            decode(&huge).unwrap_err(),
            RecordError::TooLarge { .. }
        ));
    }

    #[test]
    fn a_gzip_bomb_is_refused_not_held() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![b' '; 1 << 20];
        for _ in 0..(MAX_DECODED >> 20) + 2 {
            gz.write_all(&zeros).unwrap();
        }
        let bytes = gz.finish().unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
        assert!(encoded.len() < MAX_ENCODED);
        assert!(matches!(
            decode(encoded.as_bytes()).unwrap_err(),
            RecordError::Expands
        ));
    }
}
