//! How long blobs are kept.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use crate::error::BlobError;

/// How long blobs are kept after they were stored (or last re-put); `None`
/// keeps them forever. Parsed from "30d", "12h", "90m", "45s" or "forever".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// The age past which a blob may be swept.
    pub max_age: Option<Duration>,
}

impl Retention {
    /// Keeps everything.
    pub const FOREVER: Retention = Retention { max_age: None };

    /// The cutoff to pass to `BlobStore::sweep` at `now`: blobs stored
    /// before it are past retention. `None` when nothing expires (forever, or
    /// a max age too large for the platform's clock to subtract).
    pub fn cutoff(&self, now: SystemTime) -> Option<SystemTime> {
        now.checked_sub(self.max_age?)
    }
}

impl FromStr for Retention {
    type Err = BlobError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: &str| BlobError::InvalidRetention {
            input: input.to_owned(),
            reason: reason.to_owned(),
        };
        let text = input.trim();
        if text.eq_ignore_ascii_case("forever") {
            return Ok(Retention::FOREVER);
        }
        let Some(unit) = text.chars().last() else {
            return Err(invalid("empty; use e.g. \"30d\", \"12h\" or \"forever\""));
        };
        let seconds_per_unit: u64 = match unit {
            's' => 1,
            'm' => 60,
            'h' => 60 * 60,
            'd' => 24 * 60 * 60,
            _ => return Err(invalid("needs a unit: s, m, h or d (or \"forever\")")),
        };
        let digits = &text[..text.len() - unit.len_utf8()];
        // `u64::from_str` would accept a leading '+'; only plain digits here.
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid("expected a whole number before the unit"));
        }
        let count: u64 = digits.parse().map_err(|_| invalid("number is too large"))?;
        if count == 0 {
            return Err(invalid(
                "must be more than zero (use \"forever\" to keep all)",
            ));
        }
        let seconds = count
            .checked_mul(seconds_per_unit)
            .ok_or_else(|| invalid("number is too large"))?;
        Ok(Retention {
            max_age: Some(Duration::from_secs(seconds)),
        })
    }
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max_age {
            None => f.write_str("forever"),
            Some(age) => write!(f, "{}s", age.as_secs()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Retention, BlobError> {
        text.parse()
    }

    #[test]
    fn durations_and_forever() {
        let days = |n: u64| Some(Duration::from_secs(n * 86_400));
        assert_eq!(parse("30d").unwrap().max_age, days(30));
        assert_eq!(
            parse("12h").unwrap().max_age,
            Some(Duration::from_secs(12 * 3600))
        );
        assert_eq!(
            parse("90m").unwrap().max_age,
            Some(Duration::from_secs(90 * 60))
        );
        assert_eq!(parse("45s").unwrap().max_age, Some(Duration::from_secs(45)));
        assert_eq!(parse(" 7d ").unwrap().max_age, days(7));
        assert_eq!(parse("forever").unwrap(), Retention::FOREVER);
        assert_eq!(parse("Forever").unwrap(), Retention::FOREVER);
    }

    #[test]
    fn malformed_retention_is_refused() {
        for bad in [
            "",
            "   ",
            "30",
            "d",
            "30x",
            "-5d",
            "+5d",
            "1.5d",
            "0d",
            "3 d",
            "30days",
            "never",
            "99999999999999999999d",
            "18446744073709551615d",
            "日",
        ] {
            assert!(
                matches!(parse(bad), Err(BlobError::InvalidRetention { .. })),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn cutoff_is_now_minus_max_age() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let day = parse("1d").unwrap();
        assert_eq!(
            day.cutoff(now),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 - 86_400))
        );
        assert_eq!(Retention::FOREVER.cutoff(now), None);
    }
}
