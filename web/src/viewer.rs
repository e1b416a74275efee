//! Who a page is for, once `auth` has read the request's token: the public,
//! an entrant, or an organiser. The pages and the nav (`html`) show what
//! the viewer may see; the error pages show everyone the public nav. (Not
//! to be confused with the replay viewer under `assets/viewer/`.)
//!
//! A leaf: it uses no other module of the crate, so `html`, `error` and
//! `auth` depend on it in one direction, `auth` → `error` → `html` →
//! `viewer`.

use arena_coordinator::store::LiveBoard;

/// The viewer of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Viewer {
    /// No token, or one that is not valid: read-only, no logs.
    Public,
    /// An entrant's token: also the logs of that submission's own seats.
    Entrant {
        /// The submission (entrant id) the token stands for.
        submission: String,
    },
    /// An organiser: every log, and the cancel and rejudge actions.
    Admin,
}

impl Viewer {
    pub fn is_admin(&self) -> bool {
        matches!(self, Viewer::Admin)
    }

    /// Whether the viewer may read the log of a seat played by `entrant`.
    pub fn may_see_log_of(&self, entrant: &str) -> bool {
        match self {
            Viewer::Public => false,
            Viewer::Entrant { submission } => submission == entrant,
            Viewer::Admin => true,
        }
    }

    /// Whether the viewer may watch the board of a running match of a
    /// tournament whose file says `live_board` (its turn count is public).
    pub fn may_watch_live_board(&self, live_board: LiveBoard) -> bool {
        self.is_admin() || live_board == LiveBoard::Everyone
    }

    /// A short label for the nav.
    pub fn describe(&self) -> String {
        match self {
            Viewer::Public => "public".to_owned(),
            Viewer::Entrant { submission } => {
                format!(
                    "entrant {}",
                    submission.chars().take(12).collect::<String>()
                )
            }
            Viewer::Admin => "organiser".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entrants_see_only_their_own_logs() {
        let entrant = Viewer::Entrant {
            submission: "abc".into(),
        };
        assert!(entrant.may_see_log_of("abc"));
        assert!(!entrant.may_see_log_of("def"));
        assert!(!Viewer::Public.may_see_log_of("abc"));
        assert!(Viewer::Admin.may_see_log_of("def"));
    }
}
