//! The pod lifecycle a kubelet would report, as pure functions: ContainerCreating, then Running
//! and Ready — or, for images that never work, CrashLoopBackOff (a tag containing `crash`) or
//! ErrImagePull/ImagePullBackOff (a tag containing `missing` or `doesnotexist`), with back-offs
//! that double as the kubelet's do.
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::Timings;
use super::events::{Component, EventSpec};
use crate::object::{at, format_time, name, namespace, str_at, uid};

/// The kubelet's back-off ceiling.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// What an image does when run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ImageOutcome {
    Runs,
    Crashes,
    PullFails,
}

/// The outcome of an image, by its tag.
pub fn image_outcome(image: &str) -> ImageOutcome {
    let last = image.rsplit('/').next().unwrap_or(image);
    let tag = last
        .split_once(':')
        .map(|(_, t)| t)
        .unwrap_or("")
        .to_ascii_lowercase();
    if tag.contains("missing") || tag.contains("doesnotexist") {
        ImageOutcome::PullFails
    } else if tag.contains("crash") {
        ImageOutcome::Crashes
    } else {
        ImageOutcome::Runs
    }
}

fn containers(pod: &Value) -> &[Value] {
    at(pod, &["spec", "containers"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn image(container: &Value) -> &str {
    container["image"].as_str().unwrap_or_default()
}

/// The worst outcome over the pod's containers: it decides the pod's path.
pub fn pod_outcome(pod: &Value) -> ImageOutcome {
    containers(pod)
        .iter()
        .map(|c| image_outcome(image(c)))
        .max()
        .unwrap_or(ImageOutcome::Runs)
}

/// Where a pod is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodStage {
    Creating,
    Running,
    /// Crashed `restarts` times, waiting to restart.
    CrashLoop {
        restarts: i64,
    },
    /// Pull attempt `attempt` failed just now.
    ErrImagePull {
        attempt: i64,
    },
    /// Waiting before pull attempt `attempt + 1`.
    ImagePullBackOff {
        attempt: i64,
    },
}

fn backoff(base: Duration, n: i64) -> Duration {
    let doublings = u32::try_from((n - 1).clamp(0, 16)).unwrap_or(16);
    base.saturating_mul(2u32.saturating_pow(doublings))
        .min(MAX_BACKOFF)
}

/// The stage after `stage` for a pod whose images behave as `outcome`, and how long until then;
/// `None` once the pod is settled (Running).
pub fn next_stage(
    outcome: ImageOutcome,
    stage: PodStage,
    timings: &Timings,
) -> Option<(PodStage, Duration)> {
    match (stage, outcome) {
        (PodStage::Creating, ImageOutcome::Runs) => Some((PodStage::Running, timings.pod_ready)),
        (PodStage::Creating, ImageOutcome::Crashes) => {
            Some((PodStage::CrashLoop { restarts: 1 }, timings.pod_ready))
        }
        (PodStage::Creating, ImageOutcome::PullFails) => {
            Some((PodStage::ErrImagePull { attempt: 1 }, timings.image_pull))
        }
        (PodStage::CrashLoop { restarts }, _) => Some((
            PodStage::CrashLoop {
                restarts: restarts + 1,
            },
            backoff(timings.crash_backoff, restarts),
        )),
        (PodStage::ErrImagePull { attempt }, _) => {
            Some((PodStage::ImagePullBackOff { attempt }, timings.image_pull))
        }
        (PodStage::ImagePullBackOff { attempt }, _) => Some((
            PodStage::ErrImagePull {
                attempt: attempt + 1,
            },
            backoff(timings.crash_backoff, attempt),
        )),
        (PodStage::Running, _) => None,
    }
}

/// The node a pod runs on, as the kubelet knows it: for `hostIP` and `podIP`.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// The node's `InternalIP`.
    pub ip: String,
    /// The node's pod range (`10.244.1.0/24`).
    pub pod_cidr: String,
}

/// A pod's IP in its node's range (a /24), stable for its name.
fn pod_ip(pod_name: &str, pod_cidr: &str) -> String {
    let network = pod_cidr
        .split('/')
        .next()
        .and_then(|ip| ip.rsplit_once('.'))
        .map_or("10.244.0", |(prefix, _)| prefix);
    format!("{network}.{}", small_hash(pod_name) % 250 + 2)
}

/// A small stable hash of a name, for the ids and addresses the kubelet makes up.
pub fn small_hash(text: &str) -> u32 {
    text.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    })
}

/// 32 hex digits made up from `text` (container ids, machine ids).
pub fn hex_id(text: &str) -> String {
    let a = small_hash(text);
    let b = small_hash(&format!("{text}#"));
    format!("{a:08x}{b:08x}{a:08x}{b:08x}")
}

/// Kubernetes' QoS class from the containers' requests and limits.
fn qos_class(pod: &Value) -> &'static str {
    let cs = containers(pod);
    let has = |c: &Value, k: &str| {
        c.pointer(&format!("/resources/{k}"))
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    };
    if cs.iter().all(|c| !has(c, "requests") && !has(c, "limits")) {
        return "BestEffort";
    }
    let guaranteed = cs.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = c.pointer(&format!("/resources/limits/{r}"));
            let request = c.pointer(&format!("/resources/requests/{r}")).or(limit);
            limit.is_some() && limit == request
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn container_status(
    pod: &Value,
    container: &Value,
    stage: PodStage,
    started: &str,
) -> (Value, bool) {
    let cname = container["name"].as_str().unwrap_or_default();
    let img = image(container);
    let pod_ref = format!("{}_{}({})", name(pod), namespace(pod), uid(pod));
    let running = || {
        json!({
            "containerID": format!("containerd://{}", hex_id(&format!("{}/{cname}", name(pod)))),
            "image": img,
            "imageID": format!("{}@sha256:{}{}", img.split(':').next().unwrap_or(img), hex_id(img), hex_id(img)),
            "lastState": {},
            "name": cname,
            "ready": true,
            "restartCount": 0,
            "started": true,
            "state": {"running": {"startedAt": started}},
        })
    };
    let waiting = |reason: &str, message: Option<String>, restarts: i64, last: Value| {
        let mut w = json!({"reason": reason});
        if let Some(m) = message {
            w["message"] = json!(m);
        }
        json!({"image": img, "imageID": "", "lastState": last, "name": cname, "ready": false,
               "restartCount": restarts, "started": false, "state": {"waiting": w}})
    };
    let outcome = image_outcome(img);
    let status = match stage {
        PodStage::Creating => waiting("ContainerCreating", None, 0, json!({})),
        _ if outcome == ImageOutcome::Runs => running(),
        PodStage::Running => running(),
        PodStage::CrashLoop { restarts } => {
            let last = json!({"terminated": {
                "containerID": format!("containerd://{}", hex_id(&format!("{}/{cname}/{restarts}", name(pod)))),
                "exitCode": 1, "finishedAt": started, "reason": "Error", "startedAt": started}});
            let message = format!(
                "back-off {}s restarting failed container={cname} pod={pod_ref}",
                10 * restarts.clamp(1, 30)
            );
            let mut s = waiting("CrashLoopBackOff", Some(message), restarts, last);
            s["imageID"] = running()["imageID"].clone();
            s
        }
        PodStage::ErrImagePull { .. } => waiting(
            "ErrImagePull",
            Some(format!(
                "failed to pull and unpack image \"{img}\": failed to resolve reference \"{img}\": {img}: not found"
            )),
            0,
            json!({}),
        ),
        PodStage::ImagePullBackOff { .. } => waiting(
            "ImagePullBackOff",
            Some(format!("Back-off pulling image \"{img}\"")),
            0,
            json!({}),
        ),
    };
    let ready = status["ready"] == true;
    (status, ready)
}

/// The pod status a kubelet reports at `stage`. Times already in `pod`'s status (start time,
/// condition transitions) are kept; new ones are `now`.
pub fn pod_status(pod: &Value, stage: PodStage, now: Timestamp, host: &Host) -> Value {
    let now_text = format_time(now);
    let old = pod.get("status").cloned().unwrap_or(Value::Null);
    let start_time = old
        .get("startTime")
        .and_then(Value::as_str)
        .unwrap_or(&now_text)
        .to_string();
    let mut statuses = Vec::new();
    let mut unready = Vec::new();
    for c in containers(pod) {
        let (s, ready) = container_status(pod, c, stage, &now_text);
        if !ready {
            unready.push(c["name"].as_str().unwrap_or_default().to_string());
        }
        statuses.push(s);
    }
    let ready = unready.is_empty();
    let unready_message = format!("containers with unready status: [{}]", unready.join(" "));
    let condition = |kind: &str, ok: bool| {
        let state = if ok { "True" } else { "False" };
        let previous = old
            .get("conditions")
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|c| c["type"] == kind));
        let transition = match previous {
            Some(p) if p["status"] == state => p["lastTransitionTime"].clone(),
            _ => json!(now_text),
        };
        let mut c = json!({"lastProbeTime": null, "lastTransitionTime": transition, "status": state, "type": kind});
        if !ok {
            c["message"] = json!(unready_message);
            c["reason"] = json!("ContainersNotReady");
        }
        c
    };
    let phase = match stage {
        PodStage::Creating | PodStage::ErrImagePull { .. } | PodStage::ImagePullBackOff { .. } => {
            "Pending"
        }
        PodStage::Running | PodStage::CrashLoop { .. } => "Running",
    };
    let host_ip = &host.ip;
    let mut status = Map::new();
    status.insert(
        "conditions".into(),
        json!([
            condition("PodReadyToStartContainers", stage != PodStage::Creating),
            condition("Initialized", true),
            condition("Ready", ready),
            condition("ContainersReady", ready),
            condition("PodScheduled", true),
        ]),
    );
    status.insert("containerStatuses".into(), Value::Array(statuses));
    status.insert("hostIP".into(), json!(host_ip));
    status.insert("hostIPs".into(), json!([{"ip": host_ip}]));
    status.insert("phase".into(), json!(phase));
    if stage != PodStage::Creating {
        let ip = pod_ip(name(pod), &host.pod_cidr);
        status.insert("podIP".into(), json!(ip));
        status.insert("podIPs".into(), json!([{"ip": ip}]));
    }
    status.insert("qosClass".into(), json!(qos_class(pod)));
    status.insert("startTime".into(), json!(start_time));
    Value::Object(status)
}

/// The events a kubelet records when a pod enters `stage`.
pub fn stage_events(pod: &Value, stage: PodStage) -> Vec<EventSpec> {
    let pod_ref = format!("{}_{}({})", name(pod), namespace(pod), uid(pod));
    let mut events = Vec::new();
    for c in containers(pod) {
        let cname = c["name"].as_str().unwrap_or_default();
        let img = image(c);
        let outcome = image_outcome(img);
        let kubelet = Component::Kubelet;
        match stage {
            PodStage::Running => {
                events.push(EventSpec::normal(kubelet, "Pulled", format!("Container image \"{img}\" already present on machine")));
                events.push(EventSpec::normal(kubelet, "Started", format!("Started container {cname}")));
            }
            PodStage::CrashLoop { restarts } if outcome == ImageOutcome::Crashes => {
                // The container did start before it crashed the first time.
                if restarts == 1 {
                    events.push(EventSpec::normal(kubelet, "Pulled", format!("Container image \"{img}\" already present on machine")));
                    events.push(EventSpec::normal(kubelet, "Started", format!("Started container {cname}")));
                }
                events.push(EventSpec::warning(
                kubelet,
                "BackOff",
                format!("Back-off restarting failed container {cname} in pod {pod_ref}"),
                ));
            }
            PodStage::ErrImagePull { .. } if outcome == ImageOutcome::PullFails => events.push(EventSpec::warning(
                kubelet,
                "Failed",
                format!("Failed to pull image \"{img}\": rpc error: code = NotFound desc = failed to pull and unpack image \"{img}\": not found"),
            )),
            PodStage::ImagePullBackOff { .. } if outcome == ImageOutcome::PullFails => {
                events.push(EventSpec::normal(kubelet, "BackOff", format!("Back-off pulling image \"{img}\"")))
            }
            _ => {}
        }
    }
    events
}

/// The stage a pod's reported status shows, for a pod the driver has not followed from birth
/// (after a restart of the controllers): ready pods stay as they are, others start over.
pub fn observed_stage(pod: &Value) -> PodStage {
    let ready = at(pod, &["status", "conditions"])
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        });
    if ready && str_at(pod, &["status", "phase"]) == Some("Running") {
        PodStage::Running
    } else {
        PodStage::Creating
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn pod(image: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-585f666f7-9j9x5", "namespace": "shop", "uid": "p1"},
            "spec": {"containers": [{"name": "web", "image": image,
                "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "64Mi"}}}]}})
    }

    fn host() -> Host {
        Host {
            ip: "172.18.0.3".into(),
            pod_cidr: "10.244.1.0/24".into(),
        }
    }

    fn at_time(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn image_rules_follow_the_tag_only() {
        assert_eq!(
            image_outcome("registry.example/shop/checkout:3.2.0-crash"),
            ImageOutcome::Crashes
        );
        assert_eq!(
            image_outcome("registry.example/web:crashloop"),
            ImageOutcome::Crashes
        );
        assert_eq!(
            image_outcome("registry.example/web:1.0-missing"),
            ImageOutcome::PullFails
        );
        assert_eq!(
            image_outcome("registry.example/web:doesnotexist"),
            ImageOutcome::PullFails
        );
        assert_eq!(
            image_outcome("registry.example/crash-reporter:1.0"),
            ImageOutcome::Runs
        );
        assert_eq!(image_outcome("localhost:5000/web"), ImageOutcome::Runs);
    }

    #[test]
    fn a_healthy_pod_is_created_then_running_and_ready() {
        let t = Timings::fast();
        let mut p = pod("web:1");
        let (stage, wait) = next_stage(ImageOutcome::Runs, PodStage::Creating, &t).unwrap();
        assert_eq!((stage, wait), (PodStage::Running, t.pod_ready));
        p["status"] = pod_status(
            &p,
            PodStage::Creating,
            at_time("2026-11-22T03:00:00Z"),
            &host(),
        );
        assert_eq!(p["status"]["phase"], "Pending");
        assert_eq!(
            p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating"
        );
        let s = pod_status(
            &p,
            PodStage::Running,
            at_time("2026-11-22T03:00:02Z"),
            &host(),
        );
        assert_eq!(s["phase"], "Running");
        let ready = s["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap();
        assert_eq!(
            (
                ready["status"].as_str(),
                ready["lastTransitionTime"].as_str()
            ),
            (Some("True"), Some("2026-11-22T03:00:02Z"))
        );
        let scheduled = s["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "PodScheduled")
            .unwrap();
        assert_eq!(
            scheduled["lastTransitionTime"], "2026-11-22T03:00:00Z",
            "unchanged conditions keep their time"
        );
        assert_eq!(s["startTime"], "2026-11-22T03:00:00Z");
        assert_eq!(s["qosClass"], "Burstable");
        assert!(s["podIP"].as_str().unwrap().starts_with("10.244.1."));
        assert_eq!(s["hostIP"], "172.18.0.3");
        assert_eq!(next_stage(ImageOutcome::Runs, PodStage::Running, &t), None);
    }

    #[test]
    fn a_crashing_image_loops_with_rising_restarts_and_backoff() {
        let t = Timings::default();
        let p = pod("web:2.0-crash");
        let mut stage = PodStage::Creating;
        let mut waits = Vec::new();
        for _ in 0..4 {
            let (next, wait) = next_stage(pod_outcome(&p), stage, &t).unwrap();
            stage = next;
            waits.push(wait);
        }
        assert_eq!(stage, PodStage::CrashLoop { restarts: 4 });
        assert_eq!(
            waits,
            [
                t.pod_ready,
                t.crash_backoff,
                t.crash_backoff * 2,
                t.crash_backoff * 4
            ]
        );
        let s = pod_status(&p, stage, at_time("2026-11-22T03:00:00Z"), &host());
        let c = &s["containerStatuses"][0];
        assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(c["restartCount"], 4);
        assert_eq!(c["ready"], false);
        assert_eq!(c["lastState"]["terminated"]["reason"], "Error");
        let ready = s["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap();
        assert_eq!(ready["status"], "False");
        assert_eq!(ready["message"], "containers with unready status: [web]");
        let events = stage_events(&p, stage);
        assert_eq!(events.len(), 1);
        assert!(events[0].warning && events[0].reason == "BackOff");
        let first: Vec<String> = stage_events(&p, PodStage::CrashLoop { restarts: 1 })
            .into_iter()
            .map(|e| e.reason)
            .collect();
        assert_eq!(
            first,
            ["Pulled", "Started", "BackOff"],
            "it ran before it crashed"
        );
        assert_eq!(
            events[0].message,
            "Back-off restarting failed container web in pod web-585f666f7-9j9x5_shop(p1)"
        );
    }

    #[test]
    fn a_missing_image_alternates_pull_errors_and_backoff() {
        let t = Timings::fast();
        let p = pod("web:doesnotexist");
        let (s1, _) = next_stage(pod_outcome(&p), PodStage::Creating, &t).unwrap();
        let (s2, _) = next_stage(pod_outcome(&p), s1, &t).unwrap();
        let (s3, _) = next_stage(pod_outcome(&p), s2, &t).unwrap();
        assert_eq!(
            (s1, s2, s3),
            (
                PodStage::ErrImagePull { attempt: 1 },
                PodStage::ImagePullBackOff { attempt: 1 },
                PodStage::ErrImagePull { attempt: 2 }
            )
        );
        let reason = |stage| {
            pod_status(&p, stage, at_time("2026-11-22T03:00:00Z"), &host())["containerStatuses"][0]
                ["state"]["waiting"]["reason"]
                .clone()
        };
        assert_eq!(reason(s1), "ErrImagePull");
        assert_eq!(reason(s2), "ImagePullBackOff");
        assert_eq!(
            pod_status(&p, s2, at_time("2026-11-22T03:00:00Z"), &host())["phase"],
            "Pending"
        );
        assert_eq!(stage_events(&p, s1)[0].reason, "Failed");
    }

    #[test]
    fn qos_classes() {
        assert_eq!(
            qos_class(&json!({"spec": {"containers": [{"name": "a"}]}})),
            "BestEffort"
        );
        let g = json!({"spec": {"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
        assert_eq!(qos_class(&g), "Guaranteed");
    }
}
