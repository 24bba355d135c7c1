//! A kubeconfig cluster's `proxy-url`, turned into the URL the HTTP client
//! dials through.
//!
//! client-go accepts `http`, `https` and `socks5` proxies. Go's HTTP client
//! sends a SOCKS5 proxy the host name to connect to and lets the proxy
//! resolve it, which matters when the API server's name only resolves on
//! the far side (an `ssh -D` tunnel into a private network). reqwest calls
//! that scheme `socks5h` and resolves locally for `socks5`, so `socks5` is
//! mapped to `socks5h` here to keep Go's behaviour.

/// The schemes client-go accepts in `proxy-url`, and `socks5h` (already
/// remote resolution, as some tools write it).
const ACCEPTED: &str = "http, https or socks5";

/// Rewrites `url` for reqwest, or says why it cannot be used.
///
/// | scheme            | dialled as                     |
/// |-------------------|--------------------------------|
/// | `http`, `https`   | as written                     |
/// | `socks5`          | `socks5h` (the proxy resolves) |
/// | `socks5h`         | as written                     |
/// | anything else     | refused                        |
pub(crate) fn dial_url(url: &str) -> Result<String, String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!(
            "{url:?} has no scheme; it must be {ACCEPTED}, as in http://proxy:3128"
        ));
    };
    if rest.is_empty() {
        return Err(format!("{url:?} names no proxy host"));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" | "socks5h" => Ok(url.to_string()),
        "socks5" => Ok(format!("socks5h://{rest}")),
        other => Err(format!(
            "scheme {other:?} is not supported; it must be {ACCEPTED}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::dial_url;

    #[test]
    fn scheme_table() {
        let cases: [(&str, Result<&str, &str>); 9] = [
            ("http://proxy:3128", Ok("http://proxy:3128")),
            ("https://proxy:443", Ok("https://proxy:443")),
            ("socks5://127.0.0.1:1080", Ok("socks5h://127.0.0.1:1080")),
            (
                "SOCKS5://user:pw@proxy:1080",
                Ok("socks5h://user:pw@proxy:1080"),
            ),
            ("socks5h://proxy:1080", Ok("socks5h://proxy:1080")),
            (
                "socks4://proxy:1080",
                Err("scheme \"socks4\" is not supported"),
            ),
            ("ftp://proxy", Err("scheme \"ftp\" is not supported")),
            ("proxy:3128", Err("has no scheme")),
            ("http://", Err("names no proxy host")),
        ];
        for (url, expected) in cases {
            match (dial_url(url), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{url}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{url}: {got}"),
                (got, want) => panic!("{url}: got {got:?}, want {want:?}"),
            }
        }
    }
}
