//! Tests of [`super`]: owners from marks, policies and what they say.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_tracking_id_names_its_app_and_its_namespace_when_written() {
    assert_eq!(
        parse_tracking_id("shop:apps/Deployment:shop/frontend"),
        Some(Owner::Argo {
            app: "shop".into(),
            namespace: None,
            by_label: false,
        })
    );
    assert_eq!(
        parse_tracking_id("team-a_shop:/Service:shop/web"),
        Some(Owner::Argo {
            app: "shop".into(),
            namespace: Some("team-a".into()),
            by_label: false,
        })
    );
    assert_eq!(parse_tracking_id("not a tracking id"), None);
    assert_eq!(parse_tracking_id(":apps/Deployment:shop/x"), None);
}

#[test]
fn owners_come_from_the_controllers_marks_and_both_are_said() {
    let labels = map(&[
        (FLUX_KUSTOMIZE_NAME, "platform"),
        (FLUX_KUSTOMIZE_NAMESPACE, "flux-system"),
    ]);
    let annotations = map(&[(ARGO_TRACKING_ID, "shop:apps/Deployment:shop/web")]);
    let owners = owners_of(Some(&labels), Some(&annotations));
    assert_eq!(
        owners.iter().map(Owner::short).collect::<Vec<_>>(),
        ["argo:shop", "flux:platform"]
    );
    // Helm charts set the instance label too: a candidate, an owner once its app is read.
    let instance = map(&[(ARGO_INSTANCE_LABEL, "redis")]);
    let candidate = Owner::Argo {
        app: "redis".into(),
        namespace: None,
        by_label: true,
    };
    assert_eq!(
        owners_of(Some(&instance), None),
        std::slice::from_ref(&candidate)
    );
    let read = |policy| Reconciler {
        owner: candidate.clone(),
        policy,
        found_in: None,
    };
    assert!(!read(Err("no Application \"redis\"".into())).claims());
    assert!(read(Ok(Policy::of_application(&Value::Null))).claims());
    // With a tracking id, the label says nothing more.
    let both = map(&[(ARGO_INSTANCE_LABEL, "redis")]);
    assert_eq!(owners_of(Some(&both), Some(&annotations)).len(), 1);
    // A Flux name without its namespace is not enough.
    let half = map(&[(FLUX_HELM_NAME, "redis")]);
    assert!(owners_of(Some(&half), None).is_empty());
}

#[test]
fn an_application_says_whether_it_self_heals_and_the_sentence_says_what_happens() {
    let app: Value = serde_json::from_str(
        r#"{"spec":{"source":{"repoURL":"https://git.example/demo.git","path":"shop","targetRevision":"main"},
            "syncPolicy":{"automated":{"prune":true,"selfHeal":true}}},
            "status":{"sync":{"status":"OutOfSync"},"health":{"status":"Healthy"}}}"#,
    )
    .unwrap();
    let r = Reconciler {
        owner: Owner::Argo {
            app: "shop".into(),
            namespace: Some("argocd".into()),
            by_label: false,
        },
        policy: Ok(Policy::of_application(&app)),
        found_in: None,
    };
    assert_eq!(r.marker(), "argo:shop self-heal");
    assert_eq!(
        r.sentence(),
        "Argo CD self-heal is on for app shop: this change will be reverted at its next sync (within ~3m) unless it is committed to git and pushed"
    );
    let j = r.to_json();
    assert_eq!(j["controller"], "argocd");
    assert_eq!(j["selfHeal"], true);
    assert_eq!(j["revertsChanges"], true);
    assert_eq!(j["syncStatus"], "OutOfSync");
    assert_eq!(j["namespace"], "argocd");
    assert!(r.after_accept().unwrap().contains("(main)"));
    let changed = jiff::Timestamp::from_second(1_000).unwrap();
    let now = jiff::Timestamp::from_second(1_050).unwrap();
    assert!(
        r.sentence_since(Some(changed), now).contains(
            "at its next sync (in about 2m10s: Argo CD compares every 3m, self-heal may act sooner) unless"
        ),
        "{}",
        r.sentence_since(Some(changed), now)
    );
    assert_eq!(
        r.on_revert().as_deref(),
        Some(
            "reverting has the effect of a sync of app shop for this object, which self-heal would do anyway"
        )
    );
    let late = jiff::Timestamp::from_second(1_200).unwrap();
    assert!(r.sentence_since(Some(changed), late).contains("(due now)"));
    let manual: Value = serde_json::from_str(r#"{"spec":{"source":{"chart":"redis"}}}"#).unwrap();
    let r = Reconciler {
        policy: Ok(Policy::of_application(&manual)),
        ..r
    };
    assert_eq!(r.marker(), "argo:shop manual");
    assert!(r.sentence().ends_with(
        "syncs by hand: this change stays until someone syncs the app (its source is the Helm chart redis, which kdrift does not render: the manifests folder is what is compared)"
    ), "{}", r.sentence());
    assert!(!r.to_json()["revertsChanges"].as_bool().unwrap());
}

#[test]
fn a_flux_kustomization_says_its_interval_and_suspension() {
    let ks: Value = serde_json::from_str(
        r#"{"spec":{"interval":"10m","path":"./platform","prune":true,"suspend":false},
            "status":{"conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded"}]}}"#,
    )
    .unwrap();
    let r = Reconciler {
        owner: Owner::FluxKustomization {
            name: "platform".into(),
            namespace: "flux-system".into(),
        },
        policy: Ok(Policy::of_flux(&ks)),
        found_in: None,
    };
    assert_eq!(r.marker(), "flux:platform 10m");
    assert!(r.sentence().contains("reconciles every 10m; suspended: no"));
    assert_eq!(r.to_json()["ready"], "True ReconciliationSucceeded");
    let unreadable = Reconciler {
        policy: Err("403 Forbidden".into()),
        ..r
    };
    assert_eq!(unreadable.marker(), "flux:platform ?");
    assert_eq!(
        unreadable.sentence(),
        "managed by Flux Kustomization flux-system/platform (details not readable: 403 Forbidden)"
    );
}

#[test]
fn a_flux_helm_release_reverts_only_with_drift_detection_enabled() {
    let release = |mode: &str| -> Value {
        serde_json::from_str(&format!(
            r#"{{"kind":"HelmRelease","spec":{{"interval":"5m","driftDetection":{{"mode":"{mode}"}}}}}}"#
        ))
        .unwrap()
    };
    let reconciler = |object: &Value| Reconciler {
        owner: Owner::FluxHelmRelease {
            name: "search".into(),
            namespace: "flux-system".into(),
        },
        policy: Ok(Policy::of_flux(object)),
        found_in: None,
    };
    for mode in ["disabled", "warn"] {
        let r = reconciler(&release(mode));
        assert!(!r.policy.as_ref().unwrap().reverts_changes(), "{mode}");
        assert!(
            r.sentence().contains("drift detection is off")
                && r.sentence().contains("stays until the next upgrade"),
            "{}",
            r.sentence()
        );
        assert_eq!(r.to_json()["revertsChanges"], false);
        assert_eq!(r.to_json()["driftDetection"], false);
    }
    let r = reconciler(&release("enabled"));
    assert!(r.policy.as_ref().unwrap().reverts_changes());
    assert!(
        r.sentence()
            .contains("will be reverted at its next reconcile")
    );
    // No driftDetection at all is helm-controller's default: disabled.
    let none: Value =
        serde_json::from_str(r#"{"kind":"HelmRelease","spec":{"interval":"5m"}}"#).unwrap();
    assert!(!reconciler(&none).policy.unwrap().reverts_changes());
}

#[test]
fn the_synced_revision_is_an_apps_while_synced_and_fluxs_last_applied() {
    let app = |status: &str| {
        serde_json::json!({"kind": "Application", "status": {"sync": {
            "status": status, "revision": "9f6783e0c1d2"}}})
    };
    assert_eq!(
        synced_revision(&app("Synced")).as_deref(),
        Some("9f6783e0c1d2")
    );
    assert_eq!(synced_revision(&app("OutOfSync")), None);
    let ks = |applied: &str| serde_json::json!({"kind": "Kustomization", "status": {"lastAppliedRevision": applied}});
    assert_eq!(
        synced_revision(&ks("main@sha1:9f6783e0c1d2")).as_deref(),
        Some("9f6783e0c1d2")
    );
    assert_eq!(
        synced_revision(&ks("main/9f6783e0c1d2")).as_deref(),
        Some("9f6783e0c1d2"),
        "Flux before v2.0 wrote branch/sha"
    );
    assert_eq!(
        synced_revision(&serde_json::json!({"kind": "Kustomization"})),
        None
    );
    assert!(is_commit("9f6783e0c1d2", "9f6783e"));
    assert!(is_commit("9f6783e", "9f6783e0c1d2"));
    assert!(!is_commit("ae31703", "9f6783e"));
    assert!(!is_commit("", "9f6783e"));
}
