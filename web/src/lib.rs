//! Arena's web pages, served by the coordinator beside its gRPC services.
//!
//! # Layout
//!
//! [`router`] maps every route to a handler; [`serve`] runs it on a
//! listener until a shutdown future resolves. Pages live in `pages` (one
//! module each: the tournament list, a tournament, a match, the workers,
//! the login form), the organiser's POST actions in `actions`, the bot logs
//! in `logs`, replays and their dumped frames in `frames`, live updates in
//! `live` (a running match's board in `live_match`), the embedded static
//! files in `assets`. `view` reads what the pages show from the coordinator
//! and formats each changing cell once, for the HTML and for the live
//! snapshots alike; `html` escapes and lays pages out; `ids` checks ids
//! from URLs before any store lookup; `auth` tells who is asking (from the
//! request's token) and checks the origin of POSTs; `viewer` is who that is
//! (public, entrant, organiser); `error` turns failures into status pages;
//! `source` is the one module that calls the coordinator's replay, log,
//! token, progress, live-board and rejudge APIs. Among the lower modules
//! the dependencies run one way: `auth` → `error` → `html` → `viewer`.
//!
//! The browser side is under `web/assets/`: `style.css` for the pages,
//! `live.js` and `live-match.js` (ES modules, sharing `streams.js`) for
//! live updates, and the replay viewer's ES modules and stylesheet under
//! `viewer/` (see its README).
//!
//! # Routes
//!
//! | Route | Who |
//! | --- | --- |
//! | `GET /` tournaments, `GET /events` its live stream | everyone |
//! | `GET /tournaments/{id}` (`?entrant=&round=&state=` filter the matches), `GET /tournaments/{id}/events` | everyone (cancel and rejudge buttons: admin) |
//! | `GET /tournaments/{id}/entrants/{entrant}`, `/crosstable` (two-seat round robins) | everyone |
//! | `GET /tournaments/{id}/standings.csv`, `standings.json`, `results.csv`, `results.json` | everyone |
//! | `GET /matches/{id}` | everyone (rejudge button: admin; logs: see below) |
//! | `GET /matches/{id}/live` a running match's stream | everyone; its board: admin, or everyone if the tournament says `live_board = "everyone"` |
//! | `GET /matches/{id}/frames.json`, `/replay.json` | everyone |
//! | `GET /matches/{id}/logs/{seat}` | admin, or the entrant who played the seat; others 403 |
//! | `GET /workers` | everyone |
//! | `POST /tournaments/{id}/cancel`, `POST /matches/{id}/rejudge` | admin; others 403. The first post shows what the action does; it acts only when posted again with `confirm=yes` |
//! | `GET /login`, `POST /login`, `POST /logout` | everyone |
//! | `GET /assets/{*path}` | everyone |
//!
//! # Rendering
//!
//! Pages are plain server-rendered HTML written with `write!` and one
//! escaping helper: no template engine, and every page works without
//! JavaScript. Tables sit in a horizontally scrolling box so they stay
//! readable on a phone. Static files under `web/assets/` are embedded at
//! compile time by `build.rs` (no files are read at run time) and served
//! with their content type, an ETag and a short cache lifetime. Responses
//! are gzip-compressed when the client accepts it (the dumped frames of a
//! long game are megabytes of JSON).
//!
//! # Who sees what
//!
//! A token comes from the `arena_token` cookie (`POST /login` sets it
//! `HttpOnly; SameSite=Strict; Path=/`) or `Authorization: Bearer`, never
//! from a query string. An admin token (compared in constant time) may
//! cancel, rejudge and read every log; an entrant token reads the logs of
//! its own submission's seats; everyone else reads the pages and no log.
//! A refused log is a 403 rather than a 404: the match is public anyway.
//! Every POST with an `Origin` header must come from this host (CSRF).
//! Requests are logged by path only, never with headers or cookies.
//!
//! # Live updates
//!
//! The list and tournament pages name a server-sent-events stream in
//! `data-live` on `<main>`; `assets/live.js` follows it and writes each
//! snapshot's texts into the elements they key (`data-tournament`,
//! `data-entrant`, `data-round`, `data-match`, each cell by `data-field`),
//! shows or hides their `data-show` children (the cancel and rejudge
//! buttons), and keeps the children of a `data-sorted` container in the
//! `order` the snapshot gives (the standings rows, re-sorted as results
//! arrive). A snapshot that names something the page did not have at load
//! (a round scheduled since) makes it fetch the page again and swap its
//! content in. The server polls the store per connected page and sends
//! only changed snapshots (see `live`).

mod actions;
mod assets;
mod auth;
mod downloads;
mod error;
mod frames;
mod html;
mod ids;
mod live;
mod live_match;
mod logs;
mod pages;
mod source;
mod view;
mod viewer;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;

use arena_coordinator::service::Coordinator;
use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::compression::CompressionLayer;

pub use crate::auth::TOKEN_COOKIE;

/// How the pages are served.
#[derive(Clone, Debug)]
pub struct WebOptions {
    /// Tokens that make their bearer an organiser (cancel, rejudge, every
    /// log). Empty strings are ignored.
    pub admin_tokens: BTreeSet<String>,
    /// Live streams open at once, in all (see [`live`]).
    pub max_streams: usize,
    /// Live streams open at once from one client address.
    pub max_streams_per_client: usize,
}

impl Default for WebOptions {
    fn default() -> WebOptions {
        WebOptions {
            admin_tokens: BTreeSet::new(),
            max_streams: live::MAX_STREAMS,
            max_streams_per_client: live::MAX_STREAMS_PER_CLIENT,
        }
    }
}

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct AppState {
    /// Everything the pages show comes from here.
    pub coordinator: Arc<Coordinator>,
    /// [`WebOptions::admin_tokens`].
    pub admin_tokens: Arc<BTreeSet<String>>,
    /// Recently dumped replays.
    pub frames: frames::FramesCache,
    /// Turns `true` at shutdown, which ends every live stream.
    pub stop: watch::Receiver<bool>,
    /// The live streams open, counted against their caps.
    pub streams: Arc<live::StreamSlots>,
    /// The latest snapshot of each live topic, shared by its streams.
    pub snapshots: Arc<live::Snapshots>,
    /// Kept so `stop` stays open for as long as any handler runs.
    _stop_sender: Arc<watch::Sender<bool>>,
}

/// The pages over `coordinator`. Live streams served by this router end
/// only when their clients leave; [`serve`] also ends them at shutdown.
pub fn router(coordinator: Arc<Coordinator>, options: WebOptions) -> Router {
    build(coordinator, options).0
}

/// The router and the sender that stops its live streams.
fn build(coordinator: Arc<Coordinator>, options: WebOptions) -> (Router, Arc<watch::Sender<bool>>) {
    let (sender, stop) = watch::channel(false);
    let sender = Arc::new(sender);
    let state = AppState {
        coordinator,
        admin_tokens: Arc::new(options.admin_tokens),
        frames: frames::FramesCache::default(),
        stop,
        streams: Arc::new(live::StreamSlots::new(
            options.max_streams,
            options.max_streams_per_client,
        )),
        snapshots: Arc::new(live::Snapshots::default()),
        _stop_sender: Arc::clone(&sender),
    };
    let router = Router::new()
        .route("/", get(pages::index::index))
        .route("/events", get(live::list_events))
        .route("/tournaments/{id}", get(pages::tournament::tournament))
        .route("/tournaments/{id}/events", get(live::tournament_events))
        .route("/tournaments/{id}/cancel", post(actions::cancel))
        .route(
            "/tournaments/{id}/entrants/{entrant}",
            get(pages::entrant::entrant),
        )
        .route(
            "/tournaments/{id}/crosstable",
            get(pages::crosstable::crosstable),
        )
        .route("/tournaments/{id}/{file}", get(downloads::download))
        .route("/matches/{id}", get(pages::match_page::match_page))
        .route("/matches/{id}/live", get(live_match::match_events))
        .route("/matches/{id}/frames.json", get(frames::frames_json))
        .route("/matches/{id}/replay.json", get(frames::replay_json))
        .route("/matches/{id}/logs/{seat}", get(logs::seat_log))
        .route("/matches/{id}/rejudge", post(actions::rejudge))
        .route("/workers", get(pages::workers::workers))
        .route(
            "/login",
            get(pages::login::login_form).post(pages::login::login),
        )
        .route("/logout", post(pages::login::logout))
        .route("/assets/{*path}", get(assets::serve_asset))
        .fallback(not_found)
        .with_state(state)
        .layer(CompressionLayer::new())
        .layer(middleware::from_fn(log_path));
    (router, sender)
}

/// Serves the pages on `listener` until `shutdown` resolves; then live
/// streams end, open requests finish, and it returns.
pub async fn serve(
    listener: TcpListener,
    coordinator: Arc<Coordinator>,
    options: WebOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (router, stop) = build(coordinator, options);
    // Small responses answered at once: Nagle would hold the second
    // segment of a reply for the client's delayed ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    // Each live stream is counted against its client's address.
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        shutdown.await;
        stop.send_replace(true);
    })
    .await
}

async fn not_found() -> Response {
    error::WebError::NotFound("there is no such page".to_owned()).into_response()
}

/// Logs each request's method and path; never its query, headers or cookies.
async fn log_path(request: Request, next: Next) -> Response {
    tracing::debug!(method = %request.method(), path = request.uri().path(), "web request");
    next.run(request).await
}
