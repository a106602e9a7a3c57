//! `model.ca_file`: the certificate authorities trusted for an `https` `model.url`, read and
//! proven when the configuration is loaded (and so by `talosd --check-config`). The file must
//! be a regular file of at most [`MAX_CA_BYTES`], opened without blocking (a FIFO or a device
//! such as `/dev/zero` is refused, never waited on or read without end), holding PEM sections
//! that are all certificates, at least one, each of which parses as a trust anchor. A file
//! that fails any of this is an error naming the setting: it never becomes "no CA".
// std::fs here: the CA file is the user's, never in a workspace.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::SectionKind;

/// The largest CA file read: far above a company bundle, far below anything that hurts.
pub const MAX_CA_BYTES: u64 = 1024 * 1024;

/// Why `model.ca_file` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("cannot read it ({0})")]
    Read(#[source] std::io::Error),
    #[error("it is {0}, not a regular file")]
    NotAFile(&'static str),
    #[error("it is larger than {} bytes", MAX_CA_BYTES)]
    TooLarge,
    #[error("it is not PEM ({0})")]
    NotPem(String),
    #[error("it holds a PEM {0} section; it must hold only certificates")]
    NotACertificate(String),
    #[error("it holds no PEM certificate")]
    NoCertificate,
    #[error("its certificate {index} does not parse ({error})")]
    BadCertificate { index: usize, error: String },
}

/// The certificates of `path` (DER), proven as the module describes.
pub fn load(path: &str) -> Result<Vec<CertificateDer<'static>>, CaError> {
    let text = read_bounded(path)?;
    let mut reader = std::io::BufReader::new(text.as_slice());
    let mut certificates = Vec::new();
    loop {
        match rustls_pki_types::pem::from_buf(&mut reader) {
            Ok(Some((SectionKind::Certificate, der))) => {
                certificates.push(CertificateDer::from(der));
            }
            Ok(Some((kind, _))) => return Err(CaError::NotACertificate(format!("{kind:?}"))),
            Ok(None) => break,
            Err(e) => return Err(CaError::NotPem(format!("{e:?}"))),
        }
    }
    if certificates.is_empty() {
        return Err(CaError::NoCertificate);
    }
    for (i, certificate) in certificates.iter().enumerate() {
        webpki::anchor_from_trusted_cert(certificate).map_err(|e| CaError::BadCertificate {
            index: i + 1,
            error: e.to_string(),
        })?;
    }
    Ok(certificates)
}

/// The file's bytes: opened without blocking, checked on the handle, read to at most the cap.
fn read_bounded(path: &str) -> Result<Vec<u8>, CaError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(CaError::Read)?;
    let meta = file.metadata().map_err(CaError::Read)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(CaError::NotAFile(if kind.is_dir() {
            "a directory"
        } else {
            "a FIFO, socket or device"
        }));
    }
    if meta.len() > MAX_CA_BYTES {
        return Err(CaError::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_CA_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(CaError::Read)?;
    if bytes.len() as u64 > MAX_CA_BYTES {
        return Err(CaError::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed CA certificate (P-256, `CN=talos-test-ca`, valid for a century).
    const CERTIFICATE: &str = "-----BEGIN CERTIFICATE-----\nMIIBhzCCAS2gAwIBAgIUZS/7BRzr7NrZLPt/HTk1myYY8JowCgYIKoZIzj0EAwIw\nGDEWMBQGA1UEAwwNdGFsb3MtdGVzdC1jYTAgFw0yNjEyMDQxNTQ4MjZaGA8yMTI2\nMTExMDE1NDgyNlowGDEWMBQGA1UEAwwNdGFsb3MtdGVzdC1jYTBZMBMGByqGSM49\nAgEGCCqGSM49AwEHA0IABLGYiewgzAEFdYCB2odD0m8Tq/d7xAMQX0GiXf655ABJ\nu6+SEEDtqTXtoQXIF1Pv0GXPljSjanPD+OslrkV7CK6jUzBRMB0GA1UdDgQWBBQS\nMQrifeNC7ShO2lSiKEfdVoqFIDAfBgNVHSMEGDAWgBQSMQrifeNC7ShO2lSiKEfd\nVoqFIDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQDUe8gKHSiG\niznsp4ep+4z27L1yPpERr6cmuMDnYqIQUQIgAYno8M4yUkyo0m5Y74ta3b9LC3zR\noGs2DPCyNDt706E=\n-----END CERTIFICATE-----\n";

    /// Proves each kind of unusable CA file is refused, without hanging on a FIFO or reading
    /// `/dev/zero` without end, and a real certificate loads.
    #[test]
    fn ca_files_that_are_not_certificates_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        };
        let good = write("good.pem", CERTIFICATE);
        assert_eq!(load(&good).unwrap().len(), 1);
        let key = write(
            "key.pem",
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n",
        );
        let garbage_cert = write(
            "garbage.pem",
            "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n",
        );
        let text = write("text.pem", "not a certificate at all\n");
        let fifo = dir.path().join("fifo.pem");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            0o600.into(),
            0,
        )
        .unwrap();
        let big = write("big.pem", &"x".repeat(MAX_CA_BYTES as usize + 1));
        let rows = [
            (key, "PEM PrivateKey section"),
            (garbage_cert, "certificate 1 does not parse"),
            (text, "holds no PEM certificate"),
            (fifo.display().to_string(), "a FIFO, socket or device"),
            ("/dev/zero".to_string(), "a FIFO, socket or device"),
            (dir.path().display().to_string(), "a directory"),
            (big, "larger than"),
            (
                dir.path().join("missing.pem").display().to_string(),
                "cannot read it",
            ),
        ];
        for (path, want) in rows {
            let error = load(&path).unwrap_err().to_string();
            assert!(error.contains(want), "{path}: {error}");
        }
    }
}
