//! Ids from URLs, checked against the shapes the coordinator makes
//! (`arena_coordinator::service` derives them: a tournament is `t-` and 12
//! lowercase hex digits, a match `TOURNAMENT:ROUND:INDEX`) before anything
//! is looked up, so a malformed one is a 400 and never reaches the store.

use crate::error::WebError;

/// Hex digits in a tournament id after `t-`.
const TOURNAMENT_HEX_DIGITS: usize = 12;

/// A tournament id of the coordinator's shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TournamentId(String);

/// A match id of the coordinator's shape, with its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchId {
    id: String,
    tournament: TournamentId,
}

impl TournamentId {
    pub fn parse(raw: &str) -> Result<TournamentId, WebError> {
        let valid = raw.strip_prefix("t-").is_some_and(|hex| {
            hex.len() == TOURNAMENT_HEX_DIGITS
                && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        });
        if valid {
            Ok(TournamentId(raw.to_owned()))
        } else {
            Err(WebError::BadRequest(format!(
                "{:?} is not a tournament id (t- and 12 hex digits)",
                shorten(raw)
            )))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl MatchId {
    pub fn parse(raw: &str) -> Result<MatchId, WebError> {
        let bad = || {
            WebError::BadRequest(format!(
                "{:?} is not a match id (TOURNAMENT:ROUND:INDEX)",
                shorten(raw)
            ))
        };
        let mut parts = raw.rsplitn(3, ':');
        let (Some(index), Some(round), Some(tournament)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if !is_number(index) || !is_number(round) {
            return Err(bad());
        }
        let tournament = TournamentId::parse(tournament).map_err(|_| bad())?;
        Ok(MatchId {
            id: raw.to_owned(),
            tournament,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.id
    }

    pub fn tournament(&self) -> &TournamentId {
        &self.tournament
    }
}

/// A decimal the coordinator could have written: digits only, no sign,
/// within `u32`.
fn is_number(part: &str) -> bool {
    !part.is_empty()
        && part.len() <= 10
        && part.bytes().all(|b| b.is_ascii_digit())
        && part.parse::<u32>().is_ok()
}

/// At most 40 characters of an id for an error message.
fn shorten(raw: &str) -> String {
    raw.chars().take(40).collect()
}

/// Path parameters whose rejection (a segment that is not UTF-8 once
/// percent-decoded, say) is this crate's 400 page rather than axum's
/// plain-text one.
pub struct PathParams<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for PathParams<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned + Send,
{
    type Rejection = WebError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, WebError> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(PathParams(value)),
            Err(rejection) => Err(WebError::BadRequest(rejection.body_text())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tournament_ids_are_t_and_twelve_hex_digits() {
        assert!(TournamentId::parse("t-0123456789ab").is_ok());
        for bad in [
            "",
            "t-",
            "t-0123456789a",
            "t-0123456789abc",
            "t-0123456789AB",
            "x-0123456789ab",
            "t-01234567890g",
        ] {
            assert!(TournamentId::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn match_ids_name_their_tournament() {
        let id = MatchId::parse("t-0123456789ab:2:17").unwrap();
        assert_eq!(id.tournament().as_str(), "t-0123456789ab");
        for bad in [
            "t-0123456789ab",
            "t-0123456789ab:2",
            "t-0123456789ab:x:1",
            "t-0123456789ab:1:",
            "t-0123456789ab:-1:2",
            "t-0123456789ab:1:99999999999",
            "t-bad:1:2",
            ":1:2",
        ] {
            assert!(MatchId::parse(bad).is_err(), "{bad:?}");
        }
    }
}
