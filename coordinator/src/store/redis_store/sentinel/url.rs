//! The `redis+sentinel://` URL an operator gives `--redis` to reach Redis
//! through Sentinel:
//!
//! ```text
//! redis+sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]/MASTER[/DB][?sentinel_username=U&sentinel_password=P]
//! ```
//!
//! The hosts are sentinels (port 26379 when left out; IPv6 in brackets),
//! `MASTER` is the name they monitor the primary under (`sentinel monitor
//! MASTER ...`), `DB` the database on the primary (0 when left out). The
//! credentials before `@` are the primary's (`requirepass` or an ACL user);
//! the sentinels' own, if they have `requirepass` set, go in the query.
//! Every part is percent-decoded, so a password may hold `@`, `/` or `,`.
//!
//! Parsing only checks what is written; it does no I/O (the sentinels are
//! asked in [`super::SentinelLink::connect`]).

use std::fmt;

/// The scheme that selects Sentinel; any other URL goes to the redis crate
/// as a single server's address.
pub const SCHEME: &str = "redis+sentinel://";

/// Sentinel's default port.
const DEFAULT_PORT: u16 = 26379;

/// Whether `url` asks for Sentinel (so [`SentinelUrl::parse`] should read it).
pub fn is_sentinel_url(url: &str) -> bool {
    url.get(..SCHEME.len())
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case(SCHEME))
}

/// Why a `redis+sentinel://` URL was refused. Each names the part that is
/// wrong, so the operator can fix the flag without reading the code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SentinelUrlError {
    /// The URL does not start with `redis+sentinel://`.
    #[error("a Sentinel URL starts with {SCHEME}")]
    Scheme,
    /// Nothing between the scheme and the master name.
    #[error("no sentinel addresses: expected {SCHEME}HOST[:PORT][,HOST[:PORT]...]/MASTER[/DB]")]
    NoSentinels,
    /// `a,,b` or a trailing comma.
    #[error("an empty sentinel address in the list {0:?}")]
    EmptyAddress(String),
    /// `[::1` with no closing bracket, or text between `]` and `:`.
    #[error("sentinel address {0:?}: an IPv6 address goes in brackets, as [::1]:26379")]
    Brackets(String),
    /// A port that is not a number from 1 to 65535.
    #[error("sentinel address {address:?}: port {port:?} is not a number from 1 to 65535")]
    Port {
        /// The whole `HOST:PORT` as written.
        address: String,
        /// The part after the colon.
        port: String,
    },
    /// No `/MASTER` after the addresses, or an empty one.
    #[error("no master name: expected {SCHEME}HOST[:PORT],.../MASTER[/DB]")]
    NoMaster,
    /// `/DB` that is not a non-negative integer.
    #[error("database {0:?} is not a non-negative integer")]
    Db(String),
    /// More path after `/MASTER/DB`, or a `#fragment`.
    #[error("unexpected {0:?} after /MASTER/DB")]
    Trailing(String),
    /// A query parameter other than the sentinel credentials.
    #[error("unknown query parameter {0:?} (known: sentinel_username, sentinel_password)")]
    UnknownParameter(String),
    /// A bad `%XX` escape, or bytes that are not UTF-8 once decoded.
    #[error("the {0} is not valid percent-encoded UTF-8")]
    Encoding(&'static str),
}

/// A parsed `redis+sentinel://` URL. Its `Debug` hides the passwords.
#[derive(Clone, PartialEq, Eq)]
pub struct SentinelUrl {
    /// The sentinels to ask, in the order given; at least one.
    pub sentinels: Vec<(String, u16)>,
    /// The name the sentinels monitor the primary under.
    pub master: String,
    /// The database selected on the primary.
    pub db: i64,
    /// The primary's ACL user, if any.
    pub username: Option<String>,
    /// The primary's password, if any.
    pub password: Option<String>,
    /// The sentinels' ACL user, if any.
    pub sentinel_username: Option<String>,
    /// The sentinels' password, if any.
    pub sentinel_password: Option<String>,
}

impl fmt::Debug for SentinelUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = |secret: &Option<String>| secret.as_ref().map(|_| "<hidden>");
        f.debug_struct("SentinelUrl")
            .field("sentinels", &self.sentinels)
            .field("master", &self.master)
            .field("db", &self.db)
            .field("username", &self.username)
            .field("password", &hidden(&self.password))
            .field("sentinel_username", &self.sentinel_username)
            .field("sentinel_password", &hidden(&self.sentinel_password))
            .finish()
    }
}

impl SentinelUrl {
    /// Reads `url`; see the module docs for the format.
    pub fn parse(url: &str) -> Result<SentinelUrl, SentinelUrlError> {
        if !is_sentinel_url(url) {
            return Err(SentinelUrlError::Scheme);
        }
        let rest = &url[SCHEME.len()..];
        // A fragment means nothing here; refuse it rather than drop it.
        if let Some(at) = rest.find('#') {
            return Err(SentinelUrlError::Trailing(rest[at..].to_owned()));
        }
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, Some(query)),
            None => (rest, None),
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        // The last '@' ends the userinfo: an unescaped '@' in a password
        // then still works, and hosts never hold one.
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((userinfo, hosts)) => (Some(userinfo), hosts),
            None => (None, authority),
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(userinfo) => {
                let (user, password) = match userinfo.split_once(':') {
                    Some((user, password)) => (user, Some(password)),
                    None => (userinfo, None),
                };
                (
                    non_empty(decode(user, "user name")?),
                    password.map(|p| decode(p, "password")).transpose()?,
                )
            }
        };
        let sentinels = parse_addresses(hosts)?;
        let mut segments = path.split('/');
        let master = decode(segments.next().unwrap_or(""), "master name")?;
        if master.is_empty() {
            return Err(SentinelUrlError::NoMaster);
        }
        let db = match segments.next() {
            None | Some("") => 0,
            Some(db) => db
                .parse::<i64>()
                .ok()
                .filter(|db| *db >= 0)
                .ok_or_else(|| SentinelUrlError::Db(db.to_owned()))?,
        };
        let trailing: Vec<&str> = segments.collect();
        if trailing.iter().any(|s| !s.is_empty()) {
            return Err(SentinelUrlError::Trailing(format!(
                "/{}",
                trailing.join("/")
            )));
        }
        let mut url = SentinelUrl {
            sentinels,
            master,
            db,
            username,
            password,
            sentinel_username: None,
            sentinel_password: None,
        };
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sentinel_username" => {
                    url.sentinel_username = non_empty(decode(value, "sentinel user name")?);
                }
                "sentinel_password" => {
                    url.sentinel_password = Some(decode(value, "sentinel password")?);
                }
                other => return Err(SentinelUrlError::UnknownParameter(other.to_owned())),
            }
        }
        Ok(url)
    }
}

/// `HOST[:PORT],HOST[:PORT]...`, at least one.
fn parse_addresses(hosts: &str) -> Result<Vec<(String, u16)>, SentinelUrlError> {
    if hosts.is_empty() {
        return Err(SentinelUrlError::NoSentinels);
    }
    hosts
        .split(',')
        .map(|address| {
            if address.is_empty() {
                return Err(SentinelUrlError::EmptyAddress(hosts.to_owned()));
            }
            parse_address(address)
        })
        .collect()
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn parse_address(address: &str) -> Result<(String, u16), SentinelUrlError> {
    let (host, port) = if let Some(bracketed) = address.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or_else(|| SentinelUrlError::Brackets(address.to_owned()))?;
        let port = match after {
            "" => None,
            after => Some(
                after
                    .strip_prefix(':')
                    .ok_or_else(|| SentinelUrlError::Brackets(address.to_owned()))?,
            ),
        };
        (host, port)
    } else {
        match address.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (address, None),
        }
    };
    if host.is_empty() || host.contains(['[', ']']) {
        return Err(SentinelUrlError::Brackets(address.to_owned()));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| SentinelUrlError::Port {
                address: address.to_owned(),
                port: port.to_owned(),
            })?,
    };
    Ok((host.to_owned(), port))
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Percent-decodes `text`; `what` names it in the error.
fn decode(text: &str, what: &'static str) -> Result<String, SentinelUrlError> {
    let bad = || SentinelUrlError::Encoding(what);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or_else(bad)?;
            let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<SentinelUrl, SentinelUrlError> {
        SentinelUrl::parse(url)
    }

    #[test]
    fn three_sentinels_a_master_and_a_database() {
        let url = parse("redis+sentinel://s1:26380,10.0.0.2,[::1]:26381/arena/2").unwrap();
        assert_eq!(
            url.sentinels,
            vec![
                ("s1".to_owned(), 26380),
                ("10.0.0.2".to_owned(), 26379),
                ("::1".to_owned(), 26381),
            ]
        );
        assert_eq!(url.master, "arena");
        assert_eq!(url.db, 2);
        assert_eq!((url.username, url.password), (None, None));
    }

    #[test]
    fn the_database_defaults_to_zero_and_a_trailing_slash_is_fine() {
        assert_eq!(parse("redis+sentinel://s/arena").unwrap().db, 0);
        assert_eq!(parse("redis+sentinel://s/arena/").unwrap().db, 0);
        assert_eq!(parse("redis+sentinel://s/arena/3/").unwrap().db, 3);
    }

    #[test]
    fn the_scheme_is_case_insensitive_and_required() {
        assert!(is_sentinel_url("REDIS+Sentinel://s/arena"));
        assert!(!is_sentinel_url("redis://127.0.0.1/"));
        assert!(!is_sentinel_url("redis+sent"));
        assert_eq!(parse("redis://s/arena"), Err(SentinelUrlError::Scheme));
        assert_eq!(parse(""), Err(SentinelUrlError::Scheme));
    }

    #[test]
    fn credentials_are_percent_decoded_and_hidden_from_debug() {
        let url = parse(
            "redis+sentinel://app:p%40ss%2Fw,rd@s1,s2/arena\
             ?sentinel_username=watch&sentinel_password=s%26cret",
        )
        .unwrap();
        assert_eq!(url.username.as_deref(), Some("app"));
        assert_eq!(url.password.as_deref(), Some("p@ss/w,rd"));
        assert_eq!(url.sentinel_username.as_deref(), Some("watch"));
        assert_eq!(url.sentinel_password.as_deref(), Some("s&cret"));
        assert_eq!(url.sentinels.len(), 2);
        let debug = format!("{url:?}");
        assert!(
            !debug.contains("p@ss") && !debug.contains("s&cret"),
            "{debug}"
        );
        // A password alone, as `requirepass` has no user.
        let url = parse("redis+sentinel://:secret@s/arena").unwrap();
        assert_eq!(
            (url.username, url.password.as_deref()),
            (None, Some("secret"))
        );
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        use SentinelUrlError::*;
        let cases: &[(&str, SentinelUrlError)] = &[
            ("redis+sentinel://", NoSentinels),
            ("redis+sentinel:///arena", NoSentinels),
            ("redis+sentinel://s1", NoMaster),
            ("redis+sentinel://s1/", NoMaster),
            (
                "redis+sentinel://s1,,s2/arena",
                EmptyAddress("s1,,s2".into()),
            ),
            ("redis+sentinel://s1,/arena", EmptyAddress("s1,".into())),
            (
                "redis+sentinel://s1:port/arena",
                Port {
                    address: "s1:port".into(),
                    port: "port".into(),
                },
            ),
            (
                "redis+sentinel://s1:0/arena",
                Port {
                    address: "s1:0".into(),
                    port: "0".into(),
                },
            ),
            (
                "redis+sentinel://s1:70000/arena",
                Port {
                    address: "s1:70000".into(),
                    port: "70000".into(),
                },
            ),
            ("redis+sentinel://[::1/arena", Brackets("[::1".into())),
            ("redis+sentinel://[::1]x/arena", Brackets("[::1]x".into())),
            ("redis+sentinel://:26379/arena", Brackets(":26379".into())),
            ("redis+sentinel://s1/arena/x", Db("x".into())),
            ("redis+sentinel://s1/arena/-1", Db("-1".into())),
            ("redis+sentinel://s1/arena/0/more", Trailing("/more".into())),
            ("redis+sentinel://s1/arena#top", Trailing("#top".into())),
            (
                "redis+sentinel://s1/arena?timeout=5",
                UnknownParameter("timeout".into()),
            ),
            ("redis+sentinel://:%zz@s1/arena", Encoding("password")),
            ("redis+sentinel://s1/ar%e", Encoding("master name")),
            ("redis+sentinel://s1/%ff", Encoding("master name")),
        ];
        for (url, expected) in cases {
            assert_eq!(parse(url).as_ref(), Err(expected), "{url}");
            // Every message is a sentence an operator can act on.
            assert!(!expected.to_string().is_empty());
        }
    }

    #[test]
    fn no_input_panics() {
        for url in [
            "redis+sentinel://%",
            "redis+sentinel://s/%",
            "redis+sentinel://s/%4",
            "redis+sentinel://@/",
            "redis+sentinel://[]/a",
            "redis+sentinel://]:1/a",
            "redis+sentinel://s/a?=",
            "redis+sentinel://s/a?&&",
            "redis+sentinel://é:é/ü",
            "redis+sentinel://s:/a",
        ] {
            let _ = parse(url);
        }
        assert!(parse("redis+sentinel://s/a?&&").is_ok());
    }
}
