//! The TUI: a loop over terminal input and backend events that updates the state
//! through the reducer and redraws on demand. It knows `protocol` and its own
//! state only.

pub mod approval;
pub mod elicit;
pub mod input;
pub mod keymap;
pub mod mouse;
pub mod overlay;
pub mod panes;
pub mod sanitize;
pub mod scroll;
pub mod state;
pub mod theme;
pub mod update;
pub mod view;

use std::io;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::protocol::{BackendEvent, Command};
use state::AppState;
use update::{Effect, Msg, update};

/// Frame interval while a call runs (its clock is on screen).
const TICK: Duration = Duration::from_millis(100);
/// How long quitting may wait for the backend to close every server.
const QUIT_BOUND: Duration = Duration::from_secs(15);

/// Runs the TUI on the real terminal until the operator quits. The terminal is
/// restored on every path (ratatui's panic hook covers panics).
pub async fn run_terminal(
    commands: UnboundedSender<Command>,
    events: UnboundedReceiver<BackendEvent>,
) -> io::Result<()> {
    let mut terminal = ratatui::init();
    // ratatui's hook restores the terminal; then end the process at once: a panic
    // in any task must not leave a half-alive UI (servers die with us through
    // their parent-death signal).
    let restore_terminal = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
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
    let input = crossterm::event::EventStream::new().filter_map(|e| async move { e.ok() });
    let result = run(&mut terminal, Box::pin(input), commands, events).await;
    let _ = crossterm::execute!(io::stdout(), DisableMouseCapture, DisableBracketedPaste);
    ratatui::restore();
    result
}

/// The loop, over any ratatui backend and any stream of input events (tests use
/// `TestBackend` and scripted keys).
pub async fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    mut input: impl Stream<Item = Event> + Unpin,
    commands: UnboundedSender<Command>,
    mut events: UnboundedReceiver<BackendEvent>,
) -> io::Result<()>
where
    B::Error: Into<io::Error>,
{
    let mut state = AppState::new(Instant::now());
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut quit_deadline: Option<tokio::time::Instant> = None;
    draw(terminal, &mut state)?;
    // The start-up benchmark reads this line's timestamp from the log.
    tracing::info!("first frame drawn");
    loop {
        let wakeup = state.next_wakeup(TICK).map(tokio::time::Instant::from_std);
        let msg = tokio::select! {
            event = input.next() => match event {
                Some(Event::Key(key)) => Msg::Key(key),
                Some(Event::Paste(text)) => Msg::Paste(text),
                Some(Event::Mouse(mouse)) => Msg::Mouse(mouse),
                Some(Event::Resize(width, height)) => {
                    // The reducer keeps scrolls within what fits at the new size.
                    state.area = ratatui::layout::Rect::new(0, 0, width, height);
                    Msg::Resize
                }
                Some(_) => continue,
                // No more input (a closed terminal): quit.
                None => quit_msg(&mut state, &commands, &mut quit_deadline),
            },
            event = events.recv() => match event {
                Some(event) => Msg::Backend(event),
                // The backend is gone (it crashed): nothing left to wait for.
                None => return Err(io::Error::other("the backend stopped unexpectedly; see the log file")),
            },
            _ = terminate.recv() => quit_msg(&mut state, &commands, &mut quit_deadline),
            _ = sleep_until(wakeup), if wakeup.is_some() => Msg::Tick,
            _ = sleep_until(quit_deadline), if quit_deadline.is_some() => return Ok(()),
        };
        state.now = Instant::now();
        for effect in update(&mut state, msg) {
            match effect {
                Effect::Send(command) => {
                    if command == Command::Quit {
                        quit_deadline.get_or_insert(tokio::time::Instant::now() + QUIT_BOUND);
                    }
                    let _ = commands.send(command);
                }
                Effect::Exit => return Ok(()),
            }
        }
        draw(terminal, &mut state)?;
    }
}

fn quit_msg(
    state: &mut AppState,
    commands: &UnboundedSender<Command>,
    deadline: &mut Option<tokio::time::Instant>,
) -> Msg {
    if deadline.is_none() {
        state.quitting = true;
        *deadline = Some(tokio::time::Instant::now() + QUIT_BOUND);
        let _ = commands.send(Command::Quit);
    }
    Msg::Tick
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
