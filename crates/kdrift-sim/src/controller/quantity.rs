//! Resource quantities (`100m`, `1`, `128Mi`, `8148452Ki`, `1e3`) read as the scheduler and the
//! kubelet read them: in thousandths of the unit, rounded up, so cpu is in millicores and memory
//! in thousandths of a byte.
use serde_json::Value;

/// `text` in thousandths of its unit, rounded up; `None` when it is not a quantity.
pub fn milli_value(text: &str) -> Option<i128> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let (mantissa, exponent) = match suffix.strip_prefix(['e', 'E']) {
        Some(exp) => (number, exp.parse::<i32>().ok()?),
        None => (number, 0),
    };
    let (multiplier, exponent) = if suffix.starts_with(['e', 'E']) {
        (1, exponent)
    } else {
        match suffix {
            "" => (1, 0),
            "n" => (1, -9),
            "u" => (1, -6),
            "m" => (1, -3),
            "k" => (1, 3),
            "M" => (1, 6),
            "G" => (1, 9),
            "T" => (1, 12),
            "P" => (1, 15),
            "E" => (1, 18),
            "Ki" => (1i128 << 10, 0),
            "Mi" => (1i128 << 20, 0),
            "Gi" => (1i128 << 30, 0),
            "Ti" => (1i128 << 40, 0),
            "Pi" => (1i128 << 50, 0),
            "Ei" => (1i128 << 60, 0),
            _ => return None,
        }
    };
    let negative = mantissa.starts_with('-');
    let digits = mantissa.trim_start_matches(['+', '-']);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    // value = int(whole fraction) * 10^(exponent + 3 - len(fraction)) * multiplier
    let mut scaled: i128 = 0;
    for c in whole.chars().chain(fraction.chars()) {
        scaled = scaled
            .checked_mul(10)?
            .checked_add(i128::from(c.to_digit(10)?))?;
    }
    let shift = exponent + 3 - i32::try_from(fraction.len()).ok()?;
    let mut value = scaled.checked_mul(multiplier)?;
    if shift >= 0 {
        value = value.checked_mul(10i128.checked_pow(u32::try_from(shift).ok()?)?)?;
    } else {
        let divisor = 10i128.checked_pow(u32::try_from(-shift).ok()?)?;
        value = (value + divisor - 1) / divisor;
    }
    Some(if negative { -value } else { value })
}

/// A quantity field (a string, or a bare number as YAML may leave it) in thousandths.
pub fn milli_of(value: &Value) -> Option<i128> {
    match value {
        Value::String(s) => milli_value(s),
        Value::Number(n) => milli_value(&n.to_string()),
        _ => None,
    }
}

/// Millicores of a cpu quantity (`0` when unreadable).
pub fn millicores(value: Option<&Value>) -> i64 {
    value
        .and_then(milli_of)
        .and_then(|m| i64::try_from(m).ok())
        .unwrap_or(0)
}

/// Whole units of a quantity such as memory or pods, rounded up (`0` when unreadable).
pub fn units(value: Option<&Value>) -> i64 {
    value
        .and_then(milli_of)
        .map(|m| (m + 999).div_euclid(1000))
        .and_then(|m| i64::try_from(m).ok())
        .unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities_read_as_kubernetes_reads_them() {
        assert_eq!(milli_value("100m"), Some(100));
        assert_eq!(milli_value("1"), Some(1000));
        assert_eq!(milli_value("0.5"), Some(500));
        assert_eq!(milli_value("2.25"), Some(2250));
        assert_eq!(milli_value("128Mi"), Some(128 * 1024 * 1024 * 1000));
        assert_eq!(milli_value("1Gi"), Some(1024 * 1024 * 1024 * 1000));
        assert_eq!(milli_value("1e3"), Some(1_000_000));
        assert_eq!(milli_value("500M"), Some(500_000_000_000));
        assert_eq!(milli_value("1.5Gi"), Some(1536 * 1024 * 1024 * 1000));
        assert_eq!(milli_value("1n"), Some(1), "rounded up");
        assert_eq!(milli_value("lots"), None);
        assert_eq!(milli_value(""), None);
        assert_eq!(millicores(Some(&json!("250m"))), 250);
        assert_eq!(millicores(Some(&json!(2))), 2000);
        assert_eq!(units(Some(&json!("8148452Ki"))), 8_148_452 * 1024);
        assert_eq!(units(Some(&json!("110"))), 110);
        assert_eq!(units(None), 0);
    }
}
