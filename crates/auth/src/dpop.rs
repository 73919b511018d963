//! DPoP (RFC 9449): a key pair per sign-in, a fresh signed proof for each
//! request (token endpoint and MCP server), bound to the access token by `ath`,
//! with the nonces servers hand out remembered per origin.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::json;
use url::Url;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::crypto::{self, Signer, b64url, now_secs, sha256};
use super::error::OAuthError;
use super::origin;
use super::spec::Secret;

pub struct Dpop {
    signer: Signer,
    pkcs8: Vec<u8>,
    jwk: serde_json::Value,
    nonces: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dpop([key redacted])")
    }
}

impl Dpop {
    /// A fresh ES256 key (the algorithm the authorization server must list).
    pub fn generate() -> Result<Self, OAuthError> {
        let (signer, pkcs8) = Signer::generate_es256().map_err(|e| OAuthError::Crypto {
            problem: e.to_string(),
        })?;
        Self::with(signer, pkcs8)
    }

    /// The key kept with a DPoP-bound token (base64url PKCS#8).
    pub fn restore(kept: &Secret) -> Result<Self, OAuthError> {
        let crypto = |problem: String| OAuthError::Crypto { problem };
        let pkcs8 = URL_SAFE_NO_PAD
            .decode(kept.expose())
            .map_err(|_| crypto("a stored DPoP key is damaged".into()))?;
        let signer = Signer::es256_from_pkcs8(&pkcs8).map_err(|e| crypto(e.to_string()))?;
        Self::with(signer, pkcs8)
    }

    /// The key, to be kept with the token it is bound to.
    pub fn export(&self) -> Secret {
        Secret::new(b64url(&self.pkcs8))
    }

    fn with(signer: Signer, pkcs8: Vec<u8>) -> Result<Self, OAuthError> {
        let jwk = signer.public_jwk().ok_or_else(|| OAuthError::Crypto {
            problem: "the DPoP key has no public JWK".into(),
        })?;
        Ok(Self {
            signer,
            pkcs8,
            jwk,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// A proof for `method` on `url`; `access_token` binds it (`ath`).
    pub fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
    ) -> Result<String, OAuthError> {
        let mut htu = url.clone();
        htu.set_query(None);
        htu.set_fragment(None);
        let mut claims = json!({
            "jti": crypto::random_token(16)?,
            "htm": method,
            "htu": htu.to_string(),
            "iat": now_secs(),
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(b64url(sha256(token)));
        }
        if let Some(nonce) = self.nonce_for(url) {
            claims["nonce"] = json!(nonce);
        }
        self.signer
            .sign_jwt(json!({"typ": "dpop+jwt", "jwk": self.jwk}), &claims)
            .map_err(|e| OAuthError::Crypto {
                problem: e.to_string(),
            })
    }

    /// Keeps a `DPoP-Nonce` a server sent, for its origin.
    pub fn remember_nonce(&self, url: &Url, nonce: Option<&str>) {
        let Some(nonce) =
            nonce.filter(|n| n.len() <= 512 && n.bytes().all(|b| b.is_ascii_graphic()))
        else {
            return;
        };
        let key = origin::canonical_resource(&origin::origin_of(url));
        if let Ok(mut nonces) = self.nonces.lock() {
            nonces.insert(key, nonce.to_string());
        }
    }

    fn nonce_for(&self, url: &Url) -> Option<String> {
        let key = origin::canonical_resource(&origin::origin_of(url));
        self.nonces.lock().ok()?.get(&key).cloned()
    }
}
