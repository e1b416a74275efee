//! The ids the coordinator makes: a tournament's from its content, a match's
//! from its tournament, round and position, so that a result naming only the
//! match leads back to both.

use sha2::{Digest, Sha256};

use super::NewTournament;

/// A scheduled match's id. Results come back naming only the match, so the
/// tournament and round are read back out of it ([`match_tournament`],
/// [`match_round`]).
pub(super) fn match_id(tournament: &str, round: u32, index: usize) -> String {
    format!("{tournament}:{round}:{index}")
}

/// The tournament part of a [`match_id`].
pub(super) fn match_tournament(match_id: &str) -> Option<&str> {
    match_id.rsplitn(3, ':').nth(2)
}

/// The round part of a [`match_id`].
pub(crate) fn match_round(match_id: &str) -> Option<u32> {
    match_id.rsplit(':').nth(1)?.parse().ok()
}

/// A tournament's id: a digest of everything that defines it (name, game,
/// seats, base seed, format, resolved rules, resolved limits, environment,
/// entrants, team layout), so two tournaments differing in any of them never
/// share an id. Pass `new` after resolving its rules and teams, or defaults
/// given explicitly would change the id. Every part is length-prefixed, so
/// no two different tournaments hash the same bytes.
///
/// The team layout is hashed only when there is one, after the entrants, so
/// the ids of tournaments without teams are what they were before teams
/// existed (a coordinator re-creating one finds it). It cannot be mistaken
/// for an entrant: entrants add two parts each, the layout one. The wasm
/// runtime likewise, last and only when named (the coordinator drops it
/// for a tournament without WebAssembly entrants first), as one part
/// tagged `wasm_runtime=`, which no layout of small seat numbers spells.
/// The model runtime the same way after it, tagged `model_runtime=` (and
/// dropped for a tournament without model-graph entrants).
pub fn tournament_id(new: &NewTournament) -> String {
    fn part(hasher: &mut Sha256, bytes: &[u8]) {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    // Plain data of strings, integers and enums: serializing cannot fail.
    fn json(value: &impl serde::Serialize) -> Vec<u8> {
        serde_json::to_vec(value).unwrap_or_default()
    }
    let mut hasher = Sha256::new();
    part(&mut hasher, new.name.as_bytes());
    part(&mut hasher, new.game.as_bytes());
    part(&mut hasher, &(new.seats as u64).to_le_bytes());
    part(&mut hasher, &new.base_seed.to_le_bytes());
    part(&mut hasher, &json(&new.format));
    part(&mut hasher, &json(&new.rules));
    part(&mut hasher, &json(&new.limits));
    part(
        &mut hasher,
        new.environment.as_deref().unwrap_or("").as_bytes(),
    );
    for (name, hash) in &new.entrants {
        part(&mut hasher, name.as_bytes());
        part(&mut hasher, hash.as_bytes());
    }
    if let Some(teams) = new.teams.as_deref().filter(|t| !t.is_empty()) {
        let bytes: Vec<u8> = teams.iter().flat_map(|t| t.to_le_bytes()).collect();
        part(&mut hasher, &bytes);
    }
    if let Some(runtime) = &new.wasm_runtime {
        part(&mut hasher, format!("wasm_runtime={runtime}").as_bytes());
    }
    if let Some(runtime) = &new.model_runtime {
        part(&mut hasher, format!("model_runtime={runtime}").as_bytes());
    }
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("t-{hex}")
}
