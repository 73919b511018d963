//! The requests a connection makes: each bounded by its deadline (reset by
//! progress where allowed), cancelled on the server when dropped, and every
//! failure mapped to a `RequestError` in the harness's words.

use super::lane::Lane;
use super::*;

/// How long a request may wait for its answer.
#[derive(Clone, Copy)]
pub(super) struct Deadline {
    /// Without an answer for this long (or, under `progress_until`, without
    /// progress either), the request times out.
    pub idle: Duration,
    /// Progress notifications restart the timer, up to this long in all.
    pub progress_until: Option<Duration>,
}

/// A progress notification for the request (never, if it has no route).
async fn progress(signal: Option<&tokio::sync::Notify>) {
    match signal {
        Some(signal) => signal.notified().await,
        None => std::future::pending().await,
    }
}

/// A JSON-RPC error object as the server sent it, in the harness's terms.
fn remote(error: &Value) -> RequestError {
    RequestError::Remote {
        code: error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(rmcp::model::ErrorCode::INTERNAL_ERROR.0),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

impl Connection {
    /// Sends one request and waits for its answer, at most `timeout`. A timeout or
    /// a dropped future sends `notifications/cancelled` for the request.
    ///
    /// Private to `mcp/`: from outside, the only way to reach a server is the
    /// validated call path (`Hub::call`: snapshot, schema, policy, approval).
    pub(in crate::mcp) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<ServerResult, RequestError> {
        self.request_with_id(method, params, timeout, |_| {}).await
    }

    /// [`Self::request`]; `sent` learns the JSON-RPC id the request went out with.
    pub(super) async fn request_with_id(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        sent: impl FnOnce(&RequestId),
    ) -> Result<ServerResult, RequestError> {
        let deadline = Deadline {
            idle: timeout,
            progress_until: None,
        };
        self.request_with_deadline(method, params, deadline, |id, _| sent(id))
            .await
    }

    /// The one way a request goes out; `sent` learns its JSON-RPC id and
    /// progress token (on the fast lane, before the request is written).
    pub(super) async fn request_with_deadline(
        &self,
        method: &str,
        params: Value,
        deadline: Deadline,
        sent: impl FnOnce(&RequestId, &ProgressToken),
    ) -> Result<ServerResult, RequestError> {
        if self.end_reason().is_some() {
            return Err(self.ended_error());
        }
        if let Some(lane) = &self.lane {
            return self.on_lane(lane, method, params, deadline, sent).await;
        }
        let mut options = PeerRequestOptions::with_timeout(deadline.idle);
        if let Some(until) = deadline.progress_until {
            options = options
                .reset_timeout_on_progress()
                .with_max_total_timeout(until);
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => {
                return match self.map_error(e) {
                    RequestError::Lost(_) => Err(self.lost_once_ended().await),
                    other => Err(other),
                };
            }
        };
        sent(&handle.id, &handle.progress_token);
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let result = tokio::select! {
            result = handle.await_response() => result.map_err(|e| self.map_error(e)),
            _ = self.ended() => Err(self.ended_error()),
        };
        // await_response already sent the cancellation on timeout; a dead transport needs none.
        guard.id = None;
        if let Err(RequestError::Lost(_)) = result {
            return Err(self.lost_once_ended().await);
        }
        result
    }

    /// [`Self::request_with_deadline`] on the stdio fast lane (see `lane`):
    /// the same deadline, progress and cancellation as rmcp's path.
    async fn on_lane(
        &self,
        lane: &Lane,
        method: &str,
        params: Value,
        deadline: Deadline,
        sent: impl FnOnce(&RequestId, &ProgressToken),
    ) -> Result<ServerResult, RequestError> {
        let key = lane.next_id();
        let id = RequestId::String(Arc::clone(&key));
        sent(&id, &ProgressToken(id.clone()));
        let progressed = deadline
            .progress_until
            .and_then(|_| client::progress_signal(&self.parts.routes, &key));
        // Dropped before the answer (a timeout, or the caller gave up): the
        // server is told to stop.
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            id: Some(id),
        };
        let started = tokio::time::Instant::now();
        let timer = tokio::time::sleep(deadline.idle);
        tokio::pin!(timer);
        let mut waiting = tokio::select! {
            sent = lane.send(key, method, params) => match sent {
                Ok(waiting) => waiting,
                Err(_) => {
                    guard.id = None;
                    return Err(self.lost_once_ended().await);
                }
            },
            () = &mut timer => return Err(RequestError::Timeout(deadline.idle)),
            () = self.ended() => {
                guard.id = None;
                return Err(self.ended_error());
            }
        };
        loop {
            tokio::select! {
                answer = waiting.answer() => {
                    guard.id = None;
                    return match answer {
                        Some(Ok(result)) => Ok(ServerResult::CustomResult(CustomResult(result))),
                        Some(Err(error)) => Err(remote(&error)),
                        None => Err(self.lost_once_ended().await),
                    };
                }
                () = &mut timer => return Err(RequestError::Timeout(deadline.idle)),
                () = progress(progressed.as_deref()) => {
                    let until = started + deadline.progress_until.unwrap_or(deadline.idle);
                    timer.as_mut().reset((tokio::time::Instant::now() + deadline.idle).min(until));
                }
                () = self.ended() => {
                    guard.id = None;
                    return Err(self.ended_error());
                }
            }
        }
    }

    /// A request whose answer may be large or slow (`tools/call`,
    /// `resources/read`, `prompts/get`, a task's outcome): what the stdio gate
    /// cut from the response comes with it, and, for a call (`call` names it),
    /// progress notifications restart the timer (bounded by `max_call`) and are
    /// told apart by `call`. The route of the call's progress token lives as long
    /// as the returned [`Long::route`] (a task keeps it for its whole run).
    pub(in crate::mcp) async fn request_long(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        call: Option<&crate::mcp::call::CallIdentity>,
    ) -> Result<Long, RequestError> {
        let deadline = Deadline {
            idle: timeout,
            progress_until: (call.is_some() && self.reset_timeout_on_progress)
                .then(|| self.max_call.max(timeout)),
        };
        let key = std::sync::Mutex::new(None);
        let route = std::sync::Mutex::new(None);
        let started = Instant::now();
        let result = self
            .request_with_deadline(method, params, deadline, |id, token| {
                *key.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(crate::mcp::spill::lexer::id_key(id.to_string().as_bytes()));
                if let Some(call) = call {
                    *route.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(client::ProgressRoute::register(
                            &self.parts.routes,
                            token.0.to_string(),
                            call.clone(),
                            id.clone(),
                        ));
                }
            })
            .await;
        let spilled = key
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .and_then(|key| self.spills.take(&key));
        match result {
            // Which bound ended it: the idle timer, or `max_call` after progress.
            Err(RequestError::Timeout(after))
                if call.is_some() && started.elapsed() >= self.max_call =>
            {
                Err(RequestError::Timeout(after.max(self.max_call)))
            }
            Err(e) => Err(e),
            Ok(result) => Ok(Long {
                result,
                spilled,
                route: route.into_inner().unwrap_or_else(|e| e.into_inner()),
            }),
        }
    }

    /// The transport usually closes a moment before the watchdog has the exit
    /// status (it waits up to `EXIT_STATUS_WAIT` for it); wait longer than that
    /// so the error can say how the server ended.
    pub(super) async fn lost_once_ended(&self) -> RequestError {
        let wait = watchdog::EXIT_STATUS_WAIT * 2;
        let _ = tokio::time::timeout(wait, self.ended()).await;
        self.ended_error()
    }

    /// [`Self::request`]'s answer as the JSON the server sent: over stdio a raw
    /// request's result is parsed once, as JSON (see `wire`); over HTTP the
    /// transport's copy of the answer (see `rawtap`) stands in for rmcp's
    /// typed one, which may lack fields.
    pub(in crate::mcp) async fn request_raw(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RequestError> {
        let _armed = self.tap.arm();
        let id = std::sync::Mutex::new(None);
        let result = self
            .request_with_id(method, params, timeout, |sent| {
                *id.lock().unwrap_or_else(|e| e.into_inner()) = Some(sent.clone());
            })
            .await?;
        if let ServerResult::CustomResult(CustomResult(raw)) = result {
            return Ok(raw);
        }
        let tapped = id
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .and_then(|id| self.tap.result_for(&id));
        Ok(tapped.unwrap_or_else(|| super::raw(result)))
    }

    /// Why a request cannot be answered on an ended connection: the sign-in
    /// was refused for good, or the connection was lost (and how).
    pub(super) fn ended_error(&self) -> RequestError {
        match self.end_reason() {
            Some(EndReason::AuthLost) => RequestError::Unauthorized(self.denial()),
            _ => RequestError::Lost(self.lost_detail()),
        }
    }

    pub(super) fn map_error(&self, error: ServiceError) -> RequestError {
        if error.is_authorization_required() {
            return RequestError::Unauthorized(self.denial());
        }
        // A 403 step-up challenge the session could not meet (no person to
        // sign in headless, or three tries with the client's own grant): only
        // this request is refused. rmcp does not count it as "authorization
        // required", and as a plain transport error it would end the connection.
        if error
            .auth_challenge()
            .is_some_and(|h| crate::mcp::auth::challenge::parse(h).is_insufficient_scope())
        {
            let mut denial = self.denial();
            denial.more_scope = true;
            return RequestError::Unauthorized(denial);
        }
        match error {
            ServiceError::Timeout { timeout } => RequestError::Timeout(timeout),
            ServiceError::McpError(e) => RequestError::Remote {
                code: e.code.0,
                message: e.message.to_string(),
            },
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => RequestError::Lost(self.lost_detail()),
            other => RequestError::Lost(format!("protocol error: {other}")),
        }
    }

    /// Why the server's refusal stands, from the OAuth session if there is one.
    pub(in crate::mcp) fn denial(&self) -> AuthDenial {
        match self.auth.as_ref().and_then(|s| s.failure()) {
            Some(f) => AuthDenial::from_failure(self.alias.as_str(), f),
            None => AuthDenial::plain(self.alias.as_str()),
        }
    }

    /// The OAuth session (HTTP servers that use OAuth).
    pub fn auth(&self) -> Option<&Arc<crate::mcp::auth::AuthSession>> {
        self.auth.as_ref()
    }

    pub(super) fn lost_detail(&self) -> String {
        self.end_reason()
            .map(ToString::to_string)
            .unwrap_or_else(|| "the transport closed".into())
    }
}
