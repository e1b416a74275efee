//! Skill ratings with uncertainty (Weng-Lin, a Bayesian approximation in the
//! TrueSkill family that handles any number of seats per game).

use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use super::Game;

/// Every entrant's rating after `games`, processed in the order given (the
/// caller sorts them by round, then match id). Each entrant seat is a
/// one-player team ranked by its order among the entrant seats (baseline
/// seats are not in `game.seats`); seats that tied share an outcome. A game
/// with fewer than two entrant seats changes nothing.
pub(super) fn rate(games: &[Game], entrants: usize) -> Vec<WengLinRating> {
    let config = WengLinConfig::new();
    let mut ratings = vec![WengLinRating::new(); entrants];
    for game in games.iter().filter(|g| g.seats.len() >= 2) {
        let teams: Vec<[WengLinRating; 1]> = game
            .seats
            .iter()
            .map(|seat| [ratings[seat.entrant]])
            .collect();
        let teams_and_ranks: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .zip(&game.seats)
            .map(|(team, seat)| {
                (
                    team.as_slice(),
                    MultiTeamOutcome::new(seat.entrants_ahead + 1),
                )
            })
            .collect();
        let updated = weng_lin_multi_team(&teams_and_ranks, &config);
        for (seat, team) in game.seats.iter().zip(updated) {
            if let Some(rating) = team.first() {
                ratings[seat.entrant] = *rating;
            }
        }
    }
    ratings
}
