//! The certificates of one control plane: a CA, the API server's serving certificate, an admin client
//! certificate in `system:masters`, and the service-account signing key.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};

use super::Error;

/// PEM files written into a control plane's directory, and the PEM texts a kubeconfig embeds.
#[derive(Debug, Clone)]
pub(crate) struct Certificates {
    /// The CA that signs the serving and client certificates (`--client-ca-file`).
    pub ca_file: PathBuf,
    /// `--tls-cert-file`.
    pub serving_cert_file: PathBuf,
    /// `--tls-private-key-file`.
    pub serving_key_file: PathBuf,
    /// `--service-account-key-file` (the public half).
    pub service_account_public_file: PathBuf,
    /// `--service-account-signing-key-file`.
    pub service_account_key_file: PathBuf,
    /// The CA certificate, for the kubeconfig's `certificate-authority-data`.
    pub ca_pem: String,
    /// The admin client certificate (CN `admin`, O `system:masters`).
    pub admin_cert_pem: String,
    /// The admin client key.
    pub admin_key_pem: String,
}

impl Certificates {
    /// Generates fresh keys and certificates and writes the files the API server reads into `dir`.
    pub(crate) fn generate(dir: &Path) -> Result<Self, Error> {
        let ca = {
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params.distinguished_name = name("operator-envtest-ca", None);
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.key_usages = vec![
                KeyUsagePurpose::KeyCertSign,
                KeyUsagePurpose::CrlSign,
                KeyUsagePurpose::DigitalSignature,
            ];
            CertifiedIssuer::self_signed(params, KeyPair::generate()?)?
        };

        let serving_key = KeyPair::generate()?;
        let serving = {
            let mut params =
                CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])?;
            params.distinguished_name = name("kube-apiserver", None);
            params.key_usages = vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
            ];
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
            params.signed_by(&serving_key, &ca)?
        };

        let admin_key = KeyPair::generate()?;
        let admin = {
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params.distinguished_name = name("admin", Some("system:masters"));
            params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
            params.signed_by(&admin_key, &ca)?
        };

        let service_account = KeyPair::generate()?;

        let certs = Certificates {
            ca_file: dir.join("ca.crt"),
            serving_cert_file: dir.join("apiserver.crt"),
            serving_key_file: dir.join("apiserver.key"),
            service_account_public_file: dir.join("sa.pub"),
            service_account_key_file: dir.join("sa.key"),
            ca_pem: ca.pem(),
            admin_cert_pem: admin.pem(),
            admin_key_pem: admin_key.serialize_pem(),
        };
        write(&certs.ca_file, &certs.ca_pem)?;
        write(&certs.serving_cert_file, &serving.pem())?;
        write(&certs.serving_key_file, &serving_key.serialize_pem())?;
        write(
            &certs.service_account_public_file,
            &service_account.public_key_pem(),
        )?;
        write(
            &certs.service_account_key_file,
            &service_account.serialize_pem(),
        )?;
        Ok(certs)
    }
}

fn name(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    if let Some(org) = organization {
        dn.push(DnType::OrganizationName, org);
    }
    dn
}

fn write(path: &Path, pem: &str) -> Result<(), Error> {
    std::fs::write(path, pem).map_err(|source| Error::Io {
        context: format!("writing {}", path.display()),
        source,
    })
}
