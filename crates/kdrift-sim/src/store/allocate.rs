//! What a server's registry does beyond defaults: a Secret's `stringData` folded into `data`
//! (before `managedFields` are recorded, as the conversion of the request does), and a Service's
//! cluster IPs, IP families and node ports allocated (after, so that nobody owns them), kept from
//! the stored object when an update leaves them out.
use base64::Engine;
use serde_json::{Map, Value, json};

use crate::resources::ResourceType;

/// The addresses and ports handed out so far.
#[derive(Debug)]
pub struct Allocations {
    next_ip: u32,
    next_node_port: u16,
}

impl Default for Allocations {
    fn default() -> Allocations {
        Allocations {
            // 10.96.0.1 is the `kubernetes` Service's on a real cluster.
            next_ip: 10,
            next_node_port: 30000,
        }
    }
}

impl Allocations {
    fn ip(&mut self) -> String {
        let n = self.next_ip;
        self.next_ip = self.next_ip.wrapping_add(1);
        format!("10.96.{}.{}", (n >> 8) & 0xff, n & 0xff)
    }

    fn node_port(&mut self) -> u16 {
        let port = self.next_node_port;
        self.next_node_port = if port >= 32767 { 30000 } else { port + 1 };
        port
    }
}

/// `stringData` into `data`, base64-encoded (a key in both takes the `stringData` value).
pub fn fold_string_data(resource: ResourceType, object: &mut Value) {
    if resource != ResourceType::SECRET {
        return;
    }
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let Some(Value::Object(strings)) = map.remove("stringData") else {
        return;
    };
    let data = map
        .entry("data")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(data) = data.as_object_mut() {
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            data.insert(key, Value::String(encoded));
        }
    }
}

/// A Service's allocations: kept from `old`, else made.
pub fn allocate(
    resource: ResourceType,
    old: Option<&Value>,
    object: &mut Value,
    allocations: &mut Allocations,
) {
    if resource != ResourceType::SERVICE {
        return;
    }
    let old_spec = old.and_then(|o| o.get("spec")).and_then(Value::as_object);
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_owned();
    if ty == "ExternalName" {
        return;
    }
    for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
        if spec.get(field).is_none_or(is_unset)
            && let Some(kept) = old_spec.and_then(|o| o.get(field))
        {
            spec.insert(field.into(), kept.clone());
        }
    }
    if spec.get("clusterIP").is_none_or(is_unset) {
        spec.insert("clusterIP".into(), json!(allocations.ip()));
    }
    if spec.get("clusterIPs").is_none_or(is_unset) {
        let ip = spec.get("clusterIP").cloned().unwrap_or(Value::Null);
        spec.insert("clusterIPs".into(), json!([ip]));
    }
    if spec.get("ipFamilies").is_none_or(is_unset) {
        spec.insert("ipFamilies".into(), json!(["IPv4"]));
    }
    if spec.get("ipFamilyPolicy").is_none_or(is_unset) {
        spec.insert("ipFamilyPolicy".into(), json!("SingleStack"));
    }
    if !matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
        // What only those types have goes when the type changes away from them, as a real
        // server drops type-dependent fields.
        let was_exposed = old_spec
            .and_then(|o| o.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| matches!(t, "NodePort" | "LoadBalancer"));
        if was_exposed {
            for field in [
                "externalTrafficPolicy",
                "healthCheckNodePort",
                "allocateLoadBalancerNodePorts",
            ] {
                spec.remove(field);
            }
            if let Some(Value::Array(ports)) = spec.get_mut("ports") {
                for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                    port.remove("nodePort");
                }
            }
        }
        return;
    }
    let old_ports: Vec<&Value> = old_spec
        .and_then(|o| o.get("ports"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            if port.get("nodePort").is_some_and(|p| !is_unset(p)) {
                continue;
            }
            let kept = old_ports
                .iter()
                .find(|o| o.get("port") == port.get("port"))
                .and_then(|o| o.get("nodePort"))
                .filter(|p| !is_unset(p))
                .cloned();
            let node_port = kept.unwrap_or_else(|| json!(allocations.node_port()));
            port.insert("nodePort".into(), node_port);
        }
    }
}

fn is_unset(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_is_folded_into_data() {
        let mut secret = json!({"stringData": {"password": "s3cr3t-value", "user": "app"}, "data": {"user": "eA=="}});
        fold_string_data(ResourceType::SECRET, &mut secret);
        assert_eq!(
            secret,
            json!({"data": {"user": "YXBw", "password": "czNjcjN0LXZhbHVl"}})
        );
    }

    #[test]
    fn a_service_gets_its_addresses_once_and_keeps_them() {
        let mut allocations = Allocations::default();
        let mut service = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 443, "nodePort": 31443}]}});
        allocate(ResourceType::SERVICE, None, &mut service, &mut allocations);
        assert_eq!(service["spec"]["clusterIP"], json!("10.96.0.10"));
        assert_eq!(service["spec"]["clusterIPs"], json!(["10.96.0.10"]));
        assert_eq!(service["spec"]["ports"][0]["nodePort"], json!(30000));
        assert_eq!(service["spec"]["ports"][1]["nodePort"], json!(31443));
        // An update that leaves them out keeps them.
        let mut update = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        allocate(
            ResourceType::SERVICE,
            Some(&service),
            &mut update,
            &mut allocations,
        );
        assert_eq!(update["spec"]["clusterIP"], json!("10.96.0.10"));
        assert_eq!(update["spec"]["ports"][0]["nodePort"], json!(30000));
        // Back to ClusterIP: the node ports go.
        let mut back = json!({"spec": {"type": "ClusterIP", "externalTrafficPolicy": "Cluster", "ports": [{"port": 80, "nodePort": 30000}]}});
        allocate(
            ResourceType::SERVICE,
            Some(&update),
            &mut back,
            &mut allocations,
        );
        assert_eq!(back["spec"]["ports"][0].get("nodePort"), None);
        assert_eq!(back["spec"].get("externalTrafficPolicy"), None);
    }
}
