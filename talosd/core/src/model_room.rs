//! Which managed model server a turn uses, starts or stops: one rule over the daemon's table
//! of servers, so that several models with `model.max_running` neither deadlock nor stop a
//! server under a turn.
//!
//! The daemon holds the table under one lock and applies the answer before letting go of it,
//! so what the rule read is what it acts on. Three choices keep it free of deadlock:
//! - only a turn that is using a server (a *user*) holds it; a turn that waits holds nothing,
//!   so waiting turns never keep a server busy for a turn that waits on them;
//! - a turn waits only while holding nothing: the start lock is taken only to stop a server
//!   that has no user, which ends on its own, and never while waiting for one to become idle;
//! - waiting turns are served oldest first, with a bounded exception: a new turn may join the
//!   running server of its model past an older turn waiting for another model at most
//!   [`PATIENCE`] times (a switch costs a model load, so turns for the loaded model go
//!   together); after that new turns wait too, the busy servers drain and the oldest turn gets
//!   its room (no turn waits forever behind a stream of others).

/// One managed server as the table holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Server {
    /// The model it runs (the daemon's index of the entry).
    pub model: usize,
    pub phase: Phase,
    /// Turns using it now.
    pub users: usize,
    /// When it was last taken by a turn: an order, not a clock.
    pub last_use: u64,
}

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Started and loading (or restarting): it takes requests soon.
    Loading,
    Ready,
    /// It failed and stays failed: it holds no memory, and a turn on it learns why.
    Failed,
    /// Being stopped to make room: it still holds its memory until it has exited.
    Stopping,
}

/// How many turns may join a running server past an older turn waiting for another model.
pub const PATIENCE: usize = 8;

/// A turn waiting for room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    pub model: usize,
    /// How many turns joined a running server past it so far.
    pub passed: usize,
}

/// Who holds the start lock: the turn stopping a server to start its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    Free,
    /// The turn asking holds it (its stop has ended).
    Mine,
    /// Another turn holds it.
    Other,
}

/// The table as one turn sees it.
#[derive(Debug, Clone, Copy)]
pub struct Room<'a> {
    pub servers: &'a [Server],
    pub max_running: usize,
    /// The turns that began waiting before this one, oldest first.
    pub older_waiting: &'a [Waiting],
    pub lock: Lock,
}

/// What the turn asking for `wanted` does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Use the server of the model that runs (or loads, or failed): become one of its users
    /// (the older turns waiting for another model count one more pass).
    Use,
    /// Start the model's server and become its first user.
    Start,
    /// Take the start lock and stop the server of this model (it has no user), then ask again.
    Evict(usize),
    /// Hold nothing and ask again when the table changes.
    Wait,
}

/// Whether a server counts against `model.max_running`.
fn holds_room(server: &Server) -> bool {
    server.phase != Phase::Failed
}

/// The rule: see the module's description.
pub fn decide(room: &Room<'_>, wanted: usize) -> Action {
    let own = room.servers.iter().find(|s| s.model == wanted);
    match own.map(|s| s.phase) {
        Some(Phase::Failed) => return Action::Use,
        Some(Phase::Stopping) => return Action::Wait,
        Some(Phase::Loading | Phase::Ready) => {
            // An older turn that waits for another model, and was passed often enough, goes
            // first; one that waits for this model is served by the same server.
            let out_of_patience = room
                .older_waiting
                .iter()
                .any(|w| w.model != wanted && w.passed >= PATIENCE);
            return if out_of_patience {
                Action::Wait
            } else {
                Action::Use
            };
        }
        None => {}
    }
    if !room.older_waiting.is_empty() || room.lock == Lock::Other {
        return Action::Wait;
    }
    let running = room.servers.iter().filter(|s| holds_room(s)).count();
    if running < room.max_running.max(1) {
        return Action::Start;
    }
    room.servers
        .iter()
        .filter(|s| matches!(s.phase, Phase::Loading | Phase::Ready) && s.users == 0)
        .min_by_key(|s| s.last_use)
        .map_or(Action::Wait, |s| Action::Evict(s.model))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(model: usize, phase: Phase, users: usize, last_use: u64) -> Server {
        Server {
            model,
            phase,
            users,
            last_use,
        }
    }

    fn w(model: usize, passed: usize) -> Waiting {
        Waiting { model, passed }
    }

    const X: usize = 0;
    const Y: usize = 1;
    const Z: usize = 2;

    /// Each row: the servers, `max_running`, the older waiting turns' models, the lock, the
    /// model asked for, and the action.
    #[test]
    fn start_lease_evict_rows() {
        use Phase::{Failed, Loading, Ready, Stopping};
        let rows: &[(&str, &[Server], usize, &[Waiting], Lock, usize, Action)] = &[
            ("nothing runs", &[], 1, &[], Lock::Free, X, Action::Start),
            (
                "own server ready",
                &[server(X, Ready, 2, 5)],
                1,
                &[],
                Lock::Free,
                X,
                Action::Use,
            ),
            (
                "own server loading",
                &[server(X, Loading, 1, 5)],
                1,
                &[],
                Lock::Free,
                X,
                Action::Use,
            ),
            (
                "own server failed: learn why",
                &[server(X, Failed, 0, 5)],
                1,
                &[w(Y, PATIENCE)],
                Lock::Other,
                X,
                Action::Use,
            ),
            (
                "a failed server holds no room",
                &[server(X, Failed, 0, 5)],
                1,
                &[],
                Lock::Free,
                Y,
                Action::Start,
            ),
            (
                "room left",
                &[server(X, Ready, 1, 5)],
                2,
                &[],
                Lock::Free,
                Y,
                Action::Start,
            ),
            (
                "full, the idle one goes",
                &[server(X, Ready, 0, 5)],
                1,
                &[],
                Lock::Free,
                Y,
                Action::Evict(X),
            ),
            (
                "full, the idle one used longest ago goes",
                &[
                    server(X, Ready, 0, 7),
                    server(Y, Ready, 0, 2),
                    server(Z, Ready, 1, 1),
                ],
                3,
                &[],
                Lock::Free,
                3,
                Action::Evict(Y),
            ),
            (
                "an idle loading server may go",
                &[server(X, Loading, 0, 4)],
                1,
                &[],
                Lock::Free,
                Y,
                Action::Evict(X),
            ),
            (
                "full and busy: wait, holding nothing",
                &[server(X, Ready, 1, 5)],
                1,
                &[],
                Lock::Free,
                Y,
                Action::Wait,
            ),
            // The deadlock of a start lock held while waiting: the turn that wants Y waits
            // holding nothing, and the turns for X that began waiting after it still use X
            // once it runs (no lock between them and their server).
            (
                "deadlock row: the Y turn waits without the lock",
                &[server(X, Ready, 1, 5)],
                1,
                &[],
                Lock::Free,
                Y,
                Action::Wait,
            ),
            (
                "deadlock row: a turn for X behind no other model uses X",
                &[server(X, Loading, 1, 5)],
                1,
                &[w(X, 0)],
                Lock::Free,
                X,
                Action::Use,
            ),
            (
                "deadlock row: the X turns drained, the oldest Y turn stops X",
                &[server(X, Ready, 0, 5)],
                1,
                &[],
                Lock::Free,
                Y,
                Action::Evict(X),
            ),
            // Oldest first, with patience: a new turn for a running X joins it past an older
            // turn waiting for Y a few times, then no more, so X drains.
            (
                "patient: a new X turn joins X past an older Y turn",
                &[server(X, Ready, 1, 5)],
                1,
                &[w(Y, PATIENCE - 1)],
                Lock::Free,
                X,
                Action::Use,
            ),
            (
                "fair: past patience a new X turn waits behind the Y turn",
                &[server(X, Ready, 1, 5)],
                1,
                &[w(X, 0), w(Y, PATIENCE)],
                Lock::Free,
                X,
                Action::Wait,
            ),
            (
                "fair: a younger turn does not start before an older one",
                &[],
                1,
                &[w(Y, 0)],
                Lock::Free,
                X,
                Action::Wait,
            ),
            // The server stopped under a turn: a server with a user is never chosen, and once
            // chosen it is Stopping, so a turn arriving for it waits instead of using it.
            (
                "no stop under a user",
                &[server(X, Ready, 1, 5), server(Y, Ready, 1, 6)],
                2,
                &[],
                Lock::Free,
                Z,
                Action::Wait,
            ),
            (
                "a turn for a server being stopped waits",
                &[server(X, Stopping, 0, 5)],
                1,
                &[],
                Lock::Other,
                X,
                Action::Wait,
            ),
            (
                "a stopping server still holds its room",
                &[server(X, Stopping, 0, 5)],
                1,
                &[],
                Lock::Free,
                Y,
                Action::Wait,
            ),
            (
                "another turn holds the start lock",
                &[server(X, Stopping, 0, 5)],
                2,
                &[],
                Lock::Other,
                Y,
                Action::Wait,
            ),
            (
                "the lock holder, its stop done, starts",
                &[],
                1,
                &[],
                Lock::Mine,
                Y,
                Action::Start,
            ),
            (
                "max_running 0 is read as 1",
                &[],
                0,
                &[],
                Lock::Free,
                X,
                Action::Start,
            ),
        ];
        for (name, servers, max_running, older, lock, wanted, want) in rows {
            let room = Room {
                servers,
                max_running: *max_running,
                older_waiting: older,
                lock: *lock,
            };
            assert_eq!(decide(&room, *wanted), *want, "{name}");
        }
    }

    /// Proves the rule never deadlocks: in every small table, the oldest waiting turn, once
    /// the users of the servers have finished, gets its model within a few steps.
    #[test]
    fn the_oldest_turn_always_gets_its_model_once_users_finish() {
        use Phase::{Failed, Loading, Ready, Stopping};
        let phases = [Loading, Ready, Failed, Stopping];
        for max_running in 1..=3 {
            for a in 0..4 {
                for b in 0..4 {
                    let mut servers = vec![server(X, phases[a], 0, 1), server(Y, phases[b], 0, 2)];
                    let mut lock = if servers.iter().any(|s| s.phase == Stopping) {
                        Lock::Other
                    } else {
                        Lock::Free
                    };
                    let mut got = false;
                    for _ in 0..6 {
                        let room = Room {
                            servers: &servers,
                            max_running,
                            older_waiting: &[],
                            lock,
                        };
                        match decide(&room, Z) {
                            Action::Use | Action::Start => {
                                got = true;
                                break;
                            }
                            Action::Evict(m) => {
                                servers.retain(|s| s.model != m);
                                lock = Lock::Mine;
                            }
                            // The stop another turn began ends on its own.
                            Action::Wait => {
                                servers.retain(|s| s.phase != Stopping);
                                lock = Lock::Free;
                            }
                        }
                    }
                    assert!(got, "max {max_running}, phases {a} {b}");
                }
            }
        }
    }
}
