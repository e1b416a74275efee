//! The Lua scripts, each compiled into the binary and hashed once per
//! process. `Script::invoke_async` sends `EVALSHA` and falls back to loading
//! the source when the server answers `NOSCRIPT` (after a Redis restart or
//! `SCRIPT FLUSH`), so nothing has to be loaded up front.
//!
//! Every script that changes state checks all of its conditions before its
//! first write: Redis does not roll a script back when it errors halfway, so
//! "validate, then mutate" is what makes each one all-or-nothing.
//!
//! Each script's KEYS are listed once in Rust, here ([`LuaScript::keys`]),
//! and a call names them all with [`LuaScript::keyed`]; each `.lua` file's
//! header writes the same list for its reader, and a test below fails when
//! the two differ.
//!
//! `lua/end_attempt.lua` is not a script of its own: it defines the one
//! function that ends an attempt, and is prepended to the two scripts that
//! end attempts (`fail`, `expire`), so both apply the same rules. Likewise
//! `lua/count_lease_end.lua` defines the one function that counts a
//! worker's lease endings for the quarantine, prepended to `lease_end` and
//! to the two scripts that count the lease they end (`complete`, `fail`).
//! `lua/take.lua`, the function that picks and leases a queued match, is
//! prepended to `lease_worker` alone: it keeps the choice of a match apart
//! from the checks on the worker.

use std::sync::LazyLock;

use redis::{Script, ScriptInvocation};

use self::Key::Fixed;
use super::keys;
use crate::store::error::{Result, StoreError};

/// One entry of a script's KEYS: a fixed key, or a per-id key named by an
/// id the call gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    /// A fixed key (a [`keys`] constant).
    Fixed(&'static str),
    /// [`keys::spec`] of the tournament.
    Spec,
    /// [`keys::rounds`] of the tournament.
    Rounds,
    /// [`keys::matches`] of the tournament.
    Matches,
    /// [`keys::byes`] of the tournament.
    Byes,
    /// [`keys::replay`] of the match.
    Replay,
    /// [`keys::lease_ends`] of the worker.
    LeaseEnds,
    /// [`keys::upload`] of the upload.
    Upload,
}

/// The kind of id a per-id [`Key`] is named by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Id {
    Tournament,
    Match,
    Worker,
    Upload,
}

impl Id {
    /// How `docs/redis-keys.md` and the script headers write this id in a
    /// key pattern.
    #[cfg(test)]
    fn placeholder(self) -> &'static str {
        match self {
            Id::Tournament => "{tournament}",
            Id::Match => "{match}",
            Id::Worker => "{worker}",
            Id::Upload => "{upload}",
        }
    }
}

/// A [`keys`] function: a per-id key's name from its id.
type Namer = fn(&str) -> String;

impl Key {
    /// For a per-id key, the id it is named by and the function naming it.
    fn per_id(self) -> Option<(Id, Namer)> {
        let named: (Id, Namer) = match self {
            Key::Fixed(_) => return None,
            Key::Spec => (Id::Tournament, keys::spec),
            Key::Rounds => (Id::Tournament, keys::rounds),
            Key::Matches => (Id::Tournament, keys::matches),
            Key::Byes => (Id::Tournament, keys::byes),
            Key::Replay => (Id::Match, keys::replay),
            Key::LeaseEnds => (Id::Worker, keys::lease_ends),
            Key::Upload => (Id::Upload, keys::upload),
        };
        Some(named)
    }

    /// The key a call names, its per-id part taken from `ids`; `None` if
    /// `ids` lacks the id it needs.
    fn name(self, ids: &[(Id, &str)]) -> Option<String> {
        match self {
            Key::Fixed(key) => Some(key.to_owned()),
            _ => {
                let (kind, name) = self.per_id()?;
                ids.iter()
                    .find(|(given, _)| *given == kind)
                    .map(|(_, id)| name(id))
            }
        }
    }

    /// The key's pattern, as the script headers and `docs/redis-keys.md`
    /// write it (`arena:queue`, `arena:spec:{tournament}`).
    #[cfg(test)]
    fn pattern(self) -> String {
        match self {
            Key::Fixed(key) => key.to_owned(),
            _ => self
                .per_id()
                .map_or_else(String::new, |(kind, name)| name(kind.placeholder())),
        }
    }
}

/// A script and its KEYS.
pub(super) struct LuaScript {
    /// Its file under `lua/`, without `.lua`; the file's header documents
    /// its KEYS and ARGV.
    pub name: &'static str,
    /// Its KEYS, in order: the one list of them in Rust.
    pub keys: &'static [Key],
    /// The file's source, after the sources of the functions it is built
    /// with.
    script: Script,
}

impl LuaScript {
    /// An invocation with every one of the script's KEYS named, each
    /// per-id key by its id in `ids`; the caller adds the ARGV.
    pub fn keyed(&self, ids: &[(Id, &str)]) -> Result<ScriptInvocation<'_>> {
        let mut invocation = self.script.prepare_invoke();
        for key in self.keys {
            // Every call passes the ids its script's keys need (the store
            // tests run each script); this only keeps a slip from writing
            // to a wrong key.
            let name = key.name(ids).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "lua/{}.lua was called without the id its key {key:?} is named by",
                    self.name
                ))
            })?;
            invocation.key(name);
        }
        Ok(invocation)
    }
}

/// A [`LuaScript`] from `lua/NAME.lua` with these KEYS, built after the
/// files of the functions it uses (`lua/FUNCTION.lua`, in order).
macro_rules! lua_script {
    ($name:literal, $keys:expr $(, after $function:literal)*) => {
        LuaScript {
            name: $name,
            keys: $keys,
            script: Script::new(concat!(
                $(include_str!(concat!("lua/", $function, ".lua")),)*
                include_str!(concat!("lua/", $name, ".lua"))
            )),
        }
    };
}

/// `lua/create_tournament.lua`'s KEYS.
const CREATE_TOURNAMENT: &[Key] = &[
    Fixed(keys::TOURNAMENTS),
    Key::Spec,
    Fixed(keys::CANCELLED),
    Fixed(keys::TOURNAMENT_ENV),
    Fixed(keys::TOURNAMENT_WASM),
    Fixed(keys::WASM_SUBMISSIONS),
    Fixed(keys::TOURNAMENT_MODEL),
    Fixed(keys::MODEL_SUBMISSIONS),
];

/// `lua/schedule_round.lua`'s KEYS.
const SCHEDULE_ROUND: &[Key] = &[
    Fixed(keys::TOURNAMENTS),
    Fixed(keys::CANCELLED),
    Key::Rounds,
    Key::Matches,
    Key::Byes,
    Fixed(keys::QUEUE),
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::MATCH_ROUND),
    Fixed(keys::MATCH_PAIRING),
    Fixed(keys::MATCH_SEATS),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_ATTEMPT),
];

/// `lua/cancel.lua`'s KEYS.
const CANCEL: &[Key] = &[
    Fixed(keys::TOURNAMENTS),
    Fixed(keys::CANCELLED),
    Fixed(keys::QUEUE),
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::MATCH_STATE),
];

/// `lua/lease_worker.lua`'s KEYS: the first twelve and the last four are
/// `take.lua`'s.
const LEASE_WORKER: &[Key] = &[
    Fixed(keys::QUEUE),
    Fixed(keys::MATCH_SEATS),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_ATTEMPT),
    Fixed(keys::MATCH_LEASE),
    Fixed(keys::MATCH_WORKER),
    Fixed(keys::LEASE_MATCH),
    Fixed(keys::LEASES),
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::MATCH_ROUND),
    Fixed(keys::MATCH_PAIRING),
    Fixed(keys::TOURNAMENT_ENV),
    Fixed(keys::WORKERS),
    Fixed(keys::WORKER_SEEN),
    Fixed(keys::QUARANTINED),
    Fixed(keys::WORKER_CACHED),
    Fixed(keys::WASM_SUBMISSIONS),
    Fixed(keys::TOURNAMENT_WASM),
    Fixed(keys::MODEL_SUBMISSIONS),
    Fixed(keys::TOURNAMENT_MODEL),
];

/// `lua/expire.lua`'s KEYS.
const EXPIRE: &[Key] = &[
    Fixed(keys::LEASES),
    Fixed(keys::LEASE_MATCH),
    Fixed(keys::MATCH_LEASE),
    Fixed(keys::MATCH_WORKER),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_ATTEMPT),
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::CANCELLED),
    Fixed(keys::QUEUE),
    Fixed(keys::MATCH_FAILURES),
    Fixed(keys::MATCH_STRIKES),
];

/// `lua/complete.lua`'s KEYS.
const COMPLETE: &[Key] = &[
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_LEASE),
    Fixed(keys::MATCH_WORKER),
    Fixed(keys::LEASE_MATCH),
    Fixed(keys::LEASES),
    Fixed(keys::RESULTS),
    Key::Replay,
    Fixed(keys::MATCH_SEATS),
    Fixed(keys::MATCH_PAIRING),
    Key::LeaseEnds,
];

/// `lua/fail.lua`'s KEYS.
const FAIL: &[Key] = &[
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_LEASE),
    Fixed(keys::MATCH_WORKER),
    Fixed(keys::LEASE_MATCH),
    Fixed(keys::LEASES),
    Fixed(keys::MATCH_ATTEMPT),
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::CANCELLED),
    Fixed(keys::QUEUE),
    Fixed(keys::MATCH_FAILURES),
    Fixed(keys::MATCH_STRIKES),
    Key::LeaseEnds,
    Fixed(keys::QUARANTINED),
];

/// `lua/heartbeat_leases.lua`'s KEYS.
const HEARTBEAT_LEASES: &[Key] = &[
    Fixed(keys::WORKERS),
    Fixed(keys::WORKER_CACHED),
    Fixed(keys::WORKER_SEEN),
    Fixed(keys::LEASE_MATCH),
    Fixed(keys::MATCH_LEASE),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::CANCELLED),
    Fixed(keys::LEASES),
    Fixed(keys::MATCH_WORKER),
];

/// `lua/requeue.lua`'s KEYS.
const REQUEUE: &[Key] = &[
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_ATTEMPT),
    Fixed(keys::MATCH_STRIKES),
    Fixed(keys::CANCELLED),
    Fixed(keys::QUEUE),
];

/// `lua/rejudge.lua`'s KEYS.
const REJUDGE: &[Key] = &[
    Fixed(keys::MATCH_TOURNAMENT),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_ATTEMPT),
    Fixed(keys::MATCH_STRIKES),
    Fixed(keys::CANCELLED),
    Fixed(keys::QUEUE),
    Fixed(keys::RESULTS),
    Key::Replay,
];

/// `lua/release.lua`'s KEYS.
const RELEASE: &[Key] = &[
    Key::Matches,
    Fixed(keys::TOURNAMENTS),
    Fixed(keys::CANCELLED),
    Fixed(keys::MATCH_STATE),
    Fixed(keys::MATCH_LEASE),
    Fixed(keys::MATCH_WORKER),
    Fixed(keys::LEASE_MATCH),
    Fixed(keys::LEASES),
    Fixed(keys::MATCH_ATTEMPT),
    Fixed(keys::MATCH_FAILURES),
    Fixed(keys::QUEUE),
];

/// `lua/lease_end.lua`'s KEYS.
const LEASE_END: &[Key] = &[Key::LeaseEnds];

/// `lua/push_chunk.lua`'s KEYS.
const PUSH_CHUNK: &[Key] = &[Key::Upload];

/// One handle per script; see each `.lua` file's header for its
/// KEYS/ARGV contract.
pub(super) struct Scripts {
    pub create_tournament: LuaScript,
    pub schedule_round: LuaScript,
    pub cancel: LuaScript,
    pub lease_worker: LuaScript,
    pub expire: LuaScript,
    pub complete: LuaScript,
    pub fail: LuaScript,
    pub heartbeat_leases: LuaScript,
    pub requeue: LuaScript,
    pub rejudge: LuaScript,
    pub release: LuaScript,
    pub lease_end: LuaScript,
    pub push_chunk: LuaScript,
}

impl Scripts {
    /// Every script.
    #[cfg(test)]
    fn all(&self) -> [&LuaScript; 13] {
        [
            &self.create_tournament,
            &self.schedule_round,
            &self.cancel,
            &self.lease_worker,
            &self.expire,
            &self.complete,
            &self.fail,
            &self.heartbeat_leases,
            &self.requeue,
            &self.rejudge,
            &self.release,
            &self.lease_end,
            &self.push_chunk,
        ]
    }
}

/// The scripts, hashed on first use.
pub(super) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    push_chunk: lua_script!("push_chunk", PUSH_CHUNK),
    create_tournament: lua_script!("create_tournament", CREATE_TOURNAMENT),
    schedule_round: lua_script!("schedule_round", SCHEDULE_ROUND),
    cancel: lua_script!("cancel", CANCEL),
    lease_worker: lua_script!("lease_worker", LEASE_WORKER, after "take"),
    expire: lua_script!("expire", EXPIRE, after "end_attempt"),
    complete: lua_script!("complete", COMPLETE, after "count_lease_end"),
    fail: lua_script!("fail", FAIL, after "end_attempt", after "count_lease_end"),
    heartbeat_leases: lua_script!("heartbeat_leases", HEARTBEAT_LEASES),
    requeue: lua_script!("requeue", REQUEUE),
    rejudge: lua_script!("rejudge", REJUDGE),
    release: lua_script!("release", RELEASE),
    lease_end: lua_script!("lease_end", LEASE_END, after "count_lease_end"),
});

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::{Id, SCRIPTS};
    use crate::store::redis_store::keys::PATTERNS;

    /// The files that are no script of their own: functions prepended to
    /// scripts. (`take.lua` documents the KEYS `lease_worker.lua` shares
    /// with it.)
    const FUNCTIONS: &[&str] = &["count_lease_end", "end_attempt", "take"];

    fn lua_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/store/redis_store/lua")
    }

    fn read(name: &str) -> String {
        let path = lua_dir().join(format!("{name}.lua"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    fn parse_index(text: &str, name: &str) -> Result<usize, String> {
        text.trim()
            .parse()
            .map_err(|_| format!("lua/{name}.lua: {text:?} is no KEYS index"))
    }

    /// The KEYS that the header (the leading comment) of `lua/NAME.lua`
    /// documents, by index: each `KEYS[i]: KEY what it holds` line, and
    /// each `KEYS[a .. b]: as in OTHER.lua` range, read from that file.
    fn header_keys(name: &str) -> Result<BTreeMap<usize, String>, String> {
        let source = read(name);
        let mut documented = BTreeMap::new();
        for line in source.lines().take_while(|line| line.starts_with("--")) {
            let text = line.trim_start_matches('-').trim();
            let Some(entry) = text.strip_prefix("KEYS[") else {
                continue;
            };
            let (index, rest) = entry
                .split_once("]:")
                .ok_or_else(|| format!("lua/{name}.lua: no `]:` in {line:?}"))?;
            let entries: Vec<(usize, String)> = match rest.trim().strip_prefix("as in ") {
                Some(other) => {
                    let other = other.trim().trim_end_matches(".lua");
                    let (first, last) = index
                        .split_once("..")
                        .ok_or_else(|| format!("lua/{name}.lua: {line:?} names no range"))?;
                    let theirs = header_keys(other)?;
                    (parse_index(first, name)?..=parse_index(last, name)?)
                        .map(|i| match theirs.get(&i) {
                            Some(key) => Ok((i, key.clone())),
                            None => Err(format!(
                                "lua/{name}.lua: KEYS[{i}] is as in {other}.lua, which has none"
                            )),
                        })
                        .collect::<Result<_, _>>()?
                }
                None => {
                    let key = rest
                        .split_whitespace()
                        .next()
                        .ok_or_else(|| format!("lua/{name}.lua: {line:?} names no key"))?;
                    vec![(parse_index(index, name)?, key.to_owned())]
                }
            };
            for (i, key) in entries {
                if documented.insert(i, key).is_some() {
                    return Err(format!("lua/{name}.lua: KEYS[{i}] is documented twice"));
                }
            }
        }
        Ok(documented)
    }

    #[test]
    fn every_script_header_documents_its_rust_keys() {
        for script in SCRIPTS.all() {
            let name = script.name;
            let documented = header_keys(name).unwrap_or_else(|e| panic!("{e}"));
            let indices: Vec<usize> = documented.keys().copied().collect();
            let expected_indices: Vec<usize> = (1..=documented.len()).collect();
            assert_eq!(
                indices, expected_indices,
                "lua/{name}.lua: its header's KEYS are not numbered 1, 2, 3, ..."
            );
            let documented: Vec<String> = documented.into_values().collect();
            let in_rust: Vec<String> = script.keys.iter().map(|key| key.pattern()).collect();
            assert_eq!(
                documented, in_rust,
                "lua/{name}.lua: the KEYS its header documents (left) are not the ones \
                 scripts.rs names for it (right)"
            );
        }
    }

    #[test]
    fn every_lua_file_is_a_script_or_a_function() {
        let entries = std::fs::read_dir(lua_dir()).unwrap_or_else(|e| panic!("lua/: {e}"));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("lua/: {e}")).path();
            let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            assert!(
                SCRIPTS.all().iter().any(|s| s.name == name) || FUNCTIONS.contains(&name),
                "lua/{name}.lua is neither a script in scripts.rs nor one of its functions"
            );
        }
    }

    #[test]
    fn every_script_key_is_a_documented_pattern() {
        for script in SCRIPTS.all() {
            for key in script.keys {
                let pattern = key.pattern();
                assert!(
                    PATTERNS.contains(&pattern.as_str()),
                    "lua/{}.lua: {pattern} is not in keys::PATTERNS",
                    script.name
                );
            }
        }
    }

    #[test]
    fn a_call_without_an_id_its_keys_need_is_refused() {
        assert!(SCRIPTS.complete.keyed(&[(Id::Match, "t:0:0")]).is_err());
        assert!(
            SCRIPTS
                .complete
                .keyed(&[(Id::Match, "t:0:0"), (Id::Worker, "w")])
                .is_ok()
        );
        assert!(SCRIPTS.cancel.keyed(&[]).is_ok());
    }
}
