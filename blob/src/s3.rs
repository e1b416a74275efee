//! The S3 backend: one object per blob in a bucket, through `object_store`.
//!
//! A blob `abcdef…` is the object `PREFIX/abcdef…` (no fan-out: S3 keys are
//! flat). Each put uploads the object again, even when it exists: S3 has no
//! way to refresh an object's Last-Modified without rewriting it, and
//! retention sweeps by Last-Modified. The bytes are identical each time, so
//! the content is still stored once.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};

use crate::codec::{self, MAX_STORED_BYTES};
use crate::error::{BlobError, Result};
use crate::id::{blob_id, check_id, is_valid_id};
use crate::location::{S3Credentials, S3Location};

const ACCESS_KEY_ENV: &str = "AWS_ACCESS_KEY_ID";
const SECRET_KEY_ENV: &str = "AWS_SECRET_ACCESS_KEY";
const SESSION_TOKEN_ENV: &str = "AWS_SESSION_TOKEN";

/// Retries for transient server errors, kept short so that a coordinator
/// whose blob store is down says so within half a minute.
const MAX_RETRIES: usize = 3;
const RETRY_TIMEOUT: Duration = Duration::from_secs(30);

/// Blobs in a bucket on an S3-compatible server. Clones share the client.
#[derive(Clone, Debug)]
pub struct S3Blobs {
    /// The client, bound to the bucket.
    client: Arc<AmazonS3>,
    /// Where the store is, for `describe` (it holds no secret in `Debug`).
    location: S3Location,
}

impl S3Blobs {
    /// A client for `location`. Credentials come from the location, or else
    /// from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN
    /// if set). Nothing is sent until the first request.
    pub fn open(location: S3Location) -> Result<S3Blobs> {
        install_crypto_provider();
        let mut location = location;
        let credentials = match location.credentials.take() {
            Some(credentials) => credentials,
            None => credentials_from_env().ok_or_else(|| BlobError::InvalidLocation {
                location: describe_location(&location),
                reason: format!(
                    "no credentials: set {ACCESS_KEY_ENV} and {SECRET_KEY_ENV} \
                     (or access_key_id= and secret_access_key= in the location)"
                ),
            })?,
        };
        let mut builder = AmazonS3Builder::new()
            .with_bucket_name(&location.bucket)
            .with_region(&location.region)
            .with_allow_http(location.allow_http)
            .with_access_key_id(credentials.access_key_id)
            .with_secret_access_key(credentials.secret_access_key)
            .with_retry(RetryConfig {
                max_retries: MAX_RETRIES,
                retry_timeout: RETRY_TIMEOUT,
                ..RetryConfig::default()
            });
        if let Ok(token) = std::env::var(SESSION_TOKEN_ENV) {
            builder = builder.with_token(token);
        }
        if let Some(endpoint) = &location.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        let client = builder.build().map_err(|source| BlobError::S3 {
            action: "configure the client",
            source,
        })?;
        Ok(S3Blobs {
            client: Arc::new(client),
            location,
        })
    }

    /// Where the store is (credentials removed).
    pub fn location(&self) -> &S3Location {
        &self.location
    }

    /// The object key of the blob with a (valid) id.
    pub fn key_of(&self, id: &str) -> Result<ObjectPath> {
        check_id(id)?;
        Ok(if self.location.prefix.is_empty() {
            ObjectPath::from(id)
        } else {
            ObjectPath::from(format!("{}/{id}", self.location.prefix))
        })
    }

    /// Stores `bytes` compressed and returns the id.
    pub async fn put(&self, bytes: &[u8]) -> Result<String> {
        let content = bytes.to_vec();
        let (id, stored) = tokio::task::spawn_blocking(move || {
            codec::encode(&content).map(|stored| (blob_id(&content), stored))
        })
        .await??;
        let key = self.key_of(&id)?;
        self.client
            .put(&key, PutPayload::from(stored))
            .await
            .map_err(s3_error("put"))?;
        Ok(id)
    }

    /// The content of blob `id`, checked against the id.
    pub async fn get(&self, id: &str) -> Result<Option<Vec<u8>>> {
        let key = self.key_of(id)?;
        let object = match self.client.get(&key).await {
            Ok(object) => object,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(source) => return Err(s3_error("get")(source)),
        };
        // Refuse before downloading anything no blob of ours could be.
        if object.meta.size > MAX_STORED_BYTES {
            return Err(BlobError::Corrupt {
                id: id.to_owned(),
                reason: format!("stored object is {} bytes", object.meta.size),
            });
        }
        let stored = object.bytes().await.map_err(s3_error("download"))?;
        let id = id.to_owned();
        tokio::task::spawn_blocking(move || codec::decode(&id, &stored).map(Some)).await?
    }

    /// When blob `id` was stored or last re-put (the server's Last-Modified,
    /// to the second); `None` when absent.
    pub async fn stored_at(&self, id: &str) -> Result<Option<SystemTime>> {
        let key = self.key_of(id)?;
        match self.client.head(&key).await {
            Ok(meta) => Ok(Some(last_modified(&meta))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(source) => Err(s3_error("head")(source)),
        }
    }

    /// Deletes blob `id`; `false` when it was not there. S3's delete succeeds
    /// either way, so existence is asked first.
    pub async fn delete(&self, id: &str) -> Result<bool> {
        if self.stored_at(id).await?.is_none() {
            return Ok(false);
        }
        let key = self.key_of(id)?;
        self.client.delete(&key).await.map_err(s3_error("delete"))?;
        Ok(true)
    }

    /// Deletes every blob whose Last-Modified is before `cutoff`; returns how
    /// many. Objects under the prefix that are not blobs are left alone.
    pub async fn sweep(&self, cutoff: SystemTime) -> Result<usize> {
        let prefix = (!self.location.prefix.is_empty())
            .then(|| ObjectPath::from(self.location.prefix.as_str()));
        // List fully first, then delete, so deletions cannot disturb paging.
        let listed: Vec<_> = self
            .client
            .list(prefix.as_ref())
            .try_collect()
            .await
            .map_err(s3_error("list"))?;
        let mut deleted = 0;
        for meta in listed {
            let Some(id) = meta.location.filename().filter(|name| is_valid_id(name)) else {
                continue;
            };
            // The listing is recursive: only keys directly under the prefix.
            if self.key_of(id)? != meta.location || last_modified(&meta) >= cutoff {
                continue;
            }
            match self.client.delete(&meta.location).await {
                Ok(()) => deleted += 1,
                Err(object_store::Error::NotFound { .. }) => {}
                Err(source) => return Err(s3_error("delete")(source)),
            }
        }
        Ok(deleted)
    }

    /// A description for logs.
    pub fn describe(&self) -> String {
        describe_location(&self.location)
    }
}

/// Makes ring rustls's process-wide crypto provider unless one is already
/// installed (then that one is used). reqwest is built without a provider
/// of its own, so that Arena links one TLS crypto library (ring, as tonic
/// does) and rustls never sees two it cannot choose between.
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another installer is fine: a provider is set.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

fn credentials_from_env() -> Option<S3Credentials> {
    let access_key_id = std::env::var(ACCESS_KEY_ENV)
        .ok()
        .filter(|v| !v.is_empty())?;
    let secret_access_key = std::env::var(SECRET_KEY_ENV)
        .ok()
        .filter(|v| !v.is_empty())?;
    Some(S3Credentials {
        access_key_id,
        secret_access_key,
    })
}

/// "s3 bucket B [prefix P] at ENDPOINT" (or "in AWS region R"); no secrets.
pub(crate) fn describe_location(location: &S3Location) -> String {
    let mut text = format!("s3 bucket {}", location.bucket);
    if !location.prefix.is_empty() {
        text.push_str(&format!(" prefix {}", location.prefix));
    }
    match &location.endpoint {
        Some(endpoint) => text.push_str(&format!(" at {endpoint}")),
        None => text.push_str(&format!(" in AWS region {}", location.region)),
    }
    text
}

/// An object's Last-Modified as a `SystemTime`, in whole seconds: HEAD
/// answers to the second while some servers list with milliseconds, and
/// `stored_at` and `sweep` must agree. Times before 1970 (which S3 does not
/// produce) become the epoch.
fn last_modified(meta: &ObjectMeta) -> SystemTime {
    let seconds = u64::try_from(meta.last_modified.timestamp()).unwrap_or_default();
    SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
}

fn s3_error(action: &'static str) -> impl FnOnce(object_store::Error) -> BlobError {
    move |source| BlobError::S3 { action, source }
}
