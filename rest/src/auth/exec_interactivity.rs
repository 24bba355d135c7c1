//! [`interactive`]: whether an exec credential plugin runs interactively
//! (client-go's rule, as a decision table).

/// Whether a plugin with `interactiveMode` `mode` runs interactively when
/// standard input is (`true`) or is not a terminal: with the terminal
/// passed through as its standard input, its standard error shown, no
/// timeout, and `spec.interactive` true in `KUBERNETES_EXEC_INFO`.
///
/// | `interactiveMode` | stdin is a terminal | runs |
/// |---|---|---|
/// | `Never` | either | non-interactively |
/// | `IfAvailable`, or unset (v1beta1's default) | yes | interactively |
/// | `IfAvailable`, or unset | no | non-interactively |
/// | `Always` | yes | interactively |
/// | `Always` | no | refused: the plugin needs a terminal there is not |
/// | anything else | either | refused |
pub(crate) fn interactive(mode: Option<&str>, stdin_is_terminal: bool) -> Result<bool, String> {
    match (mode.unwrap_or("IfAvailable"), stdin_is_terminal) {
        ("Never", _) => Ok(false),
        ("IfAvailable", terminal) => Ok(terminal),
        ("Always", true) => Ok(true),
        ("Always", false) => Err(
            "interactiveMode is Always, but standard input is not a terminal to log in on \
             (run the program from a terminal, or log in first with the plugin itself)"
                .to_string(),
        ),
        (other, _) => Err(format!(
            "interactiveMode {other:?} is not one of Never, IfAvailable, Always"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_gos_table() {
        let cases: [(Option<&str>, bool, Result<bool, &str>); 9] = [
            (Some("Never"), true, Ok(false)),
            (Some("Never"), false, Ok(false)),
            (Some("IfAvailable"), true, Ok(true)),
            (Some("IfAvailable"), false, Ok(false)),
            (None, true, Ok(true)),
            (None, false, Ok(false)),
            (Some("Always"), true, Ok(true)),
            (Some("Always"), false, Err("not a terminal")),
            (Some("Sometimes"), true, Err("Sometimes")),
        ];
        for (mode, terminal, expected) in cases {
            let got = interactive(mode, terminal);
            match expected {
                Ok(value) => assert_eq!(got, Ok(value), "{mode:?} {terminal}"),
                Err(needle) => {
                    let error = got.unwrap_err();
                    assert!(error.contains(needle), "{mode:?} {terminal}: {error}");
                }
            }
        }
    }
}
