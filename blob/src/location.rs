//! Parsing a blob store's location string, with no I/O: a plain path or
//! `file:///abs/dir` for the filesystem, `s3://BUCKET[/PREFIX]?…` for S3.

use std::fmt;
use std::path::PathBuf;

use url::Url;

use crate::error::{BlobError, Result};

/// The S3 region used when a location names none.
pub const DEFAULT_REGION: &str = "us-east-1";

/// Query keys whose values must never appear in errors or logs.
const SECRET_KEYS: [&str; 1] = ["secret_access_key"];

/// Where a blob store lives, parsed but not yet opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A directory on the local filesystem.
    Fs(PathBuf),
    /// A bucket (and key prefix) on an S3-compatible server.
    S3(S3Location),
}

/// An S3 bucket and how to reach it. Its `Debug` hides the secret key.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Location {
    /// The bucket's name.
    pub bucket: String,
    /// The key prefix under which blobs live, without leading or trailing
    /// slashes; empty for the bucket's root.
    pub prefix: String,
    /// The server's URL, for S3-compatible servers; `None` means AWS itself.
    pub endpoint: Option<String>,
    /// The region requests are signed for.
    pub region: String,
    /// Whether a plain `http://` endpoint is allowed (tests, loopback).
    pub allow_http: bool,
    /// Credentials given in the location (tests); otherwise the environment's
    /// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY are used when opening.
    pub credentials: Option<S3Credentials>,
}

/// An access key pair. Its `Debug` shows neither key.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Credentials {
    /// The access key id (not secret, but kept out of logs anyway).
    pub access_key_id: String,
    /// The secret key.
    pub secret_access_key: String,
}

impl fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("S3Credentials(hidden)")
    }
}

impl fmt::Debug for S3Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Location")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("allow_http", &self.allow_http)
            .field("credentials", &self.credentials)
            .finish()
    }
}

impl Location {
    /// Parses a location string; see the crate docs for the forms.
    pub fn parse(location: &str) -> Result<Location> {
        let invalid = |reason: &str| BlobError::InvalidLocation {
            location: redact(location),
            reason: reason.to_owned(),
        };
        if location.trim().is_empty() {
            return Err(invalid("empty"));
        }
        let Some((scheme, _)) = location.split_once("://") else {
            return Ok(Location::Fs(PathBuf::from(location)));
        };
        match scheme {
            "file" => parse_file(location).map_err(|reason| invalid(&reason)),
            "s3" => parse_s3(location).map_err(|reason| invalid(&reason)),
            _ => Err(invalid(&format!(
                "unknown scheme {scheme:?}: use a path, file:///dir or s3://bucket"
            ))),
        }
    }
}

fn parse_file(location: &str) -> Result<Location, String> {
    let url = Url::parse(location).map_err(|error| error.to_string())?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err("a file location takes no query or fragment".to_owned());
    }
    if !matches!(url.host_str(), None | Some("") | Some("localhost")) {
        return Err("a file location must be local: file:///abs/dir".to_owned());
    }
    let path = url
        .to_file_path()
        .map_err(|()| "not an absolute local path".to_owned())?;
    Ok(Location::Fs(path))
}

fn parse_s3(location: &str) -> Result<Location, String> {
    let url = Url::parse(location).map_err(|error| error.to_string())?;
    if !url.username().is_empty() || url.password().is_some() || url.port().is_some() {
        return Err("put credentials and the server in the query, not the authority".to_owned());
    }
    if url.fragment().is_some() {
        return Err("an s3 location takes no fragment".to_owned());
    }
    let bucket = url.host_str().unwrap_or_default().to_owned();
    check_bucket(&bucket)?;
    let prefix = parse_prefix(url.path())?;

    let mut endpoint = None;
    let mut region = None;
    let mut allow_http = None;
    let mut access_key_id = None;
    let mut secret_access_key = None;
    for (key, value) in url.query_pairs() {
        let slot = match key.as_ref() {
            "endpoint" => &mut endpoint,
            "region" => &mut region,
            "allow_http" => &mut allow_http,
            "access_key_id" => &mut access_key_id,
            "secret_access_key" => &mut secret_access_key,
            other => return Err(format!("unknown query key {other:?}")),
        };
        if slot.replace(value.into_owned()).is_some() {
            return Err(format!("query key {key:?} given twice"));
        }
    }

    let allow_http = match allow_http.as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => return Err(format!("allow_http must be true or false, not {other:?}")),
    };
    if let Some(endpoint) = &endpoint {
        let endpoint_url = Url::parse(endpoint).map_err(|error| format!("endpoint: {error}"))?;
        match endpoint_url.scheme() {
            "https" => {}
            "http" if allow_http => {}
            "http" => return Err("an http:// endpoint needs allow_http=true".to_owned()),
            other => return Err(format!("endpoint scheme {other:?} is not http(s)")),
        }
        if endpoint_url.host_str().is_none_or(str::is_empty) {
            return Err("endpoint has no host".to_owned());
        }
    }
    let region = region.unwrap_or_else(|| DEFAULT_REGION.to_owned());
    if region.is_empty() {
        return Err("region is empty".to_owned());
    }
    let credentials = match (access_key_id, secret_access_key) {
        (None, None) => None,
        (Some(access_key_id), Some(secret_access_key))
            if !access_key_id.is_empty() && !secret_access_key.is_empty() =>
        {
            Some(S3Credentials {
                access_key_id,
                secret_access_key,
            })
        }
        _ => {
            return Err(
                "access_key_id and secret_access_key go together, both non-empty".to_owned(),
            );
        }
    };
    Ok(Location::S3(S3Location {
        bucket,
        prefix,
        endpoint,
        region,
        allow_http,
        credentials,
    }))
}

/// S3's bucket naming rules, loosely: 3–63 of lowercase letters, digits,
/// dots and hyphens, starting and ending with a letter or digit.
fn check_bucket(bucket: &str) -> Result<(), String> {
    let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-';
    let alphanumeric =
        |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let bytes = bucket.as_bytes();
    if !(3..=63).contains(&bytes.len())
        || !bytes.iter().copied().all(allowed)
        || !alphanumeric(bytes.first())
        || !alphanumeric(bytes.last())
    {
        return Err(format!("{bucket:?} is not a valid bucket name"));
    }
    Ok(())
}

/// The URL path as a key prefix: segments joined by '/', none empty or a
/// dot segment, so the prefix cannot be ambiguous or climb.
fn parse_prefix(path: &str) -> Result<String, String> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    for segment in trimmed.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." || segment.contains('%') {
            return Err(format!(
                "prefix {trimmed:?} has an empty, dot or escaped segment"
            ));
        }
    }
    Ok(trimmed.to_owned())
}

/// `location` with the values of secret query keys blanked, for errors.
fn redact(location: &str) -> String {
    let Some((base, query)) = location.split_once('?') else {
        return location.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if SECRET_KEYS.contains(&key) => format!("{key}=…"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s3(location: &str) -> S3Location {
        match Location::parse(location) {
            Ok(Location::S3(s3)) => s3,
            other => panic!("{location:?} parsed as {other:?}"),
        }
    }

    fn reason(location: &str) -> String {
        match Location::parse(location) {
            Err(BlobError::InvalidLocation { reason, .. }) => reason,
            other => panic!("{location:?} was accepted as {other:?}"),
        }
    }

    #[test]
    fn filesystem_locations() {
        for (text, path) in [
            ("/var/lib/arena/blobs", "/var/lib/arena/blobs"),
            ("relative/blobs", "relative/blobs"),
            ("file:///var/lib/arena/blobs", "/var/lib/arena/blobs"),
            ("file://localhost/srv/blobs/", "/srv/blobs/"),
            ("file:///srv/with%20space", "/srv/with space"),
        ] {
            assert_eq!(
                Location::parse(text).unwrap(),
                Location::Fs(PathBuf::from(path))
            );
        }
    }

    #[test]
    fn s3_locations() {
        let minimal = s3("s3://replays");
        assert_eq!(minimal.bucket, "replays");
        assert_eq!(minimal.prefix, "");
        assert_eq!(minimal.endpoint, None);
        assert_eq!(minimal.region, DEFAULT_REGION);
        assert!(!minimal.allow_http);
        assert_eq!(minimal.credentials, None);

        let full = s3(
            "s3://arena-blobs/season-1/replays/?endpoint=http://127.0.0.1:9000\
             &region=eu-west-1&allow_http=true&access_key_id=AK&secret_access_key=SK",
        );
        assert_eq!(full.bucket, "arena-blobs");
        assert_eq!(full.prefix, "season-1/replays");
        assert_eq!(full.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(full.region, "eu-west-1");
        assert!(full.allow_http);
        let credentials = full.credentials.clone().unwrap();
        assert_eq!(credentials.access_key_id, "AK");
        assert_eq!(credentials.secret_access_key, "SK");
        assert!(
            !format!("{full:?}").contains("SK"),
            "Debug shows the secret"
        );

        let https = s3("s3://b12?endpoint=https://s3.example.test");
        assert_eq!(https.endpoint.as_deref(), Some("https://s3.example.test"));
    }

    #[test]
    fn malformed_locations_are_refused() {
        for (text, expected) in [
            ("", "empty"),
            ("  ", "empty"),
            ("http://example.test/blobs", "unknown scheme"),
            ("S3://bucket", "unknown scheme"),
            ("file://otherhost/dir", "must be local"),
            ("file:///dir?x=1", "no query"),
            ("s3://", "not a valid bucket"),
            ("s3://ab", "not a valid bucket"),
            ("s3://Upper", "not a valid bucket"),
            ("s3://-bucket", "not a valid bucket"),
            ("s3://bucket_x", "not a valid bucket"),
            ("s3://user:pw@bucket", "authority"),
            ("s3://bucket:9000", "authority"),
            ("s3://bucket/a//b", "empty, dot or escaped"),
            ("s3://bucket/a/b%2Fc", "empty, dot or escaped"),
            ("s3://bucket#frag", "no fragment"),
            ("s3://bucket?colour=blue", "unknown query key"),
            ("s3://bucket?region=a&region=b", "given twice"),
            ("s3://bucket?region=", "region is empty"),
            ("s3://bucket?allow_http=yes", "allow_http must be"),
            (
                "s3://bucket?endpoint=http://127.0.0.1:1",
                "needs allow_http=true",
            ),
            (
                "s3://bucket?endpoint=ftp://h&allow_http=true",
                "not http(s)",
            ),
            ("s3://bucket?endpoint=not%20a%20url", "endpoint"),
            ("s3://bucket?access_key_id=AK", "go together"),
            ("s3://bucket?secret_access_key=SK", "go together"),
            (
                "s3://bucket?access_key_id=&secret_access_key=SK",
                "go together",
            ),
        ] {
            let reason = reason(text);
            assert!(
                reason.contains(expected),
                "{text:?}: {reason:?} lacks {expected:?}"
            );
        }
    }

    #[test]
    fn errors_never_show_the_secret_key() {
        let error = Location::parse("s3://bucket?access_key_id=AK&secret_access_key=HUSH&x=1")
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown query key"), "{error}");
        assert!(!error.contains("HUSH"), "{error}");
    }
}
