//! A server's form being filled in: one value per field, the field with the
//! focus, and the problems found on each. Checking and building the answer
//! are pure functions of this data (the backend checks it once more against
//! the server's own schema before anything is sent).

use std::time::Instant;

use serde_json::{Map, Number, Value};

use crate::protocol::{Choice, ElicitationView, FieldKind, FieldView, TextFormat};

/// What a field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    /// Text, number and integer fields, as typed.
    Text(String),
    /// `None`: not answered (an optional checkbox the operator did not touch).
    Bool(Option<bool>),
    /// The chosen option, if any.
    One(Option<usize>),
    /// Which options are chosen, and the option under the cursor.
    Many { chosen: Vec<bool>, cursor: usize },
}

/// A server's request for input, being filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitForm {
    pub view: ElicitationView,
    pub values: Vec<FieldValue>,
    /// The field with the focus (the first when the form opens).
    pub selected: usize,
    /// Per field: why its value cannot be sent.
    pub problems: Vec<Option<String>>,
    /// About the answer as a whole.
    pub problem: Option<String>,
    /// The answer went to the backend; the form waits for its word.
    pub sent: bool,
    /// When it came to the front: like an approval prompt, a form takes keys
    /// only after a quiet moment, so an Enter meant for the input box never
    /// sends it.
    pub opened: Instant,
}

impl ElicitForm {
    /// A new form with the schema's defaults filled in (those of the field's
    /// own type; a default of another type is left out).
    pub fn new(view: ElicitationView, now: Instant) -> Self {
        let values = view.fields.iter().map(initial).collect();
        let problems = vec![None; view.fields.len()];
        Self {
            view,
            values,
            selected: 0,
            problems,
            problem: None,
            sent: false,
            opened: now,
        }
    }

    /// Checks every field; on success the answer's content, in the server's order.
    pub fn answer(&mut self) -> Option<Map<String, Value>> {
        let mut content = Map::new();
        let mut ok = true;
        for (i, (field, value)) in self.view.fields.iter().zip(&self.values).enumerate() {
            match check(field, value) {
                Ok(Some(v)) => {
                    content.insert(field.name.clone(), v);
                    self.problems[i] = None;
                }
                Ok(None) => self.problems[i] = None,
                Err(problem) => {
                    ok = false;
                    self.problems[i] = Some(problem);
                }
            }
        }
        if !ok {
            // The first field with a problem gets the focus.
            if let Some(first) = self.problems.iter().position(Option::is_some) {
                self.selected = first;
            }
            self.problem = Some("fix the marked fields; nothing was sent".into());
            return None;
        }
        self.problem = None;
        Some(content)
    }
}

fn initial(field: &FieldView) -> FieldValue {
    let default = field.default.as_ref();
    match &field.kind {
        FieldKind::Boolean => FieldValue::Bool(
            default
                .and_then(Value::as_bool)
                .or((field.required).then_some(false)),
        ),
        FieldKind::Choice(options) => FieldValue::One(
            default
                .and_then(Value::as_str)
                .and_then(|d| options.iter().position(|o| o.value == d)),
        ),
        FieldKind::Choices { options, .. } => {
            let picked: Vec<&str> = default
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            FieldValue::Many {
                chosen: options
                    .iter()
                    .map(|o| picked.contains(&o.value.as_str()))
                    .collect(),
                cursor: 0,
            }
        }
        FieldKind::Text { .. } => {
            FieldValue::Text(default.and_then(Value::as_str).unwrap_or_default().into())
        }
        FieldKind::Number { .. } | FieldKind::Integer { .. } => FieldValue::Text(
            default
                .filter(|d| d.is_number())
                .map(ToString::to_string)
                .unwrap_or_default(),
        ),
    }
}

/// A field's value for the answer (`None`: left out), or why it cannot be sent.
fn check(field: &FieldView, value: &FieldValue) -> Result<Option<Value>, String> {
    let missing = || {
        if field.required {
            Err("required".to_string())
        } else {
            Ok(None)
        }
    };
    match (&field.kind, value) {
        (_, FieldValue::Text(t)) if t.trim().is_empty() => missing(),
        (
            FieldKind::Text {
                format,
                min_length,
                max_length,
            },
            FieldValue::Text(t),
        ) => {
            let n = t.chars().count() as u64;
            if let Some(min) = min_length.filter(|m| n < *m) {
                return Err(format!("at least {min} characters"));
            }
            if let Some(max) = max_length.filter(|m| n > *m) {
                return Err(format!("at most {max} characters"));
            }
            if let Some(format) = format
                && !looks_like(*format, t)
            {
                return Err(format!("must be {}", format.hint()));
            }
            Ok(Some(Value::String(t.clone())))
        }
        (FieldKind::Integer { minimum, maximum }, FieldValue::Text(t)) => {
            let n: i64 = t.trim().parse().map_err(|_| "a whole number".to_string())?;
            in_range(
                n as f64,
                minimum.map(|m| m as f64),
                maximum.map(|m| m as f64),
            )?;
            Ok(Some(Value::from(n)))
        }
        (FieldKind::Number { minimum, maximum }, FieldValue::Text(t)) => {
            let n: f64 = t.trim().parse().map_err(|_| "a number".to_string())?;
            in_range(n, *minimum, *maximum)?;
            Number::from_f64(n)
                .map(|n| Some(Value::Number(n)))
                .ok_or_else(|| "a finite number".to_string())
        }
        (FieldKind::Boolean, FieldValue::Bool(b)) => match b {
            Some(b) => Ok(Some(Value::Bool(*b))),
            None => missing(),
        },
        (FieldKind::Choice(options), FieldValue::One(at)) => {
            match at.and_then(|i| options.get(i)) {
                Some(choice) => Ok(Some(Value::String(choice.value.clone()))),
                None => missing(),
            }
        }
        (FieldKind::Choices { options, min, max }, FieldValue::Many { chosen, .. }) => {
            let picked: Vec<Value> = options
                .iter()
                .zip(chosen)
                .filter(|(_, c)| **c)
                .map(|(o, _)| Value::String(o.value.clone()))
                .collect();
            let n = picked.len() as u64;
            if n == 0 && min.is_none_or(|m| m == 0) {
                return if field.required {
                    Ok(Some(Value::Array(picked)))
                } else {
                    Ok(None)
                };
            }
            if let Some(min) = min.filter(|m| n < *m) {
                return Err(format!("choose at least {min}"));
            }
            if let Some(max) = max.filter(|m| n > *m) {
                return Err(format!("choose at most {max}"));
            }
            Ok(Some(Value::Array(picked)))
        }
        _ => Err("this field's value does not fit its kind".into()),
    }
}

fn in_range(n: f64, minimum: Option<f64>, maximum: Option<f64>) -> Result<(), String> {
    if let Some(min) = minimum.filter(|m| n < *m) {
        return Err(format!("at least {min}"));
    }
    if let Some(max) = maximum.filter(|m| n > *m) {
        return Err(format!("at most {max}"));
    }
    Ok(())
}

/// A lenient check of a format hint (the server's schema has the last word).
fn looks_like(format: TextFormat, t: &str) -> bool {
    let t = t.trim();
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let date = |d: &str| {
        let parts: Vec<&str> = d.split('-').collect();
        parts.len() == 3
            && parts[0].len() == 4
            && parts[1].len() == 2
            && parts[2].len() == 2
            && parts.iter().all(|p| digits(p))
    };
    match format {
        TextFormat::Email => t
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.') && !t.contains(' ')),
        TextFormat::Uri => t.split_once(':').is_some_and(|(scheme, rest)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
                && !t.contains(' ')
        }),
        TextFormat::Date => date(t),
        TextFormat::DateTime => t
            .split_once(['T', 't'])
            .is_some_and(|(d, time)| date(d) && time.len() >= 5),
    }
}

/// The label of an option: its title, else its value.
pub fn choice_label(choice: &Choice) -> &str {
    choice.title.as_deref().unwrap_or(&choice.value)
}
