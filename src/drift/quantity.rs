//! Kubernetes resource quantities (`500m`, `1Gi`, `1e3`), parsed for comparison by value.
//!
//! A quantity is kept as an exact fraction `sign · mantissa · 10^exp10 · 2^exp2` so that
//! `0.5` = `500m`, `1Gi` = `1024Mi` and `1e3` = `1k` compare equal without floating-point error.
use serde_json::Value;

/// A parsed quantity: `negative`, decimal digits as an integer, a power of ten and a power of two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    mantissa: u128,
    exp10: i32,
    exp2: u32,
}

impl Quantity {
    /// Parses the Kubernetes quantity grammar: a signed decimal number, then a binary suffix
    /// (`Ki`…`Ei`), a decimal SI suffix (`n u m k M G T P E`) or a decimal exponent (`e3`, `E-2`).
    pub fn parse(text: &str) -> Option<Quantity> {
        let text = text.trim();
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
        let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        if (int_part.is_empty() && frac_part.is_empty())
            || !all_digits(int_part)
            || !all_digits(frac_part)
        {
            return None;
        }
        let mut mantissa: u128 = 0;
        for digit in int_part.bytes().chain(frac_part.bytes()) {
            mantissa = mantissa
                .checked_mul(10)?
                .checked_add(u128::from(digit - b'0'))?;
        }
        let mut exp10 = -i32::try_from(frac_part.len()).ok()?;
        let mut exp2 = 0;
        match suffix {
            "" => {}
            "Ki" => exp2 = 10,
            "Mi" => exp2 = 20,
            "Gi" => exp2 = 30,
            "Ti" => exp2 = 40,
            "Pi" => exp2 = 50,
            "Ei" => exp2 = 60,
            "n" => exp10 -= 9,
            "u" => exp10 -= 6,
            "m" => exp10 -= 3,
            "k" => exp10 += 3,
            "M" => exp10 += 6,
            "G" => exp10 += 9,
            "T" => exp10 += 12,
            "P" => exp10 += 15,
            "E" => exp10 += 18,
            other => {
                // `e3` / `E-2`: a decimal exponent (a lone `E` is exa, handled above).
                let exponent = other.strip_prefix(['e', 'E'])?;
                exp10 = exp10.checked_add(exponent.parse::<i32>().ok()?)?;
            }
        }
        Some(Quantity {
            negative: negative && mantissa != 0,
            mantissa,
            exp10,
            exp2,
        })
    }

    /// Parses a JSON value as written in YAML: a string (`"500m"`) or a number (`0.5`, `2`).
    pub fn from_value(value: &Value) -> Option<Quantity> {
        match value {
            Value::String(text) => Quantity::parse(text),
            Value::Number(number) => Quantity::parse(&number.to_string()),
            _ => None,
        }
    }

    /// The value as `numerator / denominator`, both exact, or `None` when it does not fit.
    fn fraction(&self) -> Option<(u128, u128)> {
        let mut numerator = self.mantissa.checked_mul(1u128.checked_shl(self.exp2)?)?;
        let mut denominator = 1u128;
        let power = 10u128.checked_pow(self.exp10.unsigned_abs())?;
        if self.exp10 >= 0 {
            numerator = numerator.checked_mul(power)?;
        } else {
            denominator = power;
        }
        Some((numerator, denominator))
    }

    /// An approximation, used only when the exact fraction overflows (absurdly large quantities).
    fn approximate(&self) -> f64 {
        let sign = if self.negative { -1.0 } else { 1.0 };
        sign * (self.mantissa as f64) * 10f64.powi(self.exp10) * 2f64.powi(self.exp2 as i32)
    }

    /// True when both quantities denote the same amount.
    pub fn same_amount(&self, other: &Quantity) -> bool {
        if self.negative != other.negative {
            return false;
        }
        if let (Some((n1, d1)), Some((n2, d2))) = (self.fraction(), other.fraction())
            && let (Some(left), Some(right)) = (n1.checked_mul(d2), n2.checked_mul(d1))
        {
            return left == right;
        }
        let (a, b) = (self.approximate(), other.approximate());
        (a - b).abs() <= f64::EPSILON * a.abs().max(b.abs())
    }
}

/// True when `a` and `b` are quantities of the same amount (either may be a string or a number).
pub fn same_quantity(a: &Value, b: &Value) -> bool {
    match (Quantity::from_value(a), Quantity::from_value(b)) {
        (Some(a), Some(b)) => a.same_amount(&b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equivalent_spellings_are_the_same_amount() {
        let table = [
            (json!("500m"), json!(0.5)),
            (json!("500m"), json!("0.5")),
            (json!("1Gi"), json!("1024Mi")),
            (json!("1e3"), json!("1k")),
            (json!("1E3"), json!("1000")),
            (json!("1"), json!(1)),
            (json!("1000m"), json!("1")),
            (json!("129M"), json!("129e6")),
            (json!("123Mi"), json!("128974848")),
            (json!("0"), json!("0m")),
            (json!("-0"), json!("0")),
            (json!("1.5Gi"), json!("1536Mi")),
            (json!("2"), json!(2.0)),
            (json!("100n"), json!("0.1u")),
            (json!("1Ei"), json!("1024Pi")),
        ];
        for (a, b) in table {
            assert!(same_quantity(&a, &b), "{a} should equal {b}");
            assert!(same_quantity(&b, &a), "{b} should equal {a}");
        }
    }

    #[test]
    fn different_amounts_differ() {
        let table = [
            (json!("500m"), json!("0.6")),
            (json!("1Gi"), json!("1G")),
            (json!("1E"), json!("1e1")),
            (json!("256Mi"), json!("512Mi")),
            (json!("-1"), json!("1")),
            (json!("1m"), json!("1M")),
            (json!("128974848"), json!("129e6")),
        ];
        for (a, b) in table {
            assert!(!same_quantity(&a, &b), "{a} should differ from {b}");
        }
    }

    #[test]
    fn text_that_is_not_a_quantity_is_refused() {
        for text in ["", "abc", "1x", "1.2.3", "Mi", "1e", "--1", "1 Gi"] {
            assert_eq!(Quantity::parse(text), None, "{text:?}");
        }
        assert!(!same_quantity(&json!("abc"), &json!("abc")));
    }
}
