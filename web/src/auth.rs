//! Who is asking. A request carries a token in the `arena_token` cookie
//! (set by `POST /login`) or in `Authorization: Bearer TOKEN`; never in the
//! URL (a query string is not read at all). An admin token (one of
//! [`WebOptions::admin_tokens`](crate::WebOptions), compared in constant
//! time) makes the [`Viewer`] an organiser; an entrant token (resolved by the
//! coordinator) the owner of one submission; anything else, or nothing, a
//! member of the public. Also the CSRF check of every POST.
//!
//! The [`Viewer`] type itself lives in `viewer`, so `html` (the nav) and
//! `error` (the error pages) need it without depending on this module,
//! whose failures are [`WebError`]s: `auth` → `error` → `html` → `viewer`.

use std::collections::BTreeSet;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::error::WebError;
use crate::source;
use crate::viewer::Viewer;

/// The cookie the login form sets.
pub const TOKEN_COOKIE: &str = "arena_token";

/// What a token makes its bearer.
pub async fn resolve(state: &AppState, token: &str) -> Result<Viewer, WebError> {
    if is_admin_token(&state.admin_tokens, token) {
        return Ok(Viewer::Admin);
    }
    if token.is_empty() {
        return Ok(Viewer::Public);
    }
    Ok(
        match source::entrant_of_token(&state.coordinator, token).await? {
            Some(submission) => Viewer::Entrant { submission },
            None => Viewer::Public,
        },
    )
}

/// Whether `token` is one of `admin_tokens`. Every token is compared in
/// constant time and all of them always are, so timing tells nothing about
/// which bytes matched.
fn is_admin_token(admin_tokens: &BTreeSet<String>, token: &str) -> bool {
    let mut found = subtle::Choice::from(0);
    for admin in admin_tokens {
        // An empty configured token would let an empty cookie in.
        if !admin.is_empty() {
            found |= admin.as_bytes().ct_eq(token.as_bytes());
        }
    }
    bool::from(found)
}

/// The token a request carries: the bearer token first, then the cookie.
pub fn request_token(headers: &HeaderMap) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    if let Some(token) = bearer {
        return Some(token.to_owned());
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == TOKEN_COOKIE)
        .map(|(_, value)| value.trim().to_owned())
}

/// Whether a token can be stored in a cookie as it is: visible ASCII
/// without the characters cookie values may not hold.
pub fn is_cookie_safe(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= 4096
        && token
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'))
}

/// The CSRF check of every POST: a browser sends `Origin` with a form post,
/// and it must be this very host. Requests without `Origin` (scripts,
/// older browsers' same-origin posts) pass: the `SameSite=Strict` cookie
/// already keeps other sites' forms from carrying a session.
pub fn check_origin(headers: &HeaderMap) -> Result<(), WebError> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let refused = || WebError::Forbidden("the form was posted from another site".to_owned());
    let origin = origin.to_str().map_err(|_| refused())?;
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(refused)?;
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .ok_or_else(refused)?;
    if origin_host.eq_ignore_ascii_case(host) {
        Ok(())
    } else {
        Err(refused())
    }
}

impl FromRequestParts<AppState> for Viewer {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Viewer, WebError> {
        match request_token(&parts.headers) {
            Some(token) => resolve(state, &token).await,
            None => Ok(Viewer::Public),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn admin_tokens_match_whole_and_never_empty() {
        let tokens: BTreeSet<String> = ["secret".to_owned(), String::new()].into();
        assert!(is_admin_token(&tokens, "secret"));
        assert!(!is_admin_token(&tokens, "secre"));
        assert!(!is_admin_token(&tokens, "secrets"));
        assert!(!is_admin_token(&tokens, ""));
    }

    #[test]
    fn the_token_comes_from_bearer_or_cookie() {
        assert_eq!(
            request_token(&headers(&[(header::AUTHORIZATION, "Bearer abc")])),
            Some("abc".into())
        );
        assert_eq!(
            request_token(&headers(&[(header::COOKIE, "theme=dark; arena_token=xyz")])),
            Some("xyz".into())
        );
        assert_eq!(
            request_token(&headers(&[(header::COOKIE, "arena_tokenx=1")])),
            None
        );
        assert_eq!(
            request_token(&headers(&[(header::AUTHORIZATION, "Basic abc")])),
            None
        );
    }

    #[test]
    fn origins_must_be_this_host() {
        assert!(check_origin(&headers(&[])).is_ok());
        let same = [
            (header::ORIGIN, "http://127.0.0.1:80"),
            (header::HOST, "127.0.0.1:80"),
        ];
        assert!(check_origin(&headers(&same)).is_ok());
        let other = [
            (header::ORIGIN, "https://evil.example"),
            (header::HOST, "127.0.0.1:80"),
        ];
        assert!(check_origin(&headers(&other)).is_err());
        assert!(check_origin(&headers(&[(header::ORIGIN, "null"), (header::HOST, "a")])).is_err());
        assert!(check_origin(&headers(&[(header::ORIGIN, "http://a")])).is_err());
    }
}
