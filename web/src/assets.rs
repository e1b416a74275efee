//! The files under `web/assets/`, embedded at compile time by `build.rs`
//! and served at `/assets/<path>` with their content type, an ETag and a
//! cache header.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::WebError;
use crate::ids::PathParams;

/// (path under `assets/`, contents, ETag), sorted by path.
static ASSETS: &[(&str, &[u8], &str)] = include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// How long a browser may reuse an asset without asking again. Short: the
/// names carry no version, so a new build must show within minutes; the
/// ETag makes the revalidation after that cheap.
const CACHE_CONTROL: &str = "public, max-age=300";

/// An embedded asset by its path under `assets/`.
pub fn find(path: &str) -> Option<(&'static [u8], &'static str)> {
    ASSETS
        .binary_search_by(|(name, _, _)| (*name).cmp(path))
        .ok()
        .map(|i| (ASSETS[i].1, ASSETS[i].2))
}

/// The content type for a file name, by its extension.
pub fn content_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, ext)| ext);
    match extension.to_ascii_lowercase().as_str() {
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "html" => "text/html; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "txt" => "text/plain; charset=utf-8",
        "md" => "text/markdown; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// `GET /assets/{*path}`.
pub async fn serve_asset(PathParams(path): PathParams<String>, headers: HeaderMap) -> Response {
    let Some((bytes, etag)) = find(&path) else {
        return WebError::NotFound(format!("no asset {path}")).into_response();
    };
    let cache = [
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static(CACHE_CONTROL),
        ),
        (header::ETAG, HeaderValue::from_static(etag)),
    ];
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    if unchanged {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(content_type(&path)),
        )],
        cache,
        bytes,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_holds_the_stylesheet() {
        assert!(ASSETS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(find("style.css").is_some());
        assert!(find("live.js").is_some());
        assert!(find("viewer/viewer.css").is_some());
        assert!(find("../Cargo.toml").is_none());
    }

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(
            content_type("viewer/viewer.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("style.CSS"), "text/css; charset=utf-8");
        assert_eq!(content_type("noextension"), "application/octet-stream");
    }
}
