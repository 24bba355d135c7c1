//! [`Arguments`]: the command line, taken apart flag by flag (each
//! program asks for the flags it knows, then for anything left over).

use std::collections::VecDeque;
use std::str::FromStr;
use std::time::Duration;

/// The words of a command line not yet claimed by a flag.
#[derive(Debug, Clone)]
pub struct Arguments {
    words: VecDeque<String>,
}

impl Arguments {
    /// The program's arguments (without its name); an argument that is not
    /// UTF-8 is an error.
    pub fn from_env() -> Result<Self, String> {
        let words = std::env::args_os()
            .skip(1)
            .map(|word| {
                word.into_string()
                    .map_err(|raw| format!("argument {raw:?} is not valid UTF-8"))
            })
            .collect::<Result<VecDeque<_>, _>>()?;
        Ok(Arguments { words })
    }

    /// Arguments from a list of words.
    #[cfg(test)]
    fn from_words<I: IntoIterator<Item = S>, S: Into<String>>(words: I) -> Self {
        Arguments {
            words: words.into_iter().map(Into::into).collect(),
        }
    }

    /// Removes `--name` and says whether it was there.
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.words.len();
        self.words.retain(|word| word != name);
        self.words.len() != before
    }

    /// Removes `--name VALUE` or `--name=VALUE` and returns the value (the
    /// last one, if given twice).
    pub fn value(&mut self, name: &str) -> Result<Option<String>, String> {
        let mut found = None;
        let prefix = format!("{name}=");
        let mut index = 0;
        while index < self.words.len() {
            if self.words[index] == name {
                self.words.remove(index);
                let value = self
                    .words
                    .remove(index)
                    .ok_or_else(|| format!("{name} needs a value"))?;
                found = Some(value);
            } else if let Some(value) = self.words[index].strip_prefix(&prefix) {
                found = Some(value.to_string());
                self.words.remove(index);
            } else {
                index += 1;
            }
        }
        Ok(found)
    }

    /// [`value`](Self::value), parsed.
    pub fn parsed<T: FromStr>(&mut self, name: &str) -> Result<Option<T>, String>
    where
        T::Err: std::fmt::Display,
    {
        match self.value(name)? {
            None => Ok(None),
            Some(text) => text
                .parse()
                .map(Some)
                .map_err(|error| format!("{name} {text}: {error}")),
        }
    }

    /// A duration in seconds (`--duration 20` or `--duration 1.5`).
    pub fn seconds(&mut self, name: &str) -> Result<Option<Duration>, String> {
        match self.parsed::<f64>(name)? {
            None => Ok(None),
            Some(seconds) => Duration::try_from_secs_f64(seconds)
                .map(Some)
                .map_err(|_| format!("{name} {seconds}: not a number of seconds")),
        }
    }

    /// Removes and returns the next word that is not a flag.
    pub fn positional(&mut self) -> Option<String> {
        let index = self.words.iter().position(|word| !word.starts_with('-'))?;
        self.words.remove(index)
    }

    /// Fails on any word no flag claimed.
    pub fn finish(self) -> Result<(), String> {
        match self.words.front() {
            None => Ok(()),
            Some(word) => Err(format!("unknown argument {word:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_values_and_leftovers() {
        let mut args =
            Arguments::from_words(["--workers", "3", "--embedded", "--duration=1.5", "v1/pods"]);
        assert_eq!(args.parsed::<usize>("--workers").unwrap(), Some(3));
        assert!(args.flag("--embedded"));
        assert_eq!(
            args.seconds("--duration").unwrap(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(args.positional().as_deref(), Some("v1/pods"));
        assert!(args.finish().is_ok());

        let mut bad = Arguments::from_words(["--workers", "many", "--colour"]);
        assert!(
            bad.parsed::<usize>("--workers")
                .unwrap_err()
                .contains("many")
        );
        assert!(bad.finish().unwrap_err().contains("--colour"));
        let mut missing = Arguments::from_words(["--namespace"]);
        assert!(
            missing
                .value("--namespace")
                .unwrap_err()
                .contains("needs a value")
        );
    }
}
