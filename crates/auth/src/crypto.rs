//! The little cryptography OAuth needs, on `ring` (already in the tree for
//! TLS): random values, SHA-256, PKCE, and compact JWS signatures for
//! `private_key_jwt` client assertions (ES256, RS256) and DPoP proofs.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom as _, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject as _;
use serde_json::{Value, json};

use super::error::OAuthError;

pub fn b64url(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn sha256(bytes: impl AsRef<[u8]>) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, bytes.as_ref())
        .as_ref()
        .to_vec()
}

/// `n` random bytes, base64url: state values, PKCE verifiers, JWT ids.
pub fn random_token(n: usize) -> Result<String, OAuthError> {
    let mut bytes = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| OAuthError::Crypto {
            problem: "the system random number generator failed".into(),
        })?;
    Ok(b64url(bytes))
}

/// A PKCE verifier (43 characters) and its S256 challenge (RFC 7636).
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    pub fn new() -> Result<Self, OAuthError> {
        let verifier = random_token(32)?;
        let challenge = b64url(sha256(&verifier));
        Ok(Self {
            verifier,
            challenge,
        })
    }
}

/// JWS algorithms we sign with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwtAlg {
    Es256,
    Rs256,
}

impl JwtAlg {
    pub fn as_str(self) -> &'static str {
        match self {
            JwtAlg::Es256 => "ES256",
            JwtAlg::Rs256 => "RS256",
        }
    }
}

/// Why a signing key could not be loaded, made or used; each says what to do
/// where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("not a PEM private key")]
    NotPem,
    #[error("not a P-256 key usable for ES256 ({0})")]
    NotP256(ring::error::KeyRejected),
    #[error(
        "an \"EC PRIVATE KEY\" (SEC1) file; convert it to PKCS#8 with \
         `openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.p8`"
    )]
    Sec1,
    #[error("not an RSA key usable for RS256 ({0})")]
    NotRsa(ring::error::KeyRejected),
    #[error("a key of another type than {0} needs")]
    OtherType(&'static str),
    /// A stored P-256 key that no longer loads.
    #[error("{0}")]
    Rejected(ring::error::KeyRejected),
    #[error("{0}")]
    Generate(ring::error::Unspecified),
    #[error("{0} signing failed")]
    Signing(&'static str),
}

/// A private key able to sign JWTs. Its bytes never leave this type.
pub enum Signer {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Signer::Es256(_) => "Signer(ES256, [redacted])",
            Signer::Rs256(_) => "Signer(RS256, [redacted])",
        })
    }
}

impl Signer {
    /// From a PEM private key: PKCS#8 for ES256 (P-256), PKCS#8 or PKCS#1 for RS256.
    pub fn from_pem(pem: &[u8], alg: JwtAlg) -> Result<Self, KeyError> {
        let der = PrivateKeyDer::from_pem_slice(pem).map_err(|_| KeyError::NotPem)?;
        let rng = SystemRandom::new();
        match (alg, &der) {
            (JwtAlg::Es256, PrivateKeyDer::Pkcs8(k)) => EcdsaKeyPair::from_pkcs8(
                &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                k.secret_pkcs8_der(),
                &rng,
            )
            .map(Signer::Es256)
            .map_err(KeyError::NotP256),
            (JwtAlg::Es256, PrivateKeyDer::Sec1(_)) => Err(KeyError::Sec1),
            (JwtAlg::Rs256, PrivateKeyDer::Pkcs8(k)) => {
                RsaKeyPair::from_pkcs8(k.secret_pkcs8_der())
                    .map(Signer::Rs256)
                    .map_err(KeyError::NotRsa)
            }
            (JwtAlg::Rs256, PrivateKeyDer::Pkcs1(k)) => RsaKeyPair::from_der(k.secret_pkcs1_der())
                .map(Signer::Rs256)
                .map_err(KeyError::NotRsa),
            (alg, _) => Err(KeyError::OtherType(alg.as_str())),
        }
    }

    /// A fresh P-256 key (DPoP proofs, RFC 9449) and its PKCS#8 form, to be
    /// kept with the token it is bound to.
    pub fn generate_es256() -> Result<(Self, Vec<u8>), KeyError> {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let doc = EcdsaKeyPair::generate_pkcs8(alg, &rng).map_err(KeyError::Generate)?;
        let signer = Self::es256_from_pkcs8(doc.as_ref())?;
        Ok((signer, doc.as_ref().to_vec()))
    }

    /// A P-256 key from its PKCS#8 DER form.
    pub fn es256_from_pkcs8(der: &[u8]) -> Result<Self, KeyError> {
        EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            der,
            &SystemRandom::new(),
        )
        .map(Signer::Es256)
        .map_err(KeyError::Rejected)
    }

    pub fn alg(&self) -> JwtAlg {
        match self {
            Signer::Es256(_) => JwtAlg::Es256,
            Signer::Rs256(_) => JwtAlg::Rs256,
        }
    }

    /// The public key as a JWK (for DPoP headers), EC keys only.
    pub fn public_jwk(&self) -> Option<Value> {
        let Signer::Es256(pair) = self else {
            return None;
        };
        // Uncompressed point: 0x04 || X (32 bytes) || Y (32 bytes).
        let point = pair.public_key().as_ref();
        (point.len() == 65).then(|| {
            json!({"kty": "EC", "crv": "P-256", "x": b64url(&point[1..33]), "y": b64url(&point[33..])})
        })
    }

    /// A compact JWS of `claims` with `header` (to which `alg` is added).
    pub fn sign_jwt(&self, mut header: Value, claims: &Value) -> Result<String, KeyError> {
        header["alg"] = json!(self.alg().as_str());
        let input = format!(
            "{}.{}",
            b64url(header.to_string()),
            b64url(claims.to_string())
        );
        let rng = SystemRandom::new();
        let signature = match self {
            Signer::Es256(pair) => pair
                .sign(&rng, input.as_bytes())
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| KeyError::Signing("ES256"))?,
            Signer::Rs256(pair) => {
                let mut out = vec![0u8; pair.public().modulus_len()];
                pair.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| KeyError::Signing("RS256"))?;
                out
            }
        };
        Ok(format!("{input}.{}", b64url(signature)))
    }
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_is_s256_of_the_verifier() {
        let p = Pkce::new().unwrap();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(p.challenge, b64url(sha256(p.verifier.as_bytes())));
        assert_ne!(Pkce::new().unwrap().verifier, p.verifier);
        // RFC 7636 appendix B.
        assert_eq!(
            b64url(sha256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn es256_signatures_verify() {
        let (signer, _) = Signer::generate_es256().unwrap();
        let jwt = signer
            .sign_jwt(json!({"typ": "JWT"}), &json!({"sub": "x"}))
            .unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let jwk = signer.public_jwk().unwrap();
        let x = URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap();
        let y = URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap();
        let point = [vec![4u8], x, y].concat();
        let key = signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point);
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
    }

    #[test]
    fn keys_of_the_wrong_kind_are_named() {
        assert!(Signer::from_pem(b"nonsense", JwtAlg::Es256).is_err());
    }
}
