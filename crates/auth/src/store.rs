//! Where tokens and client registrations live between runs: one JSON file in
//! the data dir, mode 0600 in a 0700 directory, tokens keyed by issuer and
//! resource, registrations by issuer (RFC 6749: a client ID belongs to the
//! server that issued it). Writes go through a temporary file and a rename,
//! under an advisory lock, so two harnesses never interleave.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use url::Url;

use super::error::OAuthError;
use super::origin;
use super::spec::Secret;

/// A client registration (dynamic, or a client ID metadata document).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredClient {
    pub issuer: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// `token_endpoint_auth_method` as registered.
    pub method: String,
    pub redirect_uri: String,
}

/// Tokens for one resource from one issuer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredToken {
    pub issuer: String,
    pub resource: String,
    pub client_id: String,
    pub access_token: Secret,
    pub token_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default)]
    pub scopes: Vec<String>,
    pub obtained_at: u64,
    /// Where to refresh it and where to revoke it (from the issuer's metadata).
    pub token_endpoint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// The key a DPoP-bound token is bound to (RFC 9449), base64url PKCS#8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Data {
    version: u32,
    #[serde(default)]
    clients: Vec<StoredClient>,
    #[serde(default)]
    tokens: Vec<StoredToken>,
}

/// The token store: a file, or memory (the conformance client, tests).
pub struct Store(Kind);

enum Kind {
    File(PathBuf),
    Memory(Mutex<Data>),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Kind::File(p) => write!(f, "Store::File({})", p.display()),
            Kind::Memory(_) => f.write_str("Store::Memory"),
        }
    }
}

impl Store {
    /// `DATA_DIR/oauth/tokens.json`, or memory when there is no data dir.
    /// The data dir is the core's (`logging::data_dir`, the same
    /// `ProjectDirs`; a core test holds the two equal): this crate does not
    /// depend on the core.
    pub fn default_location() -> Self {
        let data_dir = directories::ProjectDirs::from("", "", "mcp-harness")
            .map(|d| d.data_dir().to_path_buf());
        match data_dir {
            Some(dir) => Store::file(dir.join("oauth").join("tokens.json")),
            None => Store::memory(),
        }
    }

    pub fn file(path: PathBuf) -> Self {
        Store(Kind::File(path))
    }

    pub fn memory() -> Self {
        Store(Kind::Memory(Mutex::new(Data::default())))
    }

    pub fn path(&self) -> Option<&Path> {
        match &self.0 {
            Kind::File(p) => Some(p),
            Kind::Memory(_) => None,
        }
    }

    /// Tokens whose resource covers `server`, newest first.
    pub fn tokens_for(&self, server: &Url) -> Result<Vec<StoredToken>, OAuthError> {
        let data = self.read()?;
        let mut found: Vec<StoredToken> = data
            .tokens
            .into_iter()
            .filter(|t| Url::parse(&t.resource).is_ok_and(|r| origin::resource_covers(&r, server)))
            .collect();
        found.sort_by_key(|t| std::cmp::Reverse(t.obtained_at));
        Ok(found)
    }

    /// Stores a token, replacing the one for the same issuer and resource.
    pub fn put_token(&self, token: StoredToken) -> Result<(), OAuthError> {
        self.update(|data| {
            data.tokens
                .retain(|t| !(t.issuer == token.issuer && t.resource == token.resource));
            data.tokens.push(token);
        })
    }

    /// Removes the tokens of `issuer` for `resource`; how many there were.
    pub fn remove_token(&self, issuer: &str, resource: &str) -> Result<usize, OAuthError> {
        let mut removed = 0;
        self.update(|data| {
            let before = data.tokens.len();
            data.tokens
                .retain(|t| !(t.issuer == issuer && t.resource == resource));
            removed = before - data.tokens.len();
        })?;
        Ok(removed)
    }

    pub fn client(&self, issuer: &str) -> Result<Option<StoredClient>, OAuthError> {
        Ok(self
            .read()?
            .clients
            .into_iter()
            .find(|c| c.issuer == issuer))
    }

    pub fn put_client(&self, client: StoredClient) -> Result<(), OAuthError> {
        self.update(|data| {
            data.clients.retain(|c| c.issuer != client.issuer);
            data.clients.push(client);
        })
    }

    fn read(&self) -> Result<Data, OAuthError> {
        match &self.0 {
            Kind::Memory(m) => Ok(m.lock().map(|d| d.clone()).unwrap_or_default()),
            Kind::File(path) => {
                let _lock = lock(path)?;
                read_file(path)
            }
        }
    }

    fn update(&self, change: impl FnOnce(&mut Data)) -> Result<(), OAuthError> {
        match &self.0 {
            Kind::Memory(m) => {
                let mut data = m.lock().unwrap_or_else(|e| e.into_inner());
                change(&mut data);
                Ok(())
            }
            Kind::File(path) => {
                let _lock = lock(path)?;
                let mut data = read_file(path)?;
                change(&mut data);
                data.version = 1;
                write_file(path, &data)
            }
        }
    }
}

fn store_error(path: &Path, problem: impl std::fmt::Display) -> OAuthError {
    OAuthError::Store {
        path: path.display().to_string(),
        problem: problem.to_string(),
    }
}

/// The directory (0700) and an exclusive lock on `tokens.json.lock`.
fn lock(path: &Path) -> Result<nix::fcntl::Flock<File>, OAuthError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| store_error(dir, e))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| store_error(dir, e))?;
    }
    let lock_path = path.with_extension("json.lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|e| store_error(&lock_path, e))?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| store_error(&lock_path, e))
}

fn read_file(path: &Path) -> Result<Data, OAuthError> {
    let text = match fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Data::default()),
        Err(e) => return Err(store_error(path, e)),
    };
    // Someone loosened the file's mode: tighten it again before anything else.
    if let Ok(meta) = fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .map_err(|e| store_error(path, e))?;
    }
    serde_json::from_slice(&text).map_err(|_| {
        store_error(
            path,
            "is not a token store written by this harness; move it away to start afresh",
        )
    })
}

fn write_file(path: &Path, data: &Data) -> Result<(), OAuthError> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(data).map_err(|e| store_error(path, e))?;
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| store_error(&tmp, e))?;
    file.write_all(&text)
        .and_then(|_| file.sync_all())
        .map_err(|e| store_error(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| store_error(path, e))
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.expose())
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Secret::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(issuer: &str, resource: &str, at: u64) -> StoredToken {
        StoredToken {
            issuer: issuer.into(),
            resource: resource.into(),
            client_id: "c".into(),
            access_token: Secret::new(format!("tok-{at}")),
            token_type: "Bearer".into(),
            refresh_token: None,
            expires_at: None,
            scopes: vec![],
            obtained_at: at,
            token_endpoint: format!("{issuer}/token"),
            revocation_endpoint: None,
            dpop_key: None,
        }
    }

    #[test]
    fn file_is_owner_only_and_keyed_by_issuer_and_resource() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("oauth").join("tokens.json");
        let store = Store::file(path.clone());
        store
            .put_token(token("https://as1", "https://mcp.example/mcp", 1))
            .unwrap();
        store
            .put_token(token("https://as2", "https://mcp.example/mcp", 2))
            .unwrap();
        store
            .put_token(token("https://as1", "https://mcp.example/mcp", 3))
            .unwrap();
        store
            .put_token(token("https://as1", "https://other.example/mcp", 4))
            .unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        let server = Url::parse("https://mcp.example/mcp").unwrap();
        let found = store.tokens_for(&server).unwrap();
        assert_eq!(
            found.iter().map(|t| t.obtained_at).collect::<Vec<_>>(),
            [3, 2]
        );
        assert_eq!(
            store
                .remove_token("https://as1", "https://mcp.example/mcp")
                .unwrap(),
            1
        );
        assert_eq!(store.tokens_for(&server).unwrap().len(), 1);
        // A loosened mode is tightened on the next read.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        store.tokens_for(&server).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
