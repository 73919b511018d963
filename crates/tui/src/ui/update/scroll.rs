//! Conversation scrolling, kept within its content: the reducer measures the
//! cells with the same function that draws them (at the width of the pane as
//! laid out now), so a scroll never runs past the top and the selected cell is
//! always on screen. Drawing stays read-only; only keys and the mouse move the
//! view.

use crate::ui::cells;
use crate::ui::layout::conversation_viewport as viewport;
use crate::ui::state::AppState;

/// Lines of the cells from `first` to the end (each with its blank line).
fn lines_from(state: &AppState, first: usize, width: usize) -> usize {
    (first.min(state.cells.len())..state.cells.len())
        .map(|i| state.cells.height(i, width))
        .sum()
}

/// Lines of the whole content, counted from the bottom, up to `enough` (no
/// need to measure a long session past what the view can reach).
fn content_lines(state: &AppState, width: usize, enough: usize) -> usize {
    let mut total = 0;
    for i in (0..state.cells.len()).rev() {
        total += state.cells.height(i, width);
        if total >= enough {
            return total;
        }
    }
    let banner = if state.banner {
        cells::banner(width).len()
    } else {
        0
    };
    total + banner
}

/// Scrolls by `lines` (up when positive), within the content.
pub fn by(state: &mut AppState, lines: i32) {
    state.scroll_back = if lines >= 0 {
        state.scroll_back.saturating_add(lines as u16)
    } else {
        state
            .scroll_back
            .saturating_sub(lines.unsigned_abs() as u16)
    };
    clamp(state);
}

/// Keeps the scroll within the content: at most one screen below the top.
pub fn clamp(state: &mut AppState) {
    let Some((width, height)) = viewport(state) else {
        return;
    };
    let wanted = state.scroll_back as usize + height;
    let total = content_lines(state, width, wanted);
    let max = total.saturating_sub(height);
    state.scroll_back = state
        .scroll_back
        .min(u16::try_from(max).unwrap_or(u16::MAX));
}

/// Scrolls just enough that the selected cell is on screen (its top, when it
/// is taller than the view).
pub fn follow_selection(state: &mut AppState) {
    let Some((width, height)) = viewport(state) else {
        return;
    };
    let Some(selected) = state.selected_cell.filter(|i| *i < state.cells.len()) else {
        state.scroll_back = 0;
        return;
    };
    // Lines from the bottom: below the cell, and the cell with its blank line.
    let below = lines_from(state, selected + 1, width);
    let own = state.cells.height(selected, width);
    let mut scroll = state.scroll_back as usize;
    if below < scroll {
        scroll = below;
    }
    if below + own > scroll + height {
        scroll = (below + own).saturating_sub(height);
    }
    state.scroll_back = u16::try_from(scroll).unwrap_or(u16::MAX);
    clamp(state);
}
