//! [`BaseUrl`]: the server's URL, parsed once, and request URLs made under
//! it without parsing its scheme and host again.
//!
//! reqwest parses a request URL given as a string in full, host included
//! (with IDNA processing), which was about 5% of a controller's CPU per
//! reconcile. A request's URL always begins with the client's base URL,
//! so only the rest (path and query) needs parsing; the result is the
//! same URL as parsing the whole string, which a test checks.

use reqwest::Url;

/// The client's base URL, as written (without a trailing slash; it may
/// hold a path prefix) and parsed.
#[derive(Debug, Clone)]
pub(crate) struct BaseUrl {
    text: String,
    parsed: Url,
    /// The parsed URL's path without its trailing slash ("" for none).
    prefix: String,
    /// Whether `text` is already as parsing writes it (a base with dot
    /// segments, an IDNA host or a query is not, and its requests' URLs
    /// are parsed whole).
    canonical: bool,
}

impl BaseUrl {
    /// `text` (a URL without a trailing slash), or why it is not one.
    pub(crate) fn new(text: String) -> Result<Self, url::ParseError> {
        let parsed = Url::parse(&text)?;
        let prefix = parsed.path().trim_end_matches('/').to_string();
        let canonical = parsed.as_str().trim_end_matches('/') == text
            && parsed.query().is_none()
            && parsed.fragment().is_none();
        Ok(BaseUrl {
            text,
            parsed,
            prefix,
            canonical,
        })
    }

    /// The base URL as written.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// `url` parsed, the same URL as `Url::parse(url)` gives. When `url`
    /// begins with the base URL (every request's does) only its path and
    /// query are parsed; anything else (a fragment, another URL) is parsed
    /// whole.
    pub(crate) fn parse(&self, url: &str) -> Result<Url, url::ParseError> {
        let rest = match url.strip_prefix(self.text.as_str()) {
            Some(rest)
                if self.canonical
                    && (rest.is_empty() || rest.starts_with('/') || rest.starts_with('?'))
                    && !rest.contains('#')
                    // Parsing whole trims trailing spaces and drops tabs
                    // and newlines anywhere.
                    && !rest.ends_with(' ')
                    && !rest.contains(|c: char| c.is_ascii_control()) =>
            {
                rest
            }
            _ => return Url::parse(url),
        };
        let (path, query) = match rest.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (rest, None),
        };
        let mut parsed = self.parsed.clone();
        if !path.is_empty() {
            let mut full_path = String::with_capacity(self.prefix.len() + path.len());
            full_path.push_str(&self.prefix);
            full_path.push_str(path);
            parsed.set_path(&full_path);
        }
        parsed.set_query(query);
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn both(base: &str, url: &str) -> (String, String) {
        let base = BaseUrl::new(base.to_string()).unwrap();
        (
            base.parse(url).unwrap().to_string(),
            Url::parse(url).unwrap().to_string(),
        )
    }

    #[test]
    fn request_urls_read_as_parsing_them_whole() {
        for (base, rest) in [
            ("https://10.0.0.1:6443", "/api/v1/namespaces/default/pods"),
            (
                "https://10.0.0.1:6443",
                "/api/v1/pods?labelSelector=app%3Dweb&limit=500",
            ),
            ("https://10.0.0.1:6443", ""),
            ("https://10.0.0.1:6443", "?watch=1"),
            ("http://127.0.0.1:8080/prefix", "/apis/apps/v1/deployments"),
            (
                "http://127.0.0.1:8080/a/b",
                "/api/v1/pods/x/../y?q=%20&r=a+b",
            ),
            ("https://xn--bcher-kva.example", "/api/v1/pods/ünïcode name"),
            ("https://Bücher.example:443", "/api"),
            ("https://example.com", "/api/v1/pods/a%2Fb"),
            ("https://example.com", "/api/v1/pods/a#fragment"),
            ("https://example.com", "/api/v1/pods/./x/%2e%2e/y"),
            ("https://example.com/p", "x/y"),
            ("https://example.com?base=query", "/api"),
        ] {
            let url = format!("{base}{rest}");
            let (fast, whole) = both(base, &url);
            assert_eq!(fast, whole, "{url}");
        }
    }

    #[test]
    fn common_bases_take_the_short_way() {
        for base in [
            "https://10.0.0.1:6443",
            "http://127.0.0.1:8080/prefix",
            "https://example.com",
        ] {
            assert!(BaseUrl::new(base.into()).unwrap().canonical, "{base}");
        }
        for base in [
            "https://Bücher.example",
            "https://example.com/a/.",
            "https://example.com?q",
        ] {
            assert!(!BaseUrl::new(base.into()).unwrap().canonical, "{base}");
        }
    }

    #[test]
    fn another_url_is_parsed_whole() {
        let (fast, whole) = both("https://example.com", "http://other.example/api");
        assert_eq!(fast, whole);
        let base = BaseUrl::new("https://example.com".into()).unwrap();
        assert!(base.parse("not a url").is_err());
    }

    proptest! {
        #[test]
        fn any_path_and_query_read_as_parsing_them_whole(
            prefix in "(/[a-z%.]{0,4}){0,2}",
            path in "(/[ -~ü\t]{0,6}){0,4}",
            query in proptest::option::of("[ -~ü\t\n]{0,12}"),
        ) {
            let base = format!("http://127.0.0.1:6443{prefix}");
            let base = base.trim_end_matches('/').to_string();
            let url = match &query {
                Some(query) => format!("{base}{path}?{query}"),
                None => format!("{base}{path}"),
            };
            if let (Ok(base_url), Ok(whole)) = (BaseUrl::new(base.clone()), Url::parse(&url)) {
                let fast = base_url.parse(&url).unwrap();
                prop_assert_eq!(fast.as_str(), whole.as_str(), "{}", url);
            }
        }
    }
}
