//! What the web pages read besides the store: a finished match's replay
//! and bot logs (through the blob store), entrant tokens, and the organiser's
//! rejudge.

use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::{Coordinator, CoordinatorError, Result};
use crate::attachments::{Attachments, Slot};
use crate::domain::EntrantId;

impl Coordinator {
    /// The replay file of a finished match, if its worker sent one and it
    /// has not been swept by the retention.
    pub async fn replay(&self, match_id: &str) -> Result<Option<Vec<u8>>> {
        match self.slot(match_id).await? {
            None => Ok(None),
            Some(Slot::Legacy(bytes)) => Ok(Some(bytes)),
            Some(Slot::Manifest { replay: None, .. }) => Ok(None),
            Some(Slot::Manifest {
                replay: Some(id), ..
            }) => Ok(self.attachments.blobs.get(&id).await?),
        }
    }

    /// One seat's bot log (its stderr, capped, and its build output) of a
    /// finished match.
    pub async fn seat_log(&self, match_id: &str, seat: usize) -> Result<Option<Vec<u8>>> {
        match self.slot(match_id).await? {
            Some(Slot::Manifest { logs, .. }) => match logs.get(seat).cloned().flatten() {
                Some(id) => Ok(self.attachments.blobs.get(&id).await?),
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }

    async fn slot(&self, match_id: &str) -> Result<Option<Slot>> {
        match self.store.replay(match_id).await? {
            Some(bytes) => Ok(Some(Attachments::read_slot(bytes)?)),
            None => Ok(None),
        }
    }

    /// A fresh entrant token for `submission`: it unlocks that
    /// submission's own bot logs. Only its digest is stored.
    pub async fn issue_entrant_token(&self, submission: &str) -> Result<String> {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes).map_err(CoordinatorError::Entropy)?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.store
            .put_entrant_token(&token_digest(&token), submission)
            .await?;
        Ok(token)
    }

    /// The submission an entrant token was issued for.
    pub async fn entrant_of_token(&self, token: &str) -> Result<Option<EntrantId>> {
        if token.is_empty() || token.len() > 256 {
            return Ok(None);
        }
        Ok(self.store.entrant_token(&token_digest(token)).await?)
    }

    /// From now on nothing will play another match (an `arena run` whose
    /// workers have finished): a rejudge is refused with `reason`.
    pub fn set_unplayable(&self, reason: &str) {
        *self.unplayable.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.to_owned());
    }

    /// Why a match put back in the queue now would wait for good, if so:
    /// nothing will play again, or no live worker may lease it.
    async fn why_unplayable(&self) -> Result<Option<String>> {
        if let Some(reason) = self
            .unplayable
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Ok(Some(reason));
        }
        let alive = self
            .store
            .workers(super::now_ms(), self.alive_window_ms())
            .await?;
        let quarantined = self.store.quarantined().await?;
        if alive.iter().any(|w| !quarantined.contains(&w.id)) {
            return Ok(None);
        }
        Ok(Some(
            "no live worker is connected to play it (start one, then rejudge)".to_owned(),
        ))
    }

    /// Whether a rejudge of `match_id` could be played now: the error a
    /// rejudge would be refused with, if so, without changing anything
    /// (the pages ask this before asking to confirm).
    pub async fn rejudge_possible(&self, match_id: &str) -> Result<()> {
        match self.why_unplayable().await? {
            Some(reason) => Err(CoordinatorError::Unplayable {
                match_id: match_id.to_owned(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// An organiser's rejudge: the finished match is played again, and its
    /// result replaced when the new one lands. Refused, keeping the result,
    /// when nothing could play it.
    pub async fn rejudge(&self, match_id: &str) -> Result<()> {
        if let Some(reason) = self.why_unplayable().await? {
            return Err(CoordinatorError::Unplayable {
                match_id: match_id.to_owned(),
                reason,
            });
        }
        if self.store.rejudge(match_id).await? {
            tracing::info!(match_id, "match rejudged");
            Ok(())
        } else {
            Err(CoordinatorError::NotDone(match_id.to_owned()))
        }
    }

    /// Removes replays and logs older than the retention; how many blobs.
    /// Nothing when blobs are kept forever.
    pub async fn sweep_attachments(&self) -> Result<usize> {
        let Some(max_age) = self.attachments.retention else {
            return Ok(0);
        };
        let Some(cutoff) = SystemTime::now().checked_sub(max_age) else {
            return Ok(0);
        };
        Ok(self.attachments.blobs.sweep(cutoff).await?)
    }
}

impl Coordinator {
    /// Sweeps by the retention at start and then every tenth of the
    /// retention (at most hourly, at least every minute) until `shutdown`
    /// resolves. Nothing to do when blobs are kept forever. Errors are
    /// logged; the next sweep tries again.
    pub async fn run_sweeps(&self, shutdown: impl std::future::Future<Output = ()>) {
        let Some(max_age) = self.attachments.retention else {
            return shutdown.await;
        };
        let every = (max_age / 10).clamp(Duration::from_secs(60), Duration::from_secs(3600));
        tokio::pin!(shutdown);
        loop {
            match self.sweep_attachments().await {
                Ok(0) => {}
                Ok(swept) => tracing::info!(swept, "replays and logs past their retention removed"),
                Err(e) => tracing::error!(
                    error = %super::chain(&e),
                    "sweeping replays and logs past their retention"
                ),
            }
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = &mut shutdown => return,
            }
        }
    }
}

/// Tokens are stored as their sha256, so a copy of the store unlocks nothing.
fn token_digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
