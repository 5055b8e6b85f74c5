#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;

fn shop_app() -> Value {
    json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "shop", "namespace": "argocd"},
        "spec": {"project": "default",
            "source": {"repoURL": "https://git.example/kdrift/demo.git", "path": "shop", "targetRevision": "HEAD"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
            "syncPolicy": {"automated": {"prune": true, "selfHeal": true}}}})
}

#[test]
fn tracking_ids_are_argo_cds_format() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "frontend", "namespace": "shop"}});
    assert_eq!(
        tracking_id("shop", &deploy),
        "shop:apps/Deployment:shop/frontend"
    );
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cart", "namespace": "shop"}});
    assert_eq!(tracking_id("shop", &service), "shop:/Service:shop/cart");
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}});
    assert_eq!(tracking_id("shop", &namespace), "shop:/Namespace:/shop");
    let parsed = parse_tracking_id("shop:/Service:shop/cart").unwrap();
    assert_eq!(
        (
            parsed.app,
            parsed.group,
            parsed.kind,
            parsed.namespace,
            parsed.name
        ),
        ("shop", "", "Service", "shop", "cart")
    );
    assert_eq!(parse_tracking_id("shop"), None);
    assert_eq!(parse_tracking_id("shop:apps/Deployment"), None);
}

#[test]
fn an_app_outside_argocds_namespace_is_named_with_its_namespace() {
    let mut app = shop_app();
    app["metadata"]["namespace"] = json!("team-a");
    let spec = AppSpec::of(&app).unwrap();
    let config = argocd_config(
        &spec,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    );
    let id = config["metadata"]["annotations"][TRACKING_ID]
        .as_str()
        .unwrap();
    assert_eq!(id, "team-a_shop:/ConfigMap:shop/c");
    assert_eq!(
        tracking_app(&config),
        Some(("team-a".to_string(), "shop".to_string()))
    );
}

#[test]
fn app_spec_reads_the_sync_policy() {
    let spec = AppSpec::of(&shop_app()).unwrap();
    assert!(spec.automated && spec.self_heal && spec.prune);
    assert_eq!(spec.path, "shop");
    let mut manual = shop_app();
    manual["spec"]["syncPolicy"] = json!({});
    let spec = AppSpec::of(&manual).unwrap();
    assert!(!spec.automated && !spec.self_heal);
    let mut disabled = shop_app();
    disabled["spec"]["syncPolicy"]["automated"]["enabled"] = json!(false);
    assert!(!AppSpec::of(&disabled).unwrap().self_heal);
}

#[test]
fn an_app_for_another_cluster_is_left_alone() {
    let mut named = shop_app();
    named["spec"]["destination"] = json!({"name": "in-cluster", "namespace": "shop"});
    assert!(AppSpec::of(&named).is_some());
    for destination in [
        json!({"server": "https://prod-eu.example:6443", "namespace": "shop"}),
        json!({"name": "prod-eu", "namespace": "shop"}),
    ] {
        let mut app = shop_app();
        app["spec"]["destination"] = destination.clone();
        assert_eq!(AppSpec::of(&app), None, "{destination}");
    }
}

#[test]
fn folders_hold_their_files_argo_directly_flux_recursively() {
    assert_eq!(folder("./platform"), "platform");
    assert_eq!(folder("shop/"), "shop");
    assert_eq!(folder("./"), "");
    assert!(is_manifest_of("shop/cart.yaml", "shop", false));
    assert!(!is_manifest_of("shop/extra/cart.yaml", "shop", false));
    assert!(is_manifest_of("platform/extra/x.yml", "platform", true));
    assert!(!is_manifest_of("shopping/cart.yaml", "shop", true));
    assert!(!is_manifest_of("shop/README.md", "shop", false));
}

#[test]
fn flux_labels_name_the_kustomization() {
    let ks = json!({"metadata": {"name": "platform", "namespace": "flux-system"}});
    let config = flux_config(&ks, &json!({"metadata": {"name": "auth"}}));
    assert_eq!(config["metadata"]["labels"][FLUX_NAME], "platform");
    assert_eq!(config["metadata"]["labels"][FLUX_NAMESPACE], "flux-system");
}

#[test]
fn differences_ignore_bookkeeping_and_status() {
    let live = json!({"metadata": {"name": "a", "resourceVersion": "5", "generation": 2, "managedFields": []},
        "spec": {"replicas": 5}, "status": {"replicas": 5}});
    let mut applied = live.clone();
    applied["metadata"]["resourceVersion"] = json!("6");
    applied["metadata"]["generation"] = json!(3);
    applied["status"] = json!({});
    assert!(!differs(&live, &applied));
    applied["spec"]["replicas"] = json!(3);
    assert!(differs(&live, &applied));
}

#[test]
fn self_heal_waits_its_delay_and_manual_apps_never_sync() {
    let spec = AppSpec::of(&shop_app()).unwrap();
    let delay = Duration::from_secs(180);
    assert_eq!(decide(&spec, false, true, None), AppDecision::Nothing);
    assert_eq!(
        decide(&spec, true, false, Some(delay)),
        AppDecision::HealAfter(delay)
    );
    assert_eq!(
        decide(&spec, true, false, Some(Duration::ZERO)),
        AppDecision::Sync
    );
    // A commit the app has not synced yet is synced at once.
    assert_eq!(decide(&spec, true, true, Some(delay)), AppDecision::Sync);
    let mut no_heal = shop_app();
    no_heal["spec"]["syncPolicy"]["automated"]["selfHeal"] = json!(false);
    let no_heal = AppSpec::of(&no_heal).unwrap();
    assert_eq!(
        decide(&no_heal, true, false, Some(Duration::ZERO)),
        AppDecision::Nothing
    );
    assert_eq!(decide(&no_heal, true, true, None), AppDecision::Sync);
    let mut manual = shop_app();
    manual["spec"]["syncPolicy"] = json!({});
    let manual = AppSpec::of(&manual).unwrap();
    assert_eq!(decide(&manual, true, true, None), AppDecision::Nothing);
}

#[test]
fn deployment_health_follows_the_rollout() {
    let mut d = json!({"kind": "Deployment", "metadata": {"generation": 2}, "spec": {"replicas": 3},
        "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3}});
    assert_eq!(health(&d), Some("Healthy"));
    d["spec"]["replicas"] = json!(5);
    assert_eq!(health(&d), Some("Progressing"));
    d["status"]["conditions"] =
        json!([{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]);
    assert_eq!(health(&d), Some("Degraded"));
    assert_eq!(health(&json!({"kind": "Service"})), None);
    assert_eq!(
        app_health([None, Some("Healthy"), Some("Progressing")]),
        "Progressing"
    );
    assert_eq!(app_health([Some("Missing"), Some("Degraded")]), "Degraded");
}

#[test]
fn statuses_have_argo_cds_and_fluxs_shapes() {
    let spec = AppSpec::of(&shop_app()).unwrap();
    let config = argocd_config(
        &spec,
        &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "frontend", "namespace": "shop"}}),
    );
    let compared = [Compared {
        config: config.clone(),
        out_of_sync: true,
        health: Some("Healthy"),
    }];
    let status = application_status(&spec, &json!({}), "abc", &compared, "now");
    assert_eq!(status["sync"]["status"], "OutOfSync");
    assert_eq!(status["sync"]["revision"], "abc");
    assert_eq!(status["resources"][0]["group"], "apps");
    assert_eq!(status["resources"][0]["status"], "OutOfSync");
    let run = SyncRun {
        revision: "abc",
        started: "t0",
        finished: "t1",
        applied: vec![&config],
    };
    let (operation, history) = sync_record(&spec, &status, &run);
    assert_eq!(operation["syncResult"]["revision"], "abc");
    assert_eq!(
        operation["syncResult"]["resources"][0]["message"],
        "deployment.apps/frontend serverside-applied"
    );
    assert_eq!(history[0]["id"], 0);
    let mut later = status.clone();
    later["history"] = history;
    let (_, history) = sync_record(&spec, &later, &run);
    assert_eq!(history[1]["id"], 1);

    let ks = json!({"metadata": {"name": "platform", "namespace": "flux-system", "generation": 1}});
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "auth", "namespace": "platform"}});
    let status = kustomization_status(&ks, &flux_revision("main", "abc"), &[deploy], "now");
    assert_eq!(
        status["conditions"][0]["message"],
        "Applied revision: main@sha1:abc"
    );
    assert_eq!(status["conditions"][0]["reason"], "ReconciliationSucceeded");
    assert_eq!(
        status["inventory"]["entries"][0],
        json!({"id": "platform_auth_apps_Deployment", "v": "v1"})
    );
}

#[test]
fn go_durations_parse() {
    assert_eq!(go_duration("10m"), Some(Duration::from_secs(600)));
    assert_eq!(go_duration("1h30m"), Some(Duration::from_secs(5400)));
    assert_eq!(go_duration("10"), None);
    assert_eq!(go_duration("5x"), None);
}
