//! Submission archives by content hash, and the entrant tokens that
//! unlock a submission's bot logs.

use super::MemoryStore;
use crate::store::check_submission_hash;
use crate::store::error::Result;

impl MemoryStore {
    /// See [`Store::put_submission`](crate::store::Store::put_submission).
    pub async fn put_submission(&self, hash: &str, bytes: Vec<u8>) -> Result<()> {
        check_submission_hash(hash, &bytes)?;
        let mut state = self.lock();
        if !state.submissions.contains_key(hash) {
            state.submissions.insert(hash.to_owned(), bytes);
        }
        Ok(())
    }

    /// See [`Store::get_submission`](crate::store::Store::get_submission).
    pub async fn get_submission(&self, hash: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.lock().submissions.get(hash).cloned())
    }

    /// See [`Store::has_submission`](crate::store::Store::has_submission).
    pub async fn has_submission(&self, hash: &str) -> Result<bool> {
        Ok(self.lock().submissions.contains_key(hash))
    }

    /// See [`Store::put_entrant_token`](crate::store::Store::put_entrant_token).
    pub async fn put_entrant_token(&self, digest: &str, submission: &str) -> Result<()> {
        self.lock()
            .entrant_tokens
            .insert(digest.to_owned(), submission.to_owned());
        Ok(())
    }

    /// See [`Store::entrant_token`](crate::store::Store::entrant_token).
    pub async fn entrant_token(&self, digest: &str) -> Result<Option<String>> {
        Ok(self.lock().entrant_tokens.get(digest).cloned())
    }
}
