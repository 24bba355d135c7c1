//! [`LoadingRules`]: which kubeconfig files are read and how they merge,
//! clientcmd's `ClientConfigLoadingRules`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::config::error::ConfigError;
use crate::config::kubeconfig::Kubeconfig;

/// Which kubeconfig files to read:
///
/// 1. an explicit path (`--kubeconfig`), which must exist and is then the
///    only file read;
/// 2. else every file in `$KUBECONFIG` (split on the platform's list
///    separator, `:` on Unix; duplicates and missing files skipped);
/// 3. else `~/.kube/config` (skipped when missing).
///
/// Files are merged in that order: for clusters, users and contexts the
/// first file to define a name wins the whole entry, and `current-context`
/// comes from the first file that sets it.
///
/// The environment is read by [`LoadingRules::from_env`]; tests build the
/// rules field by field instead of changing the process environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadingRules {
    /// An explicit kubeconfig path.
    pub explicit_path: Option<PathBuf>,
    /// The value of `KUBECONFIG`.
    pub kubeconfig_env: Option<OsString>,
    /// The home directory (`~/.kube/config` is under it).
    pub home_dir: Option<PathBuf>,
}

impl LoadingRules {
    /// The rules from the process environment (`KUBECONFIG`, `HOME`, or
    /// `USERPROFILE` on Windows).
    pub fn from_env() -> Self {
        LoadingRules {
            explicit_path: None,
            kubeconfig_env: std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()),
            home_dir: std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        }
    }

    /// Uses exactly this file.
    #[must_use]
    pub fn explicit_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.explicit_path = Some(path.into());
        self
    }

    /// The files to read, in precedence order, before checking which exist.
    pub fn precedence(&self) -> Vec<PathBuf> {
        if let Some(path) = &self.explicit_path {
            return vec![path.clone()];
        }
        if let Some(list) = &self.kubeconfig_env {
            let mut files: Vec<PathBuf> = Vec::new();
            for path in std::env::split_paths(list) {
                if !path.as_os_str().is_empty() && !files.contains(&path) {
                    files.push(path);
                }
            }
            return files;
        }
        match &self.home_dir {
            Some(home) => vec![home.join(".kube").join("config")],
            None => Vec::new(),
        }
    }

    /// Reads and merges the files. Returns `Ok(None)` when no file exists
    /// (nothing configured); an explicit path that does not exist is an
    /// error.
    pub fn load(&self) -> Result<Option<Kubeconfig>, ConfigError> {
        if let Some(path) = &self.explicit_path
            && !path.exists()
        {
            return Err(ConfigError::ExplicitPathMissing { path: path.clone() });
        }
        let files = self.precedence();
        let mut merged: Option<Kubeconfig> = None;
        for path in &files {
            if !path.exists() {
                tracing::debug!(path = %path.display(), "kubeconfig file does not exist; skipped");
                continue;
            }
            let config = Kubeconfig::read(path)?;
            match merged.as_mut() {
                None => merged = Some(config),
                Some(merged) => merged.merge(config),
            }
        }
        if merged.is_none() && self.kubeconfig_env.is_some() && !files.is_empty() {
            tracing::warn!(
                files = ?files,
                "none of the files in KUBECONFIG exists"
            );
        }
        Ok(merged)
    }

    /// What these rules look at, for "tried" messages.
    pub fn describe(&self) -> String {
        if let Some(path) = &self.explicit_path {
            return format!("kubeconfig {}", path.display());
        }
        let files = self.precedence();
        let list = files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        match (&self.kubeconfig_env, files.is_empty()) {
            (_, true) => {
                "kubeconfig: KUBECONFIG is unset and there is no home directory".to_string()
            }
            (Some(_), false) => format!("kubeconfig from KUBECONFIG ({list})"),
            (None, false) => format!("kubeconfig {list}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_follows_clientcmd() {
        let rules = LoadingRules {
            explicit_path: None,
            kubeconfig_env: Some(OsString::from("/a:/b::/a")),
            home_dir: Some(PathBuf::from("/home/me")),
        };
        assert_eq!(
            rules.precedence(),
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
        let rules = LoadingRules {
            kubeconfig_env: None,
            ..rules
        };
        assert_eq!(
            rules.precedence(),
            vec![PathBuf::from("/home/me/.kube/config")]
        );
        let rules = rules.explicit_path("/x");
        assert_eq!(rules.precedence(), vec![PathBuf::from("/x")]);
    }

    #[test]
    fn an_explicit_path_must_exist() {
        let error = LoadingRules::default()
            .explicit_path("/definitely/not/here")
            .load()
            .unwrap_err();
        assert!(
            error.to_string().contains("/definitely/not/here"),
            "{error}"
        );
    }

    #[test]
    fn missing_files_are_nothing_configured() {
        let rules = LoadingRules {
            explicit_path: None,
            kubeconfig_env: Some(OsString::from("/no/such/a:/no/such/b")),
            home_dir: None,
        };
        assert!(rules.load().unwrap().is_none());
    }
}
