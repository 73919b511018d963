//! The TUI. This module is the loop only: wait for something (a key, a backend
//! event, fresh views, a deadline), take in everything else already pending,
//! run the reducer on each, carry out its effects, draw once. It knows
//! `protocol` and its own state only.
//!
//! Layers, bottom up: `msg`, `state` (+ `cells`, `rows`), `keymap`, `theme`,
//! `sanitize`; `layout`, `content` and `mentions` (geometry, text and the
//! input box's completions, which both sides need);
//! then `update/` (the reducer) and `panes/` (the renderer), which never
//! import each other (a test reads the `use` lines and holds them to it).

pub mod cells;
pub mod clock;
pub mod content;
pub mod input;
pub mod keymap;
pub mod layout;
pub mod mentions;
pub mod msg;
pub mod offers;
pub mod panes;
pub mod pins;
pub mod rows;
pub mod sanitize;
pub mod state;
pub mod text;
pub mod theme;
pub mod update;

#[cfg(test)]
mod layering;

use std::io;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::watch;

use crate::protocol::{BackendEvent, Command, Views};
use msg::{Effect, Msg};
use state::AppState;
use update::update;

/// Frame interval while a call runs (its clock is on screen).
const TICK: Duration = Duration::from_millis(100);
/// How long quitting may wait for the backend to close every server.
const QUIT_BOUND: Duration = Duration::from_secs(15);
/// At most this many pending messages go into one frame (a flood of input
/// still gets a frame now and then).
const BATCH: usize = 4096;

/// Why the UI ended when the backend went away without a word.
const BACKEND_GONE: &str = "the backend stopped unexpectedly; see the log file";

/// The backend's ends the UI reads and writes.
pub struct Channels {
    pub commands: UnboundedSender<Command>,
    pub events: UnboundedReceiver<BackendEvent>,
    pub views: watch::Receiver<Views>,
}

/// Runs the TUI on the real terminal until the operator quits. The terminal is
/// restored on every path (ratatui's panic hook covers panics).
pub async fn run_terminal(channels: Channels) -> io::Result<()> {
    let mut terminal = ratatui::init();
    // A panic on the thread that runs this loop: ratatui's hook restores the
    // terminal, then the process ends at once (a half-alive UI is worse; servers
    // die with us through their parent-death signal). A panic anywhere else (a
    // turn, a backend task) unwinds into its task's `JoinError`, which the
    // backend reports (a crashed turn) or the UI sees as the backend gone; it
    // goes to the log, never to the terminal the UI is drawing on.
    let ui_thread = std::thread::current().id();
    let restore_terminal = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != ui_thread {
            let thread = std::thread::current();
            tracing::error!(
                "panic in thread '{}': {info}",
                thread.name().unwrap_or("unnamed")
            );
            return;
        }
        // The cursor too: the abort below skips the `Terminal`'s drop, which shows it.
        let _ = crossterm::execute!(
            io::stdout(),
            DisableMouseCapture,
            DisableBracketedPaste,
            crossterm::cursor::Show
        );
        restore_terminal(info);
        std::process::abort();
    }));
    let _ = crossterm::execute!(io::stdout(), EnableMouseCapture, EnableBracketedPaste);
    let result = run(&mut terminal, terminal_input(), channels).await;
    let _ = crossterm::execute!(io::stdout(), DisableMouseCapture, DisableBracketedPaste);
    ratatui::restore();
    result
}

/// The terminal's events, read on a thread of its own: everything already
/// read waits in the channel, so the loop takes a whole burst into one frame.
/// (The thread blocks in the read; it ends with the process.)
fn terminal_input() -> impl Stream<Item = Event> + Unpin {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let spawned = std::thread::Builder::new()
        .name("terminal input".into())
        .spawn(move || {
            while let Ok(event) = crossterm::event::read() {
                if tx.send(event).is_err() {
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the terminal input thread: {e}");
    }
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// What woke the loop. One per wake-up, moved once: boxing the large
/// variant would allocate per key for nothing.
#[allow(clippy::large_enum_variant)]
enum Wake {
    Msg(Msg),
    /// Nothing to react to (an input event the UI does not use).
    Ignore,
    /// The views channel closed: the backend task is gone (it alone holds the
    /// sender), after a normal end or a panic.
    ViewsClosed,
    /// The backend stopped answering in time, or went away.
    Done(io::Result<()>),
}

/// The loop, over any ratatui backend and any stream of input events (tests use
/// `TestBackend` and scripted keys).
pub async fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    input: impl Stream<Item = Event> + Unpin,
    mut channels: Channels,
) -> io::Result<()>
where
    B::Error: Into<io::Error>,
{
    // Keys whose escape sequence a read cut in two are joined again.
    let mut input = input::Unsplit::new(input);
    let mut state = AppState::new(Instant::now());
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut quit_deadline: Option<tokio::time::Instant> = None;
    let mut views_open = true;
    let mut input_open = true;
    draw(terminal, &mut state)?;
    // The start-up benchmark reads this line's timestamp from the log.
    tracing::info!("first frame drawn");
    loop {
        let wakeup = state.next_wakeup(TICK).map(tokio::time::Instant::from_std);
        let woke = tokio::select! {
            event = input.next(), if input_open => match event {
                Some(event) => input_msg(event).map_or(Wake::Ignore, Wake::Msg),
                // No more input (a closed terminal): quit.
                None => {
                    input_open = false;
                    quit(&mut state, &channels.commands, &mut quit_deadline)
                }
            },
            event = channels.events.recv() => match event {
                Some(event) => Wake::Msg(Msg::Backend(event)),
                // The backend is gone (it crashed): nothing left to wait for.
                None => Wake::Done(Err(io::Error::other(BACKEND_GONE))),
            },
            changed = channels.views.changed(), if views_open => match changed {
                Ok(()) => Wake::Msg(Msg::Views(channels.views.borrow_and_update().clone())),
                Err(_) => Wake::ViewsClosed,
            },
            _ = terminate.recv() => quit(&mut state, &channels.commands, &mut quit_deadline),
            _ = sleep_until(wakeup), if wakeup.is_some() => Wake::Msg(Msg::Tick),
            _ = sleep_until(quit_deadline), if quit_deadline.is_some() => Wake::Done(Ok(())),
        };
        let mut batch = match woke {
            Wake::Msg(msg) => vec![msg],
            Wake::Ignore => continue,
            Wake::ViewsClosed => {
                views_open = false;
                // A backend that ended normally sent `Stopped` before it went:
                // it is queued. One that panicked never sends it (and clones of
                // its event sender may outlive it, so the events never close).
                let queued: Vec<Msg> = std::iter::from_fn(|| channels.events.try_recv().ok())
                    .map(Msg::Backend)
                    .collect();
                if !queued
                    .iter()
                    .any(|m| matches!(m, Msg::Backend(BackendEvent::Stopped)))
                {
                    return Err(io::Error::other(BACKEND_GONE));
                }
                queued
            }
            Wake::Done(result) => return result,
        };
        // Everything already pending goes into this frame: one draw per batch,
        // however many keys or events arrived together.
        pending(&mut batch, input_open.then_some(&mut input), &mut channels).await;
        for msg in batch {
            state.now = Instant::now();
            for effect in update(&mut state, msg) {
                match effect {
                    Effect::Send(command) => {
                        if command == Command::Quit {
                            quit_deadline.get_or_insert(tokio::time::Instant::now() + QUIT_BOUND);
                        }
                        let _ = channels.commands.send(command);
                    }
                    Effect::Exit => return Ok(()),
                }
            }
        }
        draw(terminal, &mut state)?;
    }
}

/// The message for an input event (`None`: nothing the UI reacts to).
fn input_msg(event: Event) -> Option<Msg> {
    match event {
        Event::Key(key) => Some(Msg::Key(key)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        Event::Mouse(mouse) => Some(Msg::Mouse(mouse)),
        Event::Resize(width, height) => Some(Msg::Resize { width, height }),
        _ => None,
    }
}

/// Adds what is already waiting to `batch`: backend events (in order), the
/// newest views, and input the terminal has already sent. Never waits.
async fn pending<S: Stream<Item = Event> + Unpin>(
    batch: &mut Vec<Msg>,
    input: Option<&mut S>,
    channels: &mut Channels,
) {
    while batch.len() < BATCH
        && let Ok(event) = channels.events.try_recv()
    {
        batch.push(Msg::Backend(event));
    }
    if channels.views.has_changed().unwrap_or(false) {
        batch.push(Msg::Views(channels.views.borrow_and_update().clone()));
    }
    let Some(input) = input else {
        return;
    };
    // Polled with this task's own waker, so a `Pending` here still wakes the
    // loop when the input arrives.
    while batch.len() < BATCH {
        let next =
            std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *input).poll_next(cx))).await;
        match next {
            Poll::Ready(Some(event)) => batch.extend(input_msg(event)),
            // The end of input is the select's to notice.
            Poll::Ready(None) | Poll::Pending => break,
        }
    }
}

fn quit(
    state: &mut AppState,
    commands: &UnboundedSender<Command>,
    deadline: &mut Option<tokio::time::Instant>,
) -> Wake {
    if deadline.is_none() {
        state.quitting = true;
        *deadline = Some(tokio::time::Instant::now() + QUIT_BOUND);
        let _ = commands.send(Command::Quit);
    }
    Wake::Msg(Msg::Tick)
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

fn draw<B: Backend>(terminal: &mut Terminal<B>, state: &mut AppState) -> io::Result<()>
where
    B::Error: Into<io::Error>,
{
    let size = terminal.size().map_err(Into::into)?;
    state.area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
    terminal
        .draw(|frame| panes::draw(frame, state))
        .map_err(Into::into)?;
    Ok(())
}
