//! `kubeconfig`: a kubeconfig file's text for one server and one user, as a
//! user's own would read.

use crate::util::certificate_authority::CertificateAndKey;

/// A kubeconfig with one cluster, user and context, all named `name`, the
/// context's namespace `default`: the server URL, the CA data, and the
/// token and/or client certificate given.
pub(crate) fn kubeconfig(
    name: &str,
    url: &str,
    ca_pem: Option<&str>,
    token: Option<&str>,
    client: Option<&CertificateAndKey>,
) -> String {
    use base64::Engine as _;
    let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let mut cluster = format!("    server: {url}\n");
    if let Some(ca) = ca_pem {
        cluster.push_str(&format!("    certificate-authority-data: {}\n", encode(ca)));
    }
    let mut user = String::new();
    if let Some(token) = token {
        user.push_str(&format!("    token: {token}\n"));
    }
    if let Some(client) = client {
        user.push_str(&format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            encode(&client.certificate_pem),
            encode(&client.key_pem)
        ));
    }
    if user.is_empty() {
        user.push_str("    {}\n");
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n{cluster}\
         contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    \
         user: {name}\n    namespace: default\ncurrent-context: {name}\n\
         users:\n- name: {name}\n  user:\n{user}"
    )
}
